/** @module verbs/read — get, batch get, list, edges and entities. */
import { invalid } from '../errors/codes.ts';
import type { Edge } from '../model/edge.ts';
import { parseId } from '../model/ids.ts';
import type { MemoryKind, MemoryView } from '../model/memory.ts';
import { parseFilter } from '../recall/filter.ts';
import { charge, type Ctx } from './context.ts';
import { checkEntity, checkId, LIMITS } from './validate.ts';

export function getMemory(ctx: Ctx, input: { id: string; withEmbedding?: boolean }): Promise<MemoryView> {
  charge(ctx, 'read');
  const id = checkId('memory_id', input.id);
  return ctx.svc.shards.call(ctx.workspace, 'get', { id, withEmbedding: input.withEmbedding ?? false });
}

export function batchGet(ctx: Ctx, input: { memory_ids: string[] }): Promise<MemoryView[]> {
  charge(ctx, 'read');
  if (input.memory_ids.length > LIMITS.batchIds) {
    throw invalid(`memory_ids has ${input.memory_ids.length} ids; the limit is ${LIMITS.batchIds}`);
  }
  const ids = input.memory_ids.map(parseId).filter((id): id is string => id !== null);
  return ctx.svc.shards.call(ctx.workspace, 'batchGet', { ids, withEmbedding: false });
}

export interface ListInput {
  entity_id?: string | undefined;
  kind?: MemoryKind | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
  include_superseded?: boolean | undefined;
  /** Metadata filter (recall/filter.ts), as an object or its JSON text (from a query string). */
  filter?: unknown;
}

export function listMemories(ctx: Ctx, input: ListInput): Promise<{ memories: MemoryView[]; nextCursor: string | null }> {
  charge(ctx, 'read');
  const limit = input.limit ?? LIMITS.listDefault;
  if (!Number.isInteger(limit) || limit < 1) throw invalid(`limit must be a positive integer, got ${limit}`);
  return ctx.svc.shards.call(ctx.workspace, 'list', {
    entityId: input.entity_id === undefined ? null : checkEntity('entity_id', input.entity_id),
    kind: input.kind ?? null,
    cursor: input.cursor === undefined ? null : checkId('cursor', input.cursor),
    limit: Math.min(limit, LIMITS.listLimit),
    includeSuperseded: input.include_superseded ?? false,
    filter: input.filter === undefined || input.filter === null ? null : parseFilter(typeof input.filter === 'string' ? jsonText('filter', input.filter) : input.filter),
  });
}

function jsonText(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(`${field} is not valid JSON: ${(err as Error).message}`);
  }
}

export function memoryEdges(ctx: Ctx, input: { id: string }): Promise<{ outgoing: Edge[]; incoming: Edge[] }> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'edges', { id: checkId('memory_id', input.id) });
}

export function entities(ctx: Ctx): Promise<string[]> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'entities', {});
}
