/**
 * @module cli/remote — the CLI commands that talk to a running server over REST: export (NDJSON
 * to stdout), import (NDJSON from stdin, sent in parts) and backup, each with its summary (JSON
 * with `--json`). Progress goes to stderr, and only when stderr is a terminal.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Config } from '../config/index.ts';
import { shellWord } from './output.ts';

/** Lines and bytes per import request: well under the server's body limit. */
const IMPORT_PART_LINES = 2000;
const IMPORT_PART_BYTES = 8 * 1024 * 1024;

export interface ClientIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
}

interface Target {
  config: Pick<Config, 'serverUrl' | 'apiKey'>;
  workspace: string | undefined;
}

function url(t: Target, path: string): string {
  const prefix = t.workspace === undefined ? '' : `/workspaces/${encodeURIComponent(t.workspace)}`;
  return `${t.config.serverUrl}/v1${prefix}${path}`;
}

function headers(t: Target, extra: Record<string, string> = {}): Record<string, string> {
  return t.config.apiKey === '' ? extra : { authorization: `Bearer ${t.config.apiKey}`, ...extra };
}

/**
 * fetch, with a server that cannot be reached said as such: undici rejects with a bare
 * `TypeError: fetch failed` (the cause in `cause`), which the CLI would print as a bug's stack.
 */
async function request(t: Target, target: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(target, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new Error(
      `cannot reach Flashbulb at ${t.config.serverUrl} (${why}): start it (flashbulb serve), or point --url or FLASHBULB_URL at it`,
    );
  }
}

async function failure(res: Response): Promise<Error> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error_code?: string; message?: string };
    return new Error(`${res.status} ${body.error_code ?? ''}: ${body.message ?? text}`);
  } catch {
    return new Error(`${res.status}: ${text}`);
  }
}

function progress(io: ClientIo, text: string, done = false): void {
  if (io.stderr.isTTY) io.stderr.write(`\r${text}${done ? '\n' : ''}`);
}

/** Streams the workspace's export to stdout; returns the number of lines. */
export async function exportCommand(
  t: Target & { embeddings: boolean },
  io: ClientIo,
): Promise<number> {
  const res = await request(t, url(t, `/export${t.embeddings ? '?embeddings=true' : ''}`), {
    headers: headers(t),
  });
  if (!res.ok || !res.body) throw await failure(res);
  let lines = 0;
  let tail = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const text = Buffer.from(chunk).toString('utf8');
    for (const ch of text) if (ch === '\n') lines += 1;
    tail = (tail + text).slice(-4096);
    if (!io.stdout.write(chunk)) await new Promise((resolve) => io.stdout.once('drain', resolve));
    progress(io, `exported ${lines} memories`);
  }
  progress(io, `exported ${lines} memories`, true);
  const last = tail.trimEnd().split('\n').pop() ?? '';
  if (last.startsWith('{"error_code"')) throw new Error(`the export stopped early: ${last}`);
  return lines;
}

export interface ImportTotals {
  lines: number;
  imported: number;
  skipped: number;
  expired: number;
  error_count: number;
  errors: Array<{ line: number; message: string }>;
}

/** Sends stdin to the server in parts of whole lines, numbering lines across parts. */
export async function importCommand(t: Target, io: ClientIo): Promise<ImportTotals> {
  const totals: ImportTotals = {
    lines: 0,
    imported: 0,
    skipped: 0,
    expired: 0,
    error_count: 0,
    errors: [],
  };
  let part: string[] = [];
  let bytes = 0;
  let firstLine = 1;
  const send = async (): Promise<void> => {
    if (part.length === 0) return;
    const res = await request(t, url(t, `/import?first_line=${firstLine}`), {
      method: 'POST',
      headers: headers(t, { 'content-type': 'application/x-ndjson' }),
      body: part.join('\n'),
    });
    if (!res.ok) throw await failure(res);
    const got = (await res.json()) as ImportTotals;
    totals.lines += got.lines;
    totals.imported += got.imported;
    totals.skipped += got.skipped;
    totals.expired += got.expired;
    totals.error_count += got.error_count;
    totals.errors.push(...got.errors.slice(0, Math.max(0, 1000 - totals.errors.length)));
    firstLine += part.length;
    part = [];
    bytes = 0;
    progress(
      io,
      `imported ${totals.imported}, skipped ${totals.skipped}, errors ${totals.error_count} (line ${firstLine - 1})`,
    );
  };
  for await (const line of createInterface({ input: io.stdin, crlfDelay: Infinity })) {
    part.push(line);
    bytes += Buffer.byteLength(line) + 1;
    if (part.length >= IMPORT_PART_LINES || bytes >= IMPORT_PART_BYTES) await send();
  }
  await send();
  progress(
    io,
    `imported ${totals.imported}, skipped ${totals.skipped}, errors ${totals.error_count}`,
    true,
  );
  return totals;
}

/** What POST /v1/admin/backup answers (api/replies.ts BackupSummary). */
export interface BackupSummary {
  to: string;
  started_at: number;
  finished_at: number;
  shards: Array<{ shard: number; memories: number; bytes: number }>;
}

export async function backupCommand(t: Target & { to: string }): Promise<BackupSummary> {
  const res = await request(t, `${t.config.serverUrl}/v1/admin/backup`, {
    method: 'POST',
    headers: headers(t, { 'content-type': 'application/json' }),
    body: JSON.stringify({ to: t.to }),
  });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as BackupSummary;
}

/** `flashbulb import`: the totals on stdout (JSON with `json`), each failed line on stderr; exit 1 when a line failed. */
export async function importAndReport(
  t: Target & { json: boolean },
  io: ClientIo,
): Promise<number> {
  const totals = await importCommand(t, io);
  if (t.json) io.stdout.write(`${JSON.stringify(totals, null, 2)}\n`);
  else {
    io.stdout.write(
      `imported ${totals.imported} of ${totals.lines} lines (${totals.skipped} already present, ${totals.expired} expired, ${totals.error_count} failed)\n`,
    );
    for (const e of totals.errors) io.stderr.write(`line ${e.line}: ${e.message}\n`);
    if (totals.errors.length < totals.error_count)
      io.stderr.write(
        `(${totals.error_count - totals.errors.length} more failed lines not shown)\n`,
      );
  }
  return totals.error_count === 0 ? 0 : 1;
}

/** `flashbulb backup`: the copy's summary on stdout (JSON with `json`). */
export async function backupAndReport(
  t: Target & { to: string; json: boolean },
  io: ClientIo,
): Promise<number> {
  const summary = await backupCommand(t);
  if (t.json) io.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else {
    const memories = summary.shards.reduce((n, s) => n + s.memories, 0);
    const mb = summary.shards.reduce((n, s) => n + s.bytes, 0) / 2 ** 20;
    io.stdout.write(
      `backed up ${memories} memories from ${summary.shards.length} shards (${mb.toFixed(1)} MB) to ${summary.to}; restore: flashbulb serve --data-dir ${shellWord(summary.to)}\n`,
    );
  }
  return 0;
}
