/** @module model/memory — the memory record, kinds and the JSON view returned to clients. */

export const MEMORY_KINDS = ['episode', 'insight', 'revision', 'document', 'proposition'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

export function isMemoryKind(value: unknown): value is MemoryKind {
  return typeof value === 'string' && (MEMORY_KINDS as readonly string[]).includes(value);
}

export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A memory as a shard stores it. Timestamps are microseconds since the epoch. */
export interface MemoryRecord {
  id: string;
  content: string;
  importance: number;
  context: JsonObject;
  entityId: string | null;
  kind: MemoryKind;
  /** When it was written: the write time, which its id also carries (list order and cursors). */
  createdAt: number;
  /**
   * When the remembered thing happened (event time): given by the writer, or `createdAt`. Time
   * windows, recency, temporal recall and the ranker's conversation order read it.
   */
  occurredAt: number;
  updatedAt: number;
  lastAccessedAt: number;
  accessCount: number;
  logicalClock: number;
  sourceMemoryIds: string[] | null;
  supersededBy: string | null;
  /** When the memory expires (µs since the epoch), or null when it never does. */
  expiresAt: number | null;
  /** Who said it (a turn of a conversation), or null. */
  speaker: string | null;
  /** The conversation it is a turn of, or null. */
  conversationId: string | null;
  /** The writer's id for the message within its conversation (ingest is idempotent by it), or null. */
  messageId: string | null;
  embedding: Float32Array;
}

/** Memory as REST returns it (section 3.3 of the design). */
export interface MemoryJson {
  memory_id: string;
  content: string;
  importance: number;
  context: JsonObject;
  entity_id: string | null;
  kind: MemoryKind;
  created_at: number;
  occurred_at: number;
  updated_at: number;
  last_accessed_at: number;
  access_count: number;
  decay_score: number;
  logical_clock: number;
  /** µs since the epoch; null when the memory never expires. */
  expires_at: number | null;
  speaker: string | null;
  conversation_id: string | null;
  message_id: string | null;
  source_memory_ids?: string[];
  superseded_by?: string;
}

const DAY_US = 86_400_000_000;
/** Half-life of the decay score, in days, since the last access. */
export const DECAY_HALF_LIFE_DAYS = 30;

/**
 * decay_score = importance · 0.5^(days since last access / half-life) — computed on read, so it
 * is always current and needs no background sweep. Forget's `decay_score_floor` uses the same value.
 */
export function decayScore(
  m: Pick<MemoryRecord, 'importance' | 'lastAccessedAt'>,
  nowUs: number,
): number {
  const days = Math.max(0, nowUs - m.lastAccessedAt) / DAY_US;
  return m.importance * 0.5 ** (days / DECAY_HALF_LIFE_DAYS);
}

/** A memory as a shard hands it out: the embedding only when asked for. */
export type MemoryView = Omit<MemoryRecord, 'embedding'> & { embedding?: Float32Array };

/**
 * Every field of the memory but its embedding, as a new object. The fields are named one by one:
 * V8 builds `const { embedding, ...rest } = m` (and `{ ...m, embedding }`) through a slow generic
 * path, microseconds a memory against a fraction of one (native-bench/HISTORY.md, Performance: "Objects built field
 * by field"), and every reply and every stored memory starts here.
 */
export function withoutEmbedding(m: MemoryRecord): Omit<MemoryRecord, 'embedding'> {
  return {
    id: m.id,
    content: m.content,
    importance: m.importance,
    context: m.context,
    entityId: m.entityId,
    kind: m.kind,
    createdAt: m.createdAt,
    occurredAt: m.occurredAt,
    updatedAt: m.updatedAt,
    lastAccessedAt: m.lastAccessedAt,
    accessCount: m.accessCount,
    logicalClock: m.logicalClock,
    sourceMemoryIds: m.sourceMemoryIds,
    supersededBy: m.supersededBy,
    expiresAt: m.expiresAt,
    speaker: m.speaker,
    conversationId: m.conversationId,
    messageId: m.messageId,
  };
}

export function memoryToJson(m: MemoryView, nowUs: number): MemoryJson {
  const out: MemoryJson = {
    memory_id: m.id,
    content: m.content,
    importance: m.importance,
    context: m.context,
    entity_id: m.entityId,
    kind: m.kind,
    created_at: m.createdAt,
    occurred_at: m.occurredAt,
    updated_at: m.updatedAt,
    last_accessed_at: m.lastAccessedAt,
    access_count: m.accessCount,
    decay_score: Math.round(decayScore(m, nowUs) * 1e6) / 1e6,
    logical_clock: m.logicalClock,
    expires_at: m.expiresAt,
    speaker: m.speaker,
    conversation_id: m.conversationId,
    message_id: m.messageId,
  };
  if (m.sourceMemoryIds) out.source_memory_ids = m.sourceMemoryIds;
  if (m.supersededBy) out.superseded_by = m.supersededBy;
  return out;
}

/**
 * Event order: earlier event time first, then creation order (the id) for memories of the same
 * time (turns written in one call, memories written without an event time in one microsecond).
 */
export function eventOrder(
  a: Pick<MemoryRecord, 'occurredAt' | 'id'>,
  b: Pick<MemoryRecord, 'occurredAt' | 'id'>,
): number {
  return a.occurredAt - b.occurredAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** True once `nowUs` has reached the memory's expiry. */
export function isExpired(m: Pick<MemoryRecord, 'expiresAt'>, nowUs: number): boolean {
  return m.expiresAt !== null && m.expiresAt <= nowUs;
}

export function nowUs(): number {
  return Date.now() * 1000;
}
