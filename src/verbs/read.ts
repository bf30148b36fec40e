/** @module verbs/read — get, batch get, list, edges and entities. */
import { invalid } from '../errors/codes.ts';
import type { Edge } from '../model/edge.ts';
import { parseId } from '../model/ids.ts';
import type { MemoryKind, MemoryView } from '../model/memory.ts';
import type { TimeInput } from '../model/time.ts';
import type { ListInput as ShardListInput, ListOutput, ListSort } from '../protocol/shard.ts';
import { parseFilter } from '../recall/filter.ts';
import { charge, type Ctx } from './context.ts';
import { memorySpan } from './memory-span.ts';
import { checkEntity, checkId, checkName, checkTime, LIMITS } from './validate.ts';

export async function getMemory(
  ctx: Ctx,
  input: { id: string; withEmbedding?: boolean },
): Promise<MemoryView> {
  charge(ctx, 'read');
  const id = checkId('memory_id', input.id);
  const memory = await ctx.svc.shards.call(ctx.workspace, 'get', {
    id,
    withEmbedding: input.withEmbedding ?? false,
  });
  memorySpan(ctx.workspace, 'search_memory', { count: 1, recordId: id });
  return memory;
}

export async function batchGet(ctx: Ctx, input: { memory_ids: string[] }): Promise<MemoryView[]> {
  charge(ctx, 'read');
  if (input.memory_ids.length > LIMITS.batchIds) {
    throw invalid(`memory_ids has ${input.memory_ids.length} ids; the limit is ${LIMITS.batchIds}`);
  }
  const ids = input.memory_ids.map(parseId).filter((id): id is string => id !== null);
  const memories = await ctx.svc.shards.call(ctx.workspace, 'batchGet', {
    ids,
    withEmbedding: false,
  });
  memorySpan(ctx.workspace, 'search_memory', { count: memories.length });
  return memories;
}

export interface ListInput extends ListCriteria {
  cursor?: string | undefined;
  limit?: number | undefined;
  /** created_at (default), updated_at, importance, access_count or last_accessed_at. */
  sort?: ListSort | undefined;
  order?: 'asc' | 'desc' | undefined;
  with_total?: boolean | undefined;
}

/** What a list, a count or a timeline matches (verbs/browse shares it). */
export interface ListCriteria {
  entity_id?: string | undefined;
  /** Only memories said by this speaker. */
  speaker?: string | undefined;
  /** Only this conversation's turns. */
  conversation_id?: string | undefined;
  kind?: MemoryKind | undefined;
  include_superseded?: boolean | undefined;
  /** Metadata filter (recall/filter.ts), as an object or its JSON text (from a query string). */
  filter?: unknown;
  /** Only memories holding every word of `q` (whole words, as recall's lexical match reads them). */
  q?: string | undefined;
  /** Created at or after (µs or ISO 8601). */
  since_us?: TimeInput | undefined;
  /** Created before (µs or ISO 8601). */
  until_us?: TimeInput | undefined;
}

export function listMemories(ctx: Ctx, input: ListInput): Promise<ListOutput> {
  charge(ctx, 'read');
  const limit = input.limit ?? LIMITS.listDefault;
  if (!Number.isInteger(limit) || limit < 1)
    throw invalid(`limit must be a positive integer, got ${limit}`);
  const sort = input.sort ?? 'created_at';
  return ctx.svc.shards.call(ctx.workspace, 'list', {
    ...listCriteria(input),
    cursor:
      input.cursor === undefined
        ? null
        : sort === 'created_at'
          ? checkId('cursor', input.cursor)
          : checkCursor(input.cursor),
    limit: Math.min(limit, LIMITS.listLimit),
    sort,
    order: input.order ?? 'asc',
    withTotal: input.with_total ?? false,
    // A page of large memories comes back shorter, with its cursor, rather than over the reply budget.
    maxBytes: Math.max(1, ctx.svc.config.maxReplyBytes - LIST_REPLY_MARGIN),
  });
}

/** What a list reply holds beside its memories (cursor, total, the envelope), with room to spare. */
const LIST_REPLY_MARGIN = 64 * 1024;

/** The matching criteria of a list, checked (entity, words, time range, metadata filter). */
export function listCriteria(input: ListCriteria): Omit<ShardListInput, 'cursor' | 'limit'> {
  const q = input.q?.trim() ?? '';
  if (q.length > LIMITS.cueBytes)
    throw invalid(`q is ${q.length} characters; the limit is ${LIMITS.cueBytes}`);
  const since = input.since_us === undefined ? null : checkTime('since_us', input.since_us);
  const until = input.until_us === undefined ? null : checkTime('until_us', input.until_us);
  if (since !== null && until !== null && until <= since)
    throw invalid(`until_us (${until}) must be after since_us (${since})`);
  return {
    entityId: input.entity_id === undefined ? null : checkEntity('entity_id', input.entity_id),
    speaker: input.speaker === undefined ? null : checkName('speaker', input.speaker),
    conversationId:
      input.conversation_id === undefined
        ? null
        : checkName('conversation_id', input.conversation_id),
    kind: input.kind ?? null,
    includeSuperseded: input.include_superseded ?? false,
    filter:
      input.filter === undefined || input.filter === null
        ? null
        : parseFilter(
            typeof input.filter === 'string' ? jsonText('filter', input.filter) : input.filter,
          ),
    text: q === '' ? null : q,
    since,
    until,
  };
}

/** A cursor of a page by value (`sort:order:value:id`); the shard reads it against the query. */
function checkCursor(cursor: string): string {
  if (cursor.length > 200)
    throw invalid(`cursor is ${cursor.length} characters: pass the next_cursor of the same query`);
  return cursor;
}

function jsonText(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(`${field} is not valid JSON: ${(err as Error).message}`);
  }
}

export function memoryEdges(
  ctx: Ctx,
  input: { id: string },
): Promise<{ outgoing: Edge[]; incoming: Edge[] }> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'edges', { id: checkId('memory_id', input.id) });
}

export function entities(ctx: Ctx): Promise<string[]> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'entities', {});
}
