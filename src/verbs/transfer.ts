/**
 * @module verbs/transfer — export a workspace as NDJSON lines, page by page (so memory use does
 * not grow with the workspace), and import such lines: each line validated and applied whole or
 * not at all, idempotent by memory id. The line format is `TransferLine` in api/requests.ts:
 * `{memory, versions, edges}`; embeddings travel as base64 of little-endian float32.
 */
import { invalid } from '../errors/codes.ts';
import { parseEdgeType, type Edge } from '../model/edge.ts';
import { IdGenerator } from '../model/ids.ts';
import {
  memoryToJson,
  nowUs,
  type JsonObject,
  type MemoryKind,
  type MemoryRecord,
  type MemoryView,
} from '../model/memory.ts';
import type { TimeInput } from '../model/time.ts';
import type { ExportLine, ImportItem, ImportOutcome } from '../protocol/shard.ts';
import { noteActivity } from './activity.ts';
import { memorySpan } from './memory-span.ts';
import { charge, type Ctx } from './context.ts';
import {
  checkContent,
  checkContext,
  checkEntity,
  checkId,
  checkName,
  checkOccurredAt,
  checkTime,
  checkUnit,
} from './validate.ts';

/** Live memories per shard call while exporting. */
const EXPORT_PAGE = 256;
/** Lines per shard call while importing, and texts per embedding call. */
const IMPORT_BATCH = 256;
/** Error entries returned in an import summary (the count covers them all). */
const MAX_ERRORS = 1000;

export interface LineMemoryInput {
  memory_id?: string | undefined;
  content: string;
  importance?: number | undefined;
  context?: Record<string, unknown> | null | undefined;
  entity_id?: string | null | undefined;
  kind?: MemoryKind | undefined;
  created_at?: TimeInput | undefined;
  updated_at?: TimeInput | undefined;
  last_accessed_at?: TimeInput | undefined;
  access_count?: number | undefined;
  logical_clock?: number | undefined;
  source_memory_ids?: string[] | undefined;
  superseded_by?: string | undefined;
  expires_at?: TimeInput | null | undefined;
  occurred_at?: TimeInput | undefined;
  speaker?: string | null | undefined;
  conversation_id?: string | null | undefined;
  message_id?: string | null | undefined;
  embedding?: string | undefined;
}

export interface LineInput {
  memory: LineMemoryInput;
  versions?: LineMemoryInput[] | undefined;
  edges?:
    | Array<{
        source_id: string;
        target_id: string;
        edge_type: string;
        confidence?: number | undefined;
        timestamp_us?: TimeInput | undefined;
        reason?: string | undefined;
      }>
    | undefined;
}

/** A line as the transport decoded it: a typed value, or why it could not be decoded. */
export type ParsedLine = { line: number; value: LineInput } | { line: number; error: string };

export interface ImportSummary {
  lines: number;
  imported: number;
  skipped: number;
  expired: number;
  error_count: number;
  errors: Array<{ line: number; message: string }>;
}

/** The workspace as NDJSON text, one page of lines per yielded string (charged at once, read lazily). */
export function exportWorkspace(ctx: Ctx, opts: { embeddings: boolean }): AsyncGenerator<string> {
  charge(ctx, 'read');
  return pages(ctx, opts);
}

async function* pages(ctx: Ctx, opts: { embeddings: boolean }): AsyncGenerator<string> {
  let cursor: string | null = null;
  do {
    const page: { lines: ExportLine[]; nextCursor: string | null } = await ctx.svc.shards.call(
      ctx.workspace,
      'exportPage',
      { cursor, limit: EXPORT_PAGE, withEmbedding: opts.embeddings },
    );
    if (page.lines.length > 0)
      yield page.lines.map((l) => `${JSON.stringify(lineJson(l))}\n`).join('');
    cursor = page.nextCursor;
  } while (cursor !== null);
}

function lineJson(l: ExportLine): unknown {
  return { memory: memoryOut(l.memory), versions: l.versions.map(memoryOut), edges: l.edges };
}

function memoryOut(m: MemoryView): unknown {
  const json = memoryToJson(m, nowUs());
  if (!m.embedding) return json;
  const e = m.embedding;
  return {
    ...json,
    embedding: Buffer.from(e.buffer, e.byteOffset, e.byteLength).toString('base64'),
  };
}

export async function importLines(
  ctx: Ctx,
  input: { lines: readonly ParsedLine[] },
): Promise<ImportSummary> {
  charge(ctx, 'write');
  const summary: ImportSummary = {
    lines: input.lines.length,
    imported: 0,
    skipped: 0,
    expired: 0,
    error_count: 0,
    errors: [],
  };
  const fail = (line: number, message: string): void => {
    summary.error_count += 1;
    if (summary.errors.length < MAX_ERRORS) summary.errors.push({ line, message });
  };
  const newId = idsByTime();
  const imported: string[] = [];
  for (let at = 0; at < input.lines.length; at += IMPORT_BATCH) {
    const batch: Array<{ line: number; item: ImportItem }> = [];
    for (const p of input.lines.slice(at, at + IMPORT_BATCH)) {
      if ('error' in p) {
        fail(p.line, p.error);
        continue;
      }
      try {
        batch.push({ line: p.line, item: toItem(p.value, newId, ctx.svc.embedder.dim) });
      } catch (err) {
        fail(p.line, err instanceof Error ? err.message : String(err));
      }
    }
    if (batch.length === 0) continue;
    await embedMissing(
      ctx,
      batch.map((b) => b.item),
    );
    const outcomes: ImportOutcome[] = await ctx.svc.shards.call(ctx.workspace, 'importItems', {
      items: batch.map((b) => b.item),
    });
    outcomes.forEach((o, i) => {
      if (o.status === 'error') fail(batch[i]?.line ?? 0, o.message);
      else summary[o.status] += 1;
      if (o.status === 'imported' && imported.length < 20)
        imported.push(batch[i]?.item.memory.id ?? '');
    });
  }
  summary.errors.sort((a, b) => a.line - b.line);
  memorySpan(ctx.workspace, 'create_memory', { count: summary.imported });
  if (summary.imported > 0)
    noteActivity(ctx, 'import', {
      count: summary.imported,
      memoryIds: imported,
      detail: `${summary.lines} lines: ${summary.imported} imported, ${summary.skipped} skipped, ${summary.expired} expired, ${summary.error_count} errors`,
    });
  return summary;
}

const NO_VECTOR = new Float32Array(0);

/**
 * Ids for imported memories that come without one, of their `created_at` (now when absent): ids sort
 * by creation time, and creation order is what neighbours, threads and time windows walk. Lines in
 * time order get monotonic ids (in line order within a millisecond); a line older than the one
 * before it gets a fresh random suffix at its own time.
 */
function idsByTime(): (createdAtUs: number | undefined) => string {
  const ids = new IdGenerator();
  let lastMs = Number.NEGATIVE_INFINITY;
  return (createdAtUs) => {
    const ms = createdAtUs === undefined ? Date.now() : Math.floor(createdAtUs / 1000);
    if (ms < lastMs) return new IdGenerator().next(ms);
    lastMs = ms;
    return ids.next(ms);
  };
}

/** Checks a decoded line's values and builds the records (embeddings left empty when absent). */
function toItem(
  line: LineInput,
  newId: (createdAtUs: number | undefined) => string,
  dim: number,
): ImportItem {
  const memory = toRecord('memory', line.memory, dim, (createdAt) => newId(createdAt));
  if (line.memory.superseded_by !== undefined)
    throw invalid(
      'memory.superseded_by: the memory of a line must be live; superseded versions go in versions',
    );
  const versions = (line.versions ?? []).map((v, i) => {
    const version = toRecord(`versions[${i}]`, v, dim, () => {
      throw invalid(`versions[${i}].memory_id is required`);
    });
    if (
      v.superseded_by !== undefined &&
      checkId(`versions[${i}].superseded_by`, v.superseded_by) !== memory.id
    ) {
      throw invalid(`versions[${i}].superseded_by must be the line's memory_id ${memory.id}`);
    }
    return { ...version, supersededBy: memory.id, expiresAt: null };
  });
  const edges = (line.edges ?? []).map((e, i): Edge => {
    const type = parseEdgeType(e.edge_type);
    if (type === null)
      throw invalid(`edges[${i}].edge_type '${e.edge_type}' is not a known edge type`);
    const edge: Edge = {
      source_id: checkId(`edges[${i}].source_id`, e.source_id),
      target_id: checkId(`edges[${i}].target_id`, e.target_id),
      edge_type: type,
      confidence:
        e.confidence === undefined ? 1 : checkUnit(`edges[${i}].confidence`, e.confidence),
      timestamp_us:
        e.timestamp_us === undefined
          ? memory.createdAt
          : checkTime(`edges[${i}].timestamp_us`, e.timestamp_us),
    };
    // The contradiction check's account travels with its edge (export → import keeps it).
    if (e.reason !== undefined) edge.reason = e.reason;
    return edge;
  });
  return { memory, versions, edges };
}

function toRecord(
  field: string,
  m: LineMemoryInput,
  dim: number,
  newId: (createdAtUs: number | undefined) => string,
): MemoryRecord {
  const time = (name: 'created_at' | 'updated_at' | 'last_accessed_at'): number | undefined => {
    const v = m[name];
    return v === undefined ? undefined : checkTime(`${field}.${name}`, v);
  };
  const now = nowUs();
  const written = time('created_at');
  const createdAt = written ?? now;
  const occurredAt =
    m.occurred_at === undefined
      ? createdAt
      : Math.min(checkOccurredAt(`${field}.occurred_at`, m.occurred_at, now), now);
  const name = (key: 'speaker' | 'conversation_id' | 'message_id'): string | null => {
    const v = m[key];
    return v == null ? null : checkName(`${field}.${key}`, v);
  };
  return {
    id: m.memory_id === undefined ? newId(written) : checkId(`${field}.memory_id`, m.memory_id),
    content: checkContent(`${field}.content`, m.content),
    importance: m.importance === undefined ? 0.5 : checkUnit(`${field}.importance`, m.importance),
    context: m.context == null ? {} : checkContext(`${field}.context`, m.context as JsonObject),
    entityId: m.entity_id == null ? null : checkEntity(`${field}.entity_id`, m.entity_id),
    kind: m.kind ?? 'episode',
    createdAt,
    occurredAt,
    updatedAt: time('updated_at') ?? createdAt,
    lastAccessedAt: time('last_accessed_at') ?? createdAt,
    accessCount: m.access_count ?? 0,
    logicalClock: m.logical_clock ?? 0,
    sourceMemoryIds: m.source_memory_ids
      ? m.source_memory_ids.map((s, i) => checkId(`${field}.source_memory_ids[${i}]`, s))
      : null,
    supersededBy: null,
    expiresAt: m.expires_at == null ? null : checkTime(`${field}.expires_at`, m.expires_at),
    speaker: name('speaker'),
    conversationId: name('conversation_id'),
    messageId: name('message_id'),
    embedding:
      m.embedding === undefined ? NO_VECTOR : decodeVector(`${field}.embedding`, m.embedding, dim),
  };
}

function decodeVector(field: string, text: string, dim: number): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.byteLength !== dim * 4)
    throw invalid(
      `${field} has ${bytes.byteLength / 4} dimensions; this server's model has ${dim}`,
    );
  const out = new Float32Array(dim);
  new Uint8Array(out.buffer).set(bytes);
  if (!out.every(Number.isFinite))
    throw invalid(`${field} holds a value that is not a finite number`);
  return out;
}

/** Embeds the content of every record that came without an embedding, in batches. */
async function embedMissing(ctx: Ctx, items: readonly ImportItem[]): Promise<void> {
  const missing = items
    .flatMap((it) => [it.memory, ...it.versions])
    .filter((m) => m.embedding.length === 0);
  const dim = ctx.svc.embedder.dim;
  for (let at = 0; at < missing.length; at += IMPORT_BATCH) {
    const part = missing.slice(at, at + IMPORT_BATCH);
    const vectors = await ctx.svc.embedder.embed(part.map((m) => m.content));
    part.forEach((m, i) => {
      m.embedding = vectors.slice(i * dim, (i + 1) * dim);
    });
  }
}
