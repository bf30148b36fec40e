/**
 * @module verbs/upload — documents and propositions from uploaded .md / .txt files. Every file is
 * checked before anything is stored: one bad file (unsupported type, binary, too large, bad path)
 * rejects the whole request with a 400 naming it, so an upload is all or nothing.
 */
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { invalid } from '../errors/codes.ts';
import { parseDocument } from '../ingest/document.ts';
import type { UploadFile, UploadFileResult } from '../protocol/shard.ts';
import { noteActivity } from './activity.ts';
import { charge, type Ctx } from './context.ts';
import { checkEntity, LIMITS } from './validate.ts';

const EXTENSIONS = new Set(['.md', '.markdown', '.txt']);
const MAX_FILES = 100;

export interface UploadInput {
  files: Array<{ filePath: string; data: Buffer }>;
}

export async function upload(
  ctx: Ctx,
  input: UploadInput,
): Promise<{ uploaded: number; files: UploadFileResult[] }> {
  charge(ctx, 'write');
  if (input.files.length === 0)
    throw invalid('no files: send one or more multipart parts named "files" with a filename');
  if (input.files.length > MAX_FILES)
    throw invalid(`${input.files.length} files; the limit is ${MAX_FILES} per request`);
  // Parsing a 64 KiB document takes about 2 ms; yielding between files keeps one upload of 100
  // files from holding the router thread for 200 ms.
  const parsed: ReturnType<typeof checkFile>[] = [];
  for (const f of input.files) {
    parsed.push(checkFile(f.filePath, f.data));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const texts = parsed.flatMap((p) => [p.content, ...p.propositions]);
  const vectors = await ctx.svc.embedder.embed(texts);
  const dim = ctx.svc.embedder.dim;
  let at = 0;
  const next = (): Float32Array => vectors.slice(at * dim, ++at * dim);
  const files: UploadFile[] = parsed.map((p) => ({
    filePath: p.filePath,
    content: p.content,
    contentHash: p.contentHash,
    entityId: p.entityId,
    embedding: next(),
    propositions: p.propositions.map((text) => ({ text, embedding: next() })),
  }));
  const ttl = ctx.svc.auth.workspace(ctx.workspace)?.default_ttl_s;
  const results = await ctx.svc.shards.call(
    ctx.workspace,
    'upload',
    ttl ? { files, ttlUs: Math.round(ttl * 1e6) } : { files },
  );
  const changed = results.filter((r) => r.status !== 'unchanged');
  noteActivity(ctx, 'upload', {
    count: changed.length,
    memoryIds: changed.map((r) => r.document_id),
    detail:
      `${results.length} files: ${results.map((r) => `${r.file_path} (${r.status})`).join(', ')}`.slice(
        0,
        500,
      ),
  });
  return { uploaded: results.length, files: results };
}

function checkFile(
  rawPath: string,
  data: Buffer,
): {
  filePath: string;
  content: string;
  contentHash: string;
  entityId: string | null;
  propositions: string[];
} {
  const filePath = rawPath.replace(/\\/g, '/').replace(/^\.?\/+/, '');
  if (filePath === '' || filePath.split('/').includes('..') || filePath.length > 1024)
    throw invalid(`file '${rawPath}': not a valid relative path`);
  if (!EXTENSIONS.has(extname(filePath).toLowerCase()))
    throw invalid(`file '${filePath}': only .md and .txt files are accepted`);
  if (data.length > LIMITS.contentBytes)
    throw invalid(
      `file '${filePath}' is ${data.length} bytes; the limit per file is ${LIMITS.contentBytes}`,
    );
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw invalid(`file '${filePath}' is not UTF-8 text`);
  }
  if (text.includes('\u0000'))
    throw invalid(`file '${filePath}' looks binary (contains NUL bytes)`);
  const doc = parseDocument(filePath, text);
  if (doc.body === '') throw invalid(`file '${filePath}' is empty`);
  const entityId =
    doc.entityId === null ? null : checkEntity(`file '${filePath}' entity_id`, doc.entityId);
  return {
    filePath,
    content: doc.body,
    contentHash: createHash('sha256').update(text).digest('hex'),
    entityId,
    propositions: doc.propositions,
  };
}
