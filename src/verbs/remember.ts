/** @module verbs/remember — embed, then store in the workspace's shard. */
import { row } from '../embedding/embedder.ts';
import type { JsonObject, MemoryKind, MemoryView } from '../model/memory.ts';
import { charge, type Ctx } from './context.ts';
import { nowUs } from '../model/memory.ts';
import { checkContent, checkContext, checkEdges, checkEntity, checkExpiry, checkUnit, type EdgeSpec, type ExpiryInput } from './validate.ts';

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
    expiresAt: expiryOf(ctx, input),
  };
  const vectors = await ctx.svc.embedder.embed([content]);
  const embedding = row(vectors, 0, ctx.svc.embedder.dim);
  const [memory] = await ctx.svc.shards.call(ctx.workspace, 'remember', { items: [{ ...item, embedding }], withEmbedding: input.withEmbedding ?? false }, [embedding.buffer as ArrayBuffer]);
  if (!memory) throw new Error('shard returned no memory');
  if (memory.kind === 'episode') ctx.svc.reflection.noteEpisode(ctx.workspace);
  return memory;
}

/** Expiry from ttl_s or expires_at_us, else from the workspace's default TTL, else none. */
export function expiryOf(ctx: Ctx, input: ExpiryInput): number | null {
  const now = nowUs();
  const asked = checkExpiry(input, now);
  if (asked !== undefined) return asked;
  const ttl = ctx.svc.auth.workspace(ctx.workspace)?.default_ttl_s;
  return ttl ? now + Math.round(ttl * 1e6) : null;
}
