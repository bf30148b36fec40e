/**
 * The real server as a child process (`node dist/cli.js serve`), for tests that need what only a
 * process boundary gives: SIGTERM, `kill -9`, exit codes and start-up failures.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from './wait.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli.js');

/** Builds dist/ when it is missing (`npm test` builds it before vitest runs). */
export function ensureBuilt(): void {
  if (existsSync(CLI)) return;
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}

/** A port that was free a moment ago: bind port 0, read it, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildServer {
  proc: ChildProcess;
  port: number;
  base: string;
  /** Everything the child wrote to stderr so far (the server logs there). */
  stderr(): string;
  stdout(): string;
  exited: Promise<Exit>;
}

export interface SpawnOptions {
  dataDir: string;
  env?: Record<string, string>;
}

/** Starts `node dist/cli.js serve` with the hash embedder, auth off and a fresh port. */
export async function spawnServer(opts: SpawnOptions): Promise<ChildServer> {
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('FLASHBULB_') && v !== undefined) env[k] = v;
  Object.assign(env, {
    FLASHBULB_EMBEDDER: 'hash',
    FLASHBULB_AUTH_ENABLED: 'false',
    FLASHBULB_BIND: '127.0.0.1',
    FLASHBULB_HTTP_PORT: String(port),
    FLASHBULB_GRPC_PORT: '0',
    FLASHBULB_DATA_DIR: opts.dataDir,
    FLASHBULB_SHARDS: '2',
    ...opts.env,
  });
  const proc = spawn(process.execPath, [CLI, 'serve'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<Exit>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    port,
    base: `http://127.0.0.1:${port}`,
    stderr: () => err,
    stdout: () => out,
    exited,
  };
}

/** Resolves once the server answers ready; rejects (with its stderr) if it exits first or takes too long. */
export async function waitReady(child: ChildServer, timeoutMs = 20_000): Promise<void> {
  let exit: Exit | null = null;
  void child.exited.then((e) => (exit = e));
  const ready = async (): Promise<boolean> => {
    if (exit)
      throw new Error(
        `server exited (${JSON.stringify(exit)}) before it was ready:\n${child.stderr()}`,
      );
    const res = await fetch(`${child.base}/v1/health/ready`).catch(() => null); // null: not listening yet
    return res?.status === 200;
  };
  try {
    await until(ready, { what: 'the server to be ready', deadlineMs: timeoutMs, everyMs: 50 });
  } catch (err) {
    if (exit) throw err;
    child.proc.kill('SIGKILL');
    throw new Error(`server not ready after ${timeoutMs} ms:\n${child.stderr()}`);
  }
}

export async function startServer(opts: SpawnOptions): Promise<ChildServer> {
  const child = await spawnServer(opts);
  await waitReady(child);
  return child;
}

/** Waits for the child to exit; kills it and fails if it takes longer than `timeoutMs`. */
export async function waitExit(child: ChildServer, timeoutMs = 20_000): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.proc.kill('SIGKILL');
      reject(new Error(`server did not exit within ${timeoutMs} ms:\n${child.stderr()}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Kills a child that may still be running (for afterEach/afterAll). */
export async function killQuietly(child: ChildServer | undefined): Promise<void> {
  if (!child || child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGKILL');
  await child.exited;
}

const HTTP_TIMEOUT_MS = 45_000;

export async function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  // A request the server never answers fails here, naming itself, instead of as a test timeout.
  const signal = AbortSignal.timeout(HTTP_TIMEOUT_MS);
  const fail = (err: unknown): never => {
    if (signal.aborted)
      throw new Error(`${method} ${base}${path}: no answer within ${HTTP_TIMEOUT_MS} ms`);
    throw err;
  };
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
    signal,
  }).catch(fail);
  const text = await res.text().catch(fail);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as any };
}

/** Every regular file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false }); // a file may go while we look
    if (st?.isDirectory()) out.push(...filesUnder(p));
    else if (st?.isFile()) out.push(p);
  }
  return out;
}

/** Files under `dir` whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  return filesUnder(dir).filter((f) => {
    try {
      return readFileSync(f).includes(bytes);
    } catch {
      return false; // deleted while we looked
    }
  });
}
