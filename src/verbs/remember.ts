/** @module verbs/remember — embed, then store in the workspace's shard. */
import { row } from '../embedding/embedder.ts';
import type { JsonObject, MemoryKind, MemoryView } from '../model/memory.ts';
import { noteActivity } from './activity.ts';
import { charge, type Ctx } from './context.ts';
import { memorySpan } from './memory-span.ts';
import { nowUs } from '../model/memory.ts';
import { checkContent, checkContext, checkEdges, checkEntity, checkExpiry, checkUnit, type EdgeSpec, type ExpiryChoice, type ExpiryInput } from './validate.ts';

export interface RememberInput extends ExpiryInput {
  content: string;
  importance?: number | undefined;
  context?: JsonObject | undefined;
  entity_id?: string | null | undefined;
  edges?: EdgeSpec[] | undefined;
  kind?: MemoryKind | undefined;
  withEmbedding?: boolean;
}

export async function remember(ctx: Ctx, input: RememberInput): Promise<MemoryView> {
  charge(ctx, 'write');
  const content = checkContent('content', input.content);
  const item = {
    content,
    importance: input.importance === undefined ? 0.5 : checkUnit('importance', input.importance),
    context: input.context === undefined ? {} : checkContext('context', input.context),
    entityId: input.entity_id == null ? null : checkEntity('entity_id', input.entity_id),
    kind: input.kind ?? 'episode',
    edges: checkEdges('edges', input.edges ?? []),
    ...expiryOf(ctx, input),
  };
  const vectors = await ctx.svc.embedder.embed([content]);
  const embedding = row(vectors, 0, ctx.svc.embedder.dim);
  const [memory] = await ctx.svc.shards.call(ctx.workspace, 'remember', { items: [{ ...item, embedding }], withEmbedding: input.withEmbedding ?? false }, [embedding.buffer as ArrayBuffer]);
  if (!memory) throw new Error('shard returned no memory');
  noteActivity(ctx, 'remember', { count: 1, memoryIds: [memory.id], detail: item.entityId === null ? null : `entity ${item.entityId}` });
  if (memory.kind === 'episode') ctx.svc.reflection.noteEpisode(ctx.workspace);
  memorySpan(ctx.workspace, 'create_memory', { count: 1, recordId: memory.id });
  return memory;
}

/** Expiry from ttl_s or expires_at_us, else from the workspace's default TTL, else none. */
function expiryOf(ctx: Ctx, input: ExpiryInput): { expiresAt?: number | null; ttlUs?: number } {
  const asked = checkExpiry(input, nowUs());
  const ttl = ctx.svc.auth.workspace(ctx.workspace)?.default_ttl_s;
  const choice = asked === undefined ? (ttl ? { ttlUs: Math.round(ttl * 1e6) } : null) : asked;
  return toShardExpiry(choice);
}

/** The shard's fields for an expiry choice (null: no expiry). */
export function toShardExpiry(choice: ExpiryChoice | null): { expiresAt?: number | null; ttlUs?: number } {
  if (choice === null) return { expiresAt: null };
  return 'ttlUs' in choice ? { ttlUs: choice.ttlUs } : { expiresAt: choice.atUs };
}
