/** @module verbs/revise — revise a memory in place (re-embedding when its content changes). */
import { invalid } from '../errors/codes.ts';
import { row } from '../embedding/embedder.ts';
import type { JsonObject, MemoryView } from '../model/memory.ts';
import type { ReviseInput as ShardReviseInput } from '../protocol/shard.ts';
import { noteActivity } from './activity.ts';
import { charge, type Ctx } from './context.ts';
import { memorySpan } from './memory-span.ts';
import { nowUs } from '../model/memory.ts';
import { toShardExpiry } from './remember.ts';
import {
  checkContent,
  checkContext,
  checkEdges,
  checkEntity,
  checkExpiry,
  checkId,
  checkUnit,
  type EdgeSpec,
  type ExpiryInput,
} from './validate.ts';

export interface ReviseInput extends ExpiryInput {
  id: string;
  content?: string | undefined;
  importance?: number | undefined;
  context?: JsonObject | undefined;
  context_mode?: 'merge' | 'replace' | undefined;
  /** undefined keeps the entity; null clears it. */
  entity_id?: string | null | undefined;
  edges?: EdgeSpec[] | undefined;
  withEmbedding?: boolean;
}

export async function revise(ctx: Ctx, input: ReviseInput): Promise<MemoryView> {
  charge(ctx, 'write');
  const cmd: ShardReviseInput = {
    id: checkId('memory_id', input.id),
    contextMode: input.context_mode ?? 'merge',
    edges: checkEdges('edges', input.edges ?? []),
    withEmbedding: input.withEmbedding ?? false,
  };
  if (input.content !== undefined) cmd.content = checkContent('content', input.content);
  if (input.importance !== undefined) cmd.importance = checkUnit('importance', input.importance);
  if (input.context !== undefined) cmd.context = checkContext('context', input.context);
  if (input.entity_id !== undefined)
    cmd.entityId = input.entity_id === null ? null : checkEntity('entity_id', input.entity_id);
  const expiry = checkExpiry(input, nowUs());
  if (expiry !== undefined) Object.assign(cmd, toShardExpiry(expiry));
  const revisable = ['content', 'importance', 'context', 'entityId', 'expiresAt', 'ttlUs'] as const;
  if (!revisable.some((k) => cmd[k] !== undefined) && cmd.edges.length === 0) {
    throw invalid(
      'nothing to revise: give at least one of content, importance, context, entity_id, edges, ttl_s, expires_at_us (or expires_at)',
    );
  }
  const transfer: ArrayBuffer[] = [];
  if (cmd.content !== undefined) {
    cmd.embedding = row(await ctx.svc.embedder.embed([cmd.content]), 0, ctx.svc.embedder.dim);
    transfer.push(cmd.embedding.buffer as ArrayBuffer);
  }
  const revised = await ctx.svc.shards.call(ctx.workspace, 'revise', cmd, transfer);
  const changed = revisable
    .filter((k) => cmd[k] !== undefined)
    .map((k) =>
      k === 'entityId' ? 'entity_id' : k === 'expiresAt' || k === 'ttlUs' ? 'expiry' : k,
    );
  noteActivity(ctx, 'revise', {
    count: 1,
    memoryIds: [revised.id],
    detail: [
      ...new Set(changed),
      ...(cmd.edges.length > 0 ? [`${cmd.edges.length} edges`] : []),
    ].join(', '),
  });
  memorySpan(ctx.workspace, 'update_memory', { count: 1, recordId: revised.id });
  return revised;
}
