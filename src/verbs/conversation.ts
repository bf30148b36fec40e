/**
 * @module verbs/conversation — conversation ingest: one call writes a conversation's new messages
 * in order (each a memory with its speaker, event time and the conversation's id, chained
 * `followed_by` to the turn before it). Every message is checked before anything is written; the
 * texts are embedded a slice at a time (the next slice's embedding runs while the shard writes the
 * last), and each slice is one short shard call, so thousands of messages never hold the shard.
 * A message with a `message_id` its conversation already holds is not written again (a retried
 * request): its memory id comes back in its place.
 */
import { invalid } from '../errors/codes.ts';
import type { JsonObject } from '../model/memory.ts';
import { nowUs } from '../model/memory.ts';
import type { TimeInput } from '../model/time.ts';
import type { IngestOutput, RememberItem } from '../protocol/shard.ts';
import { noteActivity } from './activity.ts';
import { charge, type Ctx } from './context.ts';
import { memorySpan } from './memory-span.ts';
import { expiryOf } from './remember.ts';
import {
  checkContent,
  checkContext,
  checkEntity,
  checkName,
  checkOccurredAt,
  checkUnit,
  LIMITS,
  type ExpiryInput,
} from './validate.ts';

/** Most messages one call takes. */
export const MAX_MESSAGES = LIMITS.messagesPerCall;
/** Messages per embedding call and per shard call. */
const SLICE = 256;

export interface MessageInput {
  speaker: string;
  content: string;
  occurred_at?: TimeInput | undefined;
  importance?: number | undefined;
  context?: JsonObject | null | undefined;
  /** The writer's id for the message, unique in its conversation: a retry with it writes nothing twice. */
  message_id?: string | null | undefined;
}

export interface IngestInput extends ExpiryInput {
  conversation_id: string;
  messages: readonly MessageInput[];
  /** Every message's entity (who or what the conversation is about), or none. */
  entity_id?: string | null | undefined;
}

export interface IngestResult {
  conversation_id: string;
  /** One per message, in the order given: the memory written, or the one a retried message already is. */
  memory_ids: string[];
  /** Messages this call wrote. */
  created: number;
  /** Messages whose message_id the conversation already held: not written again. */
  existing: number;
}

export async function ingestConversation(ctx: Ctx, input: IngestInput): Promise<IngestResult> {
  charge(ctx, 'write');
  const items = checkMessages(ctx, input);
  const out: IngestOutput = { ids: [], created: [] };
  let embedding = embedSlice(ctx, items, 0);
  for (let at = 0; at < items.length; at += SLICE) {
    const slice = await embedding;
    // The next slice is embedded while the shard writes this one (its failure is read when it is awaited,
    // or not at all when this slice's write fails first: never an unhandled rejection).
    if (at + SLICE < items.length) {
      embedding = embedSlice(ctx, items, at + SLICE);
      embedding.catch(() => undefined);
    }
    const written: IngestOutput = await ctx.svc.shards.call(
      ctx.workspace,
      'ingest',
      { items: slice },
      slice.map((it) => it.embedding.buffer as ArrayBuffer),
    );
    out.ids.push(...written.ids);
    out.created.push(...written.created);
  }
  const createdIds = out.ids.filter((_, i) => out.created[i]);
  if (createdIds.length > 0) {
    noteActivity(ctx, 'ingest', {
      count: createdIds.length,
      memoryIds: createdIds,
      detail: `conversation ${input.conversation_id}: ${createdIds.length} of ${items.length} messages written`,
    });
    for (let i = 0; i < createdIds.length; i++) ctx.svc.reflection.noteEpisode(ctx.workspace);
  }
  memorySpan(ctx.workspace, 'create_memory', { count: createdIds.length });
  return {
    conversation_id: input.conversation_id,
    memory_ids: out.ids,
    created: createdIds.length,
    existing: out.ids.length - createdIds.length,
  };
}

/** Every message checked (the error names `messages[i].field`) before anything is embedded or written. */
function checkMessages(ctx: Ctx, input: IngestInput): Array<Omit<RememberItem, 'embedding'>> {
  const conversationId = checkName('conversation_id', input.conversation_id);
  if (input.messages.length === 0) throw invalid('messages must hold at least one message');
  if (input.messages.length > MAX_MESSAGES)
    throw invalid(
      `messages has ${input.messages.length} messages; the limit is ${MAX_MESSAGES} a call (send the rest in another call: the conversation continues)`,
    );
  const entityId = input.entity_id == null ? null : checkEntity('entity_id', input.entity_id);
  const expiry = expiryOf(ctx, input);
  const now = nowUs();
  const seen = new Map<string, number>();
  return input.messages.map((m, i) => {
    const at = `messages[${i}]`;
    const messageId = m.message_id == null ? null : checkName(`${at}.message_id`, m.message_id);
    if (messageId !== null) {
      const first = seen.get(messageId);
      if (first !== undefined)
        throw invalid(
          `${at}.message_id '${messageId}' is also messages[${first}]'s: a message id names one message of its conversation`,
        );
      seen.set(messageId, i);
    }
    const item: Omit<RememberItem, 'embedding'> = {
      content: checkContent(`${at}.content`, m.content),
      importance: m.importance === undefined ? 0.5 : checkUnit(`${at}.importance`, m.importance),
      context: m.context == null ? {} : checkContext(`${at}.context`, m.context),
      entityId,
      kind: 'episode',
      edges: [],
      ...expiry,
      speaker: checkName(`${at}.speaker`, m.speaker),
      conversationId,
      messageId,
    };
    if (m.occurred_at !== undefined)
      item.occurredAt = checkOccurredAt(`${at}.occurred_at`, m.occurred_at, now);
    return item;
  });
}

/** The items of one slice with their embeddings (one embedding call for the slice). */
async function embedSlice(
  ctx: Ctx,
  items: ReadonlyArray<Omit<RememberItem, 'embedding'>>,
  at: number,
): Promise<RememberItem[]> {
  const part = items.slice(at, at + SLICE);
  const dim = ctx.svc.embedder.dim;
  const vectors = await ctx.svc.embedder.embed(part.map((it) => it.content));
  return part.map((it, i) => ({ ...it, embedding: vectors.slice(i * dim, (i + 1) * dim) }));
}
