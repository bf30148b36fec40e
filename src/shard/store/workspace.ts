/**
 * @module shard/store/workspace — all state of one workspace inside its shard: memory records,
 * creation-ordered ids (overall and per entity), live memories in event-time order (overall, per
 * entity and per conversation), the edge graph and the tombstones.
 */
import { EDGE_TYPES, type Edge } from '../../model/edge.ts';
import { MEMORY_KINDS, type MemoryKind, type MemoryRecord } from '../../model/memory.ts';
import { Densities, type Earlier } from '../index/density.ts';
import { Graph } from '../index/graph.ts';
import { LexicalIndex } from '../index/lexical.ts';
import { VectorIndex } from '../index/vector-index.ts';
import type { Tombstone } from './records.ts';
import { ExpiryQueue } from './expiry-queue.ts';
import type { InsightSummary } from './insight-summary.ts';
import { PendingContradictions } from './pending.ts';
import { OrderedIds } from './ordered-ids.ts';
import { EventOrder } from './event-order.ts';

/** A conversation's turns: live ones in event order, and the writer's message ids (ingest's idempotency). */
export interface Conversation {
  /** Its id, one string shared by its turns (a decoded record brings its own copy). */
  readonly id: string;
  readonly order: EventOrder;
  /** message_id → memory id, for the live turns written with one. */
  readonly messages: Map<string, string>;
}

/** The tag of every live turn in a conversation's order. */
export const TURN_TAG = 0;

export class Workspace {
  readonly slug: string;
  readonly memories = new Map<string, MemoryRecord>();
  readonly order = new OrderedIds();
  readonly byEntity = new Map<string, OrderedIds>();
  /** Live memories by event time (occurred_at, then id), with the tags of {@link order}. */
  readonly events = new EventOrder();
  /** The same, per entity. */
  readonly eventsByEntity = new Map<string, EventOrder>();
  /** Conversations by id: their live turns in event order. */
  readonly conversations = new Map<string, Conversation>();
  /** One string per entity id, shared by its memories (a decoded record brings its own copy). */
  readonly #entityNames = new Map<string, string>();
  /** A number per entity id held (from 1; 0 is no entity), for {@link tagOf}; never reused. */
  readonly #entityNumbers = new Map<string, number>();
  #lastEntityNumber = 0;
  /** Live id → ids of its superseded versions. */
  readonly versions = new Map<string, Set<string>>();
  readonly graph = new Graph();
  /** Embeddings of live (not superseded) memories, for similarity search. */
  readonly vectors = new VectorIndex();
  readonly #lexical = new LexicalIndex();
  /**
   * Ids of memories queued for the lexical index: recovery defers tokenizing (half of its CPU) to
   * the shard's background indexer, so a restart is ready sooner; reading {@link lexical} first
   * indexes whatever is left, so no query ever sees a partial index. A list read from
   * {@link #backlogAt} on, not a set (a million set entries cost ~40 bytes each during recovery):
   * an entry may be stale (the memory was removed, superseded or already indexed since), and the
   * indexer skips those, so the index always holds exactly the live memories' current text.
   * {@link #unindexed} counts the live memories not in the index, which is what the queue holds.
   */
  #lexicalBacklog: string[] = [];
  #backlogAt = 0;
  #unindexed = 0;
  /** While true (during recovery), puts queue memories for the lexical index instead of indexing them. */
  deferLexical = false;
  /** One tombstone per forgotten memory (keyed by memory id and time, so replay is idempotent). */
  readonly tombstones = new Map<string, Tombstone>();
  /** Uncertain contradictions awaiting a verdict, by pending id. */
  readonly pending = new PendingContradictions();
  /** Memories with an expiry, soonest first. */
  readonly expiring = new ExpiryQueue();
  /** Running totals of large insights' sources, by insight id (ops/insight-sources; not persisted). */
  readonly insightSummaries = new Map<string, InsightSummary>();
  /** Each live memory's density among the memories written before it (index/density; kept by snapshots). */
  readonly densities = new Densities();
  /** What a density reads: the vectors, and the ids before a memory in creation order. */
  readonly earlier: Earlier = {
    vectors: this.vectors,
    countBefore: (id) => this.order.position(id),
    idsBefore: (id) => this.order.newestFirst(id),
  };

  constructor(slug: string) {
    this.slug = slug;
  }

  /** BM25 over the text of live (not superseded) memories, for hybrid similarity; always complete. */
  get lexical(): LexicalIndex {
    if (this.lexicalBacklog > 0) this.indexLexicalSome(Infinity);
    return this.#lexical;
  }

  /** Memories waiting for the lexical index. */
  get lexicalBacklog(): number {
    return this.#unindexed;
  }

  /** Adds queued memories to the lexical index for at most `budgetMs`; true when some remain. */
  indexLexicalSome(budgetMs: number): boolean {
    const start = performance.now();
    const queue = this.#lexicalBacklog;
    let n = 0;
    while (this.#unindexed > 0 && this.#backlogAt < queue.length) {
      const id = queue[this.#backlogAt++] as string;
      const m = this.memories.get(id);
      if (m && m.supersededBy === null && !this.#lexical.has(id)) {
        this.#lexical.add(id, m);
        this.#unindexed -= 1;
      }
      if ((++n & 63) === 0 && performance.now() - start >= budgetMs) break;
    }
    if (this.#unindexed > 0 && this.#backlogAt < queue.length) return true;
    if (this.#unindexed > 0) {
      // Unreachable while the count is kept right; if it ever is not, index what is missing
      // rather than report a backlog forever.
      for (const [id, m] of this.memories)
        if (m.supersededBy === null && !this.#lexical.has(id)) this.#lexical.add(id, m);
    }
    this.#unindexed = 0;
    this.#lexicalBacklog = [];
    this.#backlogAt = 0;
    return false;
  }

  /** Inserts or replaces a record, keeping every index in step. */
  put(m: MemoryRecord): void {
    const old = this.memories.get(m.id);
    if (old) {
      this.#unindex(old);
      // A source written again (revised): the totals of insights drawn from it counted its old text and vector.
      if (this.insightSummaries.size > 0)
        for (const e of this.graph.incoming(m.id))
          if (e.edge_type === 'insight_from') this.insightSummaries.delete(e.source_id);
    }
    if (m.entityId !== null) {
      const name = this.#entityNames.get(m.entityId);
      if (name === undefined) {
        this.#entityNames.set(m.entityId, m.entityId);
        this.#entityNumbers.set(m.entityId, ++this.#lastEntityNumber);
      } else m.entityId = name;
    }
    this.memories.set(m.id, m);
    const tag =
      m.supersededBy === null
        ? this.tagOf(m.kind, m.entityId, m.conversationId !== null)
        : NOT_LIVE_TAG;
    this.order.add(m.id, tag, m.createdAt);
    if (m.supersededBy === null) this.#placeEvent(m, tag);
    if (m.expiresAt !== null && m.expiresAt !== old?.expiresAt)
      this.expiring.add(m.id, m.expiresAt);
    if (m.supersededBy === null) {
      this.vectors.upsert(m.id, m.embedding);
      if (old?.embedding !== m.embedding) {
        this.densities.forget(m.id);
        this.densities.written(m.id);
      }
      if (this.deferLexical) {
        this.#lexicalBacklog.push(m.id);
        this.#unindexed += 1;
      } else this.#lexical.add(m.id, m);
    } else {
      this.vectors.remove(m.id);
      this.densities.forget(m.id);
    }
    if (m.entityId !== null) entityIds(this.byEntity, m.entityId).add(m.id, tag, m.createdAt);
    if (m.supersededBy !== null) {
      const set = this.versions.get(m.supersededBy) ?? new Set<string>();
      set.add(m.id);
      this.versions.set(m.supersededBy, set);
    }
  }

  /**
   * The tag a live memory of this kind and entity, a conversation's turn or not, has in
   * {@link order}, {@link byEntity}, {@link events} and {@link eventsByEntity} (a superseded one has
   * NOT_LIVE_TAG): equal tags, same kind and entity, and both turns or neither. An entity this
   * workspace does not hold gets a tag no memory has.
   */
  tagOf(kind: MemoryKind, entityId: string | null, turn = false): number {
    const entity = entityId === null ? 0 : this.#entityNumbers.get(entityId);
    return entity === undefined
      ? UNHELD_TAG
      : (entity * KIND_SLOTS + KIND_INDEX[kind]) * 2 + (turn ? 1 : 0);
  }

  /** The live memory's entries in the event orders (and its conversation's). */
  #placeEvent(m: MemoryRecord, tag: number): void {
    this.events.add(m.id, tag, m.occurredAt);
    if (m.entityId !== null) {
      let order = this.eventsByEntity.get(m.entityId);
      if (order === undefined) this.eventsByEntity.set(m.entityId, (order = new EventOrder()));
      order.add(m.id, tag, m.occurredAt);
    }
    if (m.conversationId !== null) {
      let c = this.conversations.get(m.conversationId);
      if (c === undefined)
        this.conversations.set(
          m.conversationId,
          (c = { id: m.conversationId, order: new EventOrder(), messages: new Map() }),
        );
      else m.conversationId = c.id;
      c.order.add(m.id, TURN_TAG, m.occurredAt);
      if (m.messageId !== null) c.messages.set(m.messageId, m.id);
    }
  }

  #unplaceEvent(m: MemoryRecord): void {
    this.events.delete(m.id, m.occurredAt);
    if (m.entityId !== null) {
      const order = this.eventsByEntity.get(m.entityId);
      order?.delete(m.id, m.occurredAt);
      if (order?.size === 0) this.eventsByEntity.delete(m.entityId);
    }
    if (m.conversationId !== null) {
      const c = this.conversations.get(m.conversationId);
      if (c === undefined) return;
      c.order.delete(m.id, m.occurredAt);
      if (m.messageId !== null && c.messages.get(m.messageId) === m.id)
        c.messages.delete(m.messageId);
      if (c.order.size === 0) this.conversations.delete(m.conversationId);
    }
  }

  delete(id: string): MemoryRecord | undefined {
    const m = this.memories.get(id);
    if (!m) return undefined;
    this.#unindex(m);
    this.memories.delete(id);
    this.order.delete(id);
    this.vectors.remove(id);
    this.densities.forget(id);
    this.graph.removeNode(id);
    this.pending.deleteMemory(id);
    this.insightSummaries.delete(id);
    return m;
  }

  /**
   * The edge with its ends and type pointing at strings this workspace already holds (the
   * memories' ids, the type constants), so a decoded edge does not keep copies of them; a new
   * object with its five fields written out, which V8 keeps inside the object (a decoded one
   * grows a separate property store past its fourth field).
   */
  sharedStrings(e: Edge): Edge {
    const shared: Edge = {
      source_id: this.memories.get(e.source_id)?.id ?? e.source_id,
      target_id: this.memories.get(e.target_id)?.id ?? e.target_id,
      edge_type: EDGE_TYPES.find((t) => t === e.edge_type) ?? e.edge_type,
      confidence: e.confidence,
      timestamp_us: e.timestamp_us,
    };
    if (e.reason !== undefined) shared.reason = e.reason;
    return shared;
  }

  /** Removes from the expiry queue and returns the memories whose expiry `now` has reached. */
  takeExpired(now: number): MemoryRecord[] {
    const ids = this.expiring.due(now, (id) => this.memories.get(id)?.expiresAt ?? null);
    return ids.map((id) => this.memories.get(id) as MemoryRecord);
  }

  /** Number of live (not superseded) memories. */
  liveCount(): number {
    let versions = 0;
    for (const set of this.versions.values()) versions += set.size;
    return this.memories.size - versions;
  }

  #unindex(m: MemoryRecord): void {
    // A live memory is in the lexical index or still queued for it (then the queue skips it later).
    if (m.supersededBy === null) {
      if (this.#lexical.has(m.id)) this.#lexical.remove(m.id);
      else this.#unindexed -= 1;
      this.#unplaceEvent(m);
    }
    if (m.entityId !== null) {
      const ids = this.byEntity.get(m.entityId);
      ids?.delete(m.id);
      if (ids && ids.size === 0) {
        this.byEntity.delete(m.entityId);
        this.#entityNames.delete(m.entityId);
        this.#entityNumbers.delete(m.entityId);
      }
    }
    if (m.supersededBy !== null) {
      const set = this.versions.get(m.supersededBy);
      set?.delete(m.id);
      if (set && set.size === 0) this.versions.delete(m.supersededBy);
    }
  }
}

/** Tags: a superseded memory's, and one that no memory has. */
const NOT_LIVE_TAG = -1;
const UNHELD_TAG = -3;
const KIND_SLOTS = 8;
const KIND_INDEX = Object.fromEntries(MEMORY_KINDS.map((k, i) => [k, i])) as Record<
  MemoryKind,
  number
>;

/** The kind a tag of {@link Workspace.tagOf} says, or null for a tag that is not a live memory's. */
export function kindOfTag(tag: number): MemoryKind | null {
  return tag < 0 ? null : (MEMORY_KINDS[(tag >> 1) % KIND_SLOTS] ?? null);
}

function entityIds(map: Map<string, OrderedIds>, entity: string): OrderedIds {
  let ids = map.get(entity);
  if (!ids) {
    ids = new OrderedIds();
    map.set(entity, ids);
  }
  return ids;
}
