/** @module verbs/remember — embed, then store in the workspace's shard. */
import { row } from '../embedding/embedder.ts';
import type { JsonObject, MemoryKind, MemoryView } from '../model/memory.ts';
import type { TimeInput } from '../model/time.ts';
import { noteActivity } from './activity.ts';
import { charge, type Ctx } from './context.ts';
import { memorySpan } from './memory-span.ts';
import { nowUs } from '../model/memory.ts';
import {
  checkContent,
  checkContext,
  checkEdges,
  checkEntity,
  checkExpiry,
  checkName,
  checkOccurredAt,
  checkUnit,
  type EdgeSpec,
  type ExpiryChoice,
  type ExpiryInput,
} from './validate.ts';

export interface RememberInput extends ExpiryInput {
  content: string;
  importance?: number | undefined;
  context?: JsonObject | undefined;
  entity_id?: string | null | undefined;
  edges?: EdgeSpec[] | undefined;
  kind?: MemoryKind | undefined;
  occurred_at?: TimeInput | undefined;
  speaker?: string | null | undefined;
  conversation_id?: string | null | undefined;
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
    ...turnOf(input),
  };
  const vectors = await ctx.svc.embedder.embed([content]);
  const embedding = row(vectors, 0, ctx.svc.embedder.dim);
  const [memory] = await ctx.svc.shards.call(
    ctx.workspace,
    'remember',
    { items: [{ ...item, embedding }], withEmbedding: input.withEmbedding ?? false },
    [embedding.buffer as ArrayBuffer],
  );
  if (!memory) throw new Error('shard returned no memory');
  noteActivity(ctx, 'remember', {
    count: 1,
    memoryIds: [memory.id],
    detail: item.entityId === null ? null : `entity ${item.entityId}`,
  });
  if (memory.kind === 'episode') ctx.svc.reflection.noteEpisode(ctx.workspace);
  memorySpan(ctx.workspace, 'create_memory', { count: 1, recordId: memory.id });
  return memory;
}

/** The event time, speaker and conversation a write names (the shard's fields; absent when not given). */
export function turnOf(input: {
  occurred_at?: TimeInput | undefined;
  speaker?: string | null | undefined;
  conversation_id?: string | null | undefined;
}): {
  occurredAt?: number;
  speaker: string | null;
  conversationId: string | null;
} {
  const out: { occurredAt?: number; speaker: string | null; conversationId: string | null } = {
    speaker: input.speaker == null ? null : checkName('speaker', input.speaker),
    conversationId:
      input.conversation_id == null ? null : checkName('conversation_id', input.conversation_id),
  };
  if (input.occurred_at !== undefined)
    out.occurredAt = checkOccurredAt('occurred_at', input.occurred_at, nowUs());
  return out;
}

/** Expiry from ttl_s or expires_at_us, else from the workspace's default TTL, else none. */
export function expiryOf(
  ctx: Ctx,
  input: ExpiryInput,
): { expiresAt?: number | null; ttlUs?: number } {
  const asked = checkExpiry(input, nowUs());
  const ttl = ctx.svc.auth.workspace(ctx.workspace)?.default_ttl_s;
  const choice = asked === undefined ? (ttl ? { ttlUs: Math.round(ttl * 1e6) } : null) : asked;
  return toShardExpiry(choice);
}

/** The shard's fields for an expiry choice (null: no expiry). */
export function toShardExpiry(choice: ExpiryChoice | null): {
  expiresAt?: number | null;
  ttlUs?: number;
} {
  if (choice === null) return { expiresAt: null };
  return 'ttlUs' in choice ? { ttlUs: choice.ttlUs } : { expiresAt: choice.atUs };
}
