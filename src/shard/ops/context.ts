/** @module shard/ops/context — what every in-shard operation gets: state, ids, clock and commit. */
import type { IdGenerator } from '../../model/ids.ts';
import { withoutEmbedding, type MemoryRecord, type MemoryView } from '../../model/memory.ts';
import type { LiveRecord } from '../store/records.ts';
import type { ShardState } from '../store/apply.ts';
import type { Workspace } from '../store/workspace.ts';
import { notFound } from '../../errors/codes.ts';

export interface OpContext {
  readonly state: ShardState;
  readonly ids: IdGenerator;
  nowUs(): number;
  /**
   * Applies records to state and resolves when they are durable in the log. `quiet`: no
   * after-write work (contradiction checks, subscription pushes), as for imported memories.
   */
  commit(records: LiveRecord[], opts?: { quiet?: boolean }): Promise<void>;
  /**
   * Asks for the erasure from disk of what `records` (a forget's, just committed) removed or
   * rewrote; 'all': of everything no longer live (a dropped workspace).
   */
  requestErasure(records: readonly LiveRecord[] | 'all'): void;
  /** Counts an access to each memory (access_count, last_accessed_at), logged lazily. */
  touch(ws: string, memories: readonly MemoryRecord[]): void;
}

/** The memory as replies carry it: the embedding (a copy) only when asked for. */
export function view(m: MemoryRecord, withEmbedding = false): MemoryView {
  const v: MemoryView = withoutEmbedding(m);
  if (withEmbedding) v.embedding = m.embedding.slice();
  return v;
}

export function requireMemory(ws: Workspace | undefined, id: string): MemoryRecord {
  return requireHolder(ws, id).m;
}

/** The memory and the workspace holding it; not_found when either is missing. */
export function requireHolder(
  ws: Workspace | undefined,
  id: string,
): { w: Workspace; m: MemoryRecord } {
  const m = ws?.memories.get(id);
  if (ws === undefined || !m) throw notFound(`memory ${id} not found`);
  return { w: ws, m };
}

/**
 * A fresh memory record: new id, timestamps now (its event time too, unless given: at most now),
 * never accessed, not superseded.
 */
export function newMemory(
  ctx: OpContext,
  nowUs: number,
  m: Pick<
    MemoryRecord,
    'content' | 'kind' | 'entityId' | 'embedding' | 'context' | 'importance'
  > & {
    sourceMemoryIds?: string[] | null;
    expiresAt?: number | null;
    occurredAt?: number | undefined;
    speaker?: string | null;
    conversationId?: string | null;
    messageId?: string | null;
  },
): MemoryRecord {
  return {
    id: ctx.ids.next(nowUs / 1000),
    content: m.content,
    importance: m.importance,
    context: m.context,
    entityId: m.entityId,
    kind: m.kind,
    embedding: m.embedding,
    createdAt: nowUs,
    occurredAt: m.occurredAt === undefined ? nowUs : Math.min(m.occurredAt, nowUs),
    updatedAt: nowUs,
    lastAccessedAt: nowUs,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: m.sourceMemoryIds ?? null,
    supersededBy: null,
    expiresAt: m.expiresAt ?? null,
    speaker: m.speaker ?? null,
    conversationId: m.conversationId ?? null,
    messageId: m.messageId ?? null,
  };
}
