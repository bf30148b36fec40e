/** @module shard/ops/recall-source — a workspace seen through the RecallSource interface. */
import type { MemoryRecord } from '../../model/memory.ts';
import { compileFilter, type FilterNode } from '../../recall/filter.ts';
import type { LexicalMatcher, RecallSource } from '../../recall/types.ts';
import type { EventOrder } from '../store/event-order.ts';
import { DELETED_TAG } from '../store/ordered-ids.ts';
import { TURN_TAG, type Workspace } from '../store/workspace.ts';

/** An entity with at most this many memories is searched exactly (never a filtered graph walk). */
const ENTITY_EXACT_MAX = 4096;
/**
 * A filter estimated to pass fewer than this share of the memories is searched by an exact
 * filtered scan: the graph walk would visit most of the graph before finding k matches
 * (native-bench/micro/filtered-search.ts: at 1% the walk was ~10× slower than the scan).
 */
const SELECTIVE = 0.05;
/** Memories sampled to estimate a filter's selectivity. */
const SAMPLE = 256;

/**
 * `filter`: the request's metadata filter. It runs inside the searches (the HNSW filter callback,
 * the exact scans, the newest-first walk), so `k` results come back whenever k memories match.
 */
export function recallSource(w: Workspace, filter: FilterNode | null = null): RecallSource {
  const accepts = filter === null ? () => true : compileFilter(filter);
  const passes =
    filter === null
      ? undefined
      : (id: string): boolean => {
          const m = w.memories.get(id);
          return m !== undefined && accepts(m);
        };
  let selective: boolean | undefined;
  const threads: ThreadMemo = { byId: new Map(), byPosition: new Map() };
  const exact = (): boolean =>
    passes !== undefined && w.vectors.hasGraph && (selective ??= estimate(w, accepts) < SELECTIVE);
  return {
    memory: (id) => w.memories.get(id),
    accepts,
    nearest: (query, { k, ef, entityId }) => {
      if (entityId === null)
        return w.vectors.search(
          query,
          passes ? { k, ef, filter: passes, exact: exact() } : { k, ef },
        );
      const ids = w.byEntity.get(entityId);
      if (!ids) return [];
      if (ids.size <= ENTITY_EXACT_MAX)
        return w.vectors.search(
          query,
          passes
            ? { k, ef, only: ids.after(null), filter: passes }
            : { k, ef, only: ids.after(null) },
        );
      return w.vectors.search(query, {
        k,
        ef,
        filter: (id) => w.memories.get(id)?.entityId === entityId && (passes?.(id) ?? true),
      });
    },
    newestFirst: (entityId) => liveNewestFirst(w, entityId, accepts),
    lexical: (text) => lexicalMatcher(w, text, accepts),
    neighbours: (m) => neighbours(w, m, accepts),
    thread: (m) => threadOf(w, m, threads),
    density: (m) => w.densities.of(m, w.earlier),
    occurredBetween: (startUs, endUs, entityId, limit) =>
      occurredBetween(w, { startUs, endUs, entityId, limit, accepts }),
    countOutside: (startUs, endUs, entityId) => countOutside(eventsOf(w, entityId), startUs, endUs),
    withDateKeys: (keys, limit, entityId) =>
      w.lexical.withDateKeys(keys, limit).flatMap((id) => {
        const m = w.memories.get(id);
        return m && (entityId === null || m.entityId === entityId) && accepts(m) ? [m] : [];
      }),
    outgoing: (id) => w.graph.outgoing(id),
    incoming: (id) => w.graph.incoming(id),
  };
}

/** Share of a spread sample of live memories that the filter accepts. */
function estimate(w: Workspace, accepts: (m: MemoryRecord) => boolean): number {
  let seen = 0;
  let passed = 0;
  for (const id of w.order.spread(SAMPLE)) {
    const m = w.memories.get(id);
    if (!m || m.supersededBy !== null) continue;
    seen += 1;
    if (accepts(m)) passed += 1;
  }
  return seen === 0 ? 1 : passed / seen;
}

/** The workspace's live memories (or an entity's) in event order. */
function eventsOf(w: Workspace, entityId: string | null): EventOrder | undefined {
  return entityId === null ? w.events : w.eventsByEntity.get(entityId);
}

/** Live accepted memories, latest event first. */
function* liveNewestFirst(
  w: Workspace,
  entityId: string | null,
  accepts: (m: MemoryRecord) => boolean,
): Generator<MemoryRecord> {
  const ids = eventsOf(w, entityId);
  if (!ids) return;
  for (const id of ids.newestFirst()) {
    const m = w.memories.get(id);
    if (m && m.supersededBy === null && accepts(m)) yield m;
  }
}

/** The cue's lexical scores for recall: its words, and at a discount the indexed words one typo away (LexicalIndex.query). */
function lexicalMatcher(
  w: Workspace,
  text: string,
  accepts: (m: MemoryRecord) => boolean,
): LexicalMatcher {
  const q = w.lexical.query(text, { typos: true });
  const scores = w.lexical.score(q);
  return {
    empty: q.terms.length === 0,
    search: (k, entityId) =>
      scores.top(k, (id) => {
        const m = w.memories.get(id);
        return m !== undefined && (entityId === null || m.entityId === entityId) && accepts(m);
      }),
    normOf: (id) => scores.norm(id),
    unionOf: (ids) => scores.union(ids),
  };
}

/** How far (in creation order) and how long apart a neighbour may be. */
const NEIGHBOUR_SCAN = 4;
const NEIGHBOUR_GAP_US = 3_600_000_000;

/**
 * The order a memory's neighbours (`thread` false) or thread are walked in, and the tag its fellow
 * members have there: a conversation's turn walks its conversation (every live turn a member);
 * any other memory walks the workspace's event order (its thread: its entity's, when it has one)
 * among live memories of the same kind and entity that are not turns.
 */
function walkOrder(
  w: Workspace,
  m: MemoryRecord,
  thread: boolean,
): { order: EventOrder; tag: number } | undefined {
  if (m.conversationId !== null) {
    const c = w.conversations.get(m.conversationId);
    return c && { order: c.order, tag: TURN_TAG };
  }
  const order = thread ? eventsOf(w, m.entityId) : w.events;
  return order && { order, tag: w.tagOf(m.kind, m.entityId) };
}

/**
 * The nearest live memory on each side in event order that belongs with it ({@link walkOrder}; at
 * most NEIGHBOUR_SCAN entries away), kept when it happened within NEIGHBOUR_GAP_US of `m`. Reads
 * the order's tags and times, and a record only for a memory that belongs with it.
 */
function neighbours(
  w: Workspace,
  m: MemoryRecord,
  accepts: (m: MemoryRecord) => boolean,
): MemoryRecord[] {
  const walk = walkOrder(w, m, false);
  if (walk === undefined) return [];
  const { ids, tags, times } = walk.order.columns();
  const { tag } = walk;
  const at = walk.order.position(m.id, m.occurredAt);
  const out: MemoryRecord[] = [];
  for (const [start, step] of [
    [at - 1, -1],
    [ids[at] === m.id ? at + 1 : at, 1],
  ] as const) {
    let seen = 0;
    for (let i = start; i >= 0 && i < ids.length && seen < NEIGHBOUR_SCAN; i += step) {
      const t = tags[i];
      if (t === DELETED_TAG) continue;
      seen += 1;
      if (t !== tag) continue;
      const n = w.memories.get(ids[i] as string);
      if (n === undefined || !accepts(n)) continue;
      if (Math.abs((times[i] as number) - m.occurredAt) <= NEIGHBOUR_GAP_US) out.push(n);
      break;
    }
  }
  return out;
}

/** How many ids (of any kind or entity) a thread's walk looks at each way, at most. */
const THREAD_SCAN = 64;

/**
 * What one recall's thread walks found: the answer for each memory a walk started from (by id)
 * and for each memory a walk passed (by position, in the order it was walked in: a turn in its
 * conversation's, a memory with an entity in its entity's, another in the workspace's).
 */
interface ThreadMemo {
  byId: Map<string, string | null>;
  byPosition: Map<EventOrder, { layout: number; placed: Map<number, string | null> }>;
}

/** Where one way of a thread walk stopped: `last` the position of the last member (−1: the start). */
interface WalkEnd {
  ended: boolean;
  last: number;
  joined?: string | null;
}

/**
 * The thread of `m`: the id of its first memory, when the neighbour rule followed both ways (in
 * event order, live memories that belong with it ({@link walkOrder}), each within
 * NEIGHBOUR_GAP_US of the next) reaches a gap or the end of the order within THREAD_SCAN entries
 * each way; null when it does not (a stream written without pauses is no session: no evidence
 * either way). `memo` holds what this recall found: a walk that reaches a memory already placed
 * takes that memory's answer for the whole thread. The walk reads the order's tags and times
 * (kind, entity, turn and liveness in one number), not records.
 */
function threadOf(w: Workspace, m: MemoryRecord, memo: ThreadMemo): string | null {
  const known = memo.byId.get(m.id);
  if (known !== undefined || memo.byId.has(m.id)) return known ?? null;
  const walkIn = walkOrder(w, m, true);
  if (walkIn === undefined) {
    memo.byId.set(m.id, m.id);
    return m.id;
  }
  const { order, tag } = walkIn;
  // Positions hold while the order's layout does (a recall runs without yielding, so it always
  // does; a source kept across writes starts the positions over).
  let byPosition = memo.byPosition.get(order);
  if (byPosition === undefined || byPosition.layout !== order.layout)
    memo.byPosition.set(order, (byPosition = { layout: order.layout, placed: new Map() }));
  const { placed } = byPosition;
  const { ids, tags, times } = order.columns();
  const at = order.position(m.id, m.occurredAt);
  const present = ids[at] === m.id;
  if (present && placed.has(at)) {
    const key = placed.get(at) ?? null;
    memo.byId.set(m.id, key);
    return key;
  }
  const members: number[] = [];
  const walk = (start: number, direction: -1 | 1): WalkEnd => {
    let lastTime = m.occurredAt;
    let last = -1;
    let scanned = 0;
    for (let i = start; i >= 0 && i < ids.length; i += direction) {
      const t = tags[i];
      if (t === DELETED_TAG) continue;
      if (++scanned > THREAD_SCAN) return { ended: false, last };
      if (t !== tag) continue;
      const time = times[i] as number;
      if (Math.abs(lastTime - time) > NEIGHBOUR_GAP_US) return { ended: true, last };
      if (placed.has(i)) return { ended: true, last, joined: placed.get(i) ?? null };
      members.push(i);
      lastTime = time;
      last = i;
    }
    return { ended: true, last };
  };
  const back = walk(at - 1, -1);
  const ahead = back.joined === undefined && back.ended ? walk(present ? at + 1 : at, 1) : back;
  const first = back.last === -1 ? m.id : (ids[back.last] as string);
  const key =
    back.joined !== undefined
      ? back.joined
      : ahead.joined !== undefined
        ? ahead.joined
        : back.ended && ahead.ended
          ? first
          : null;
  for (const i of members) placed.set(i, key);
  if (present) placed.set(at, key);
  memo.byId.set(m.id, key);
  return key;
}

/**
 * Entries held outside [startUs, endUs) in an event order: at least the live memories that happened
 * outside the window (deleted entries not yet compacted count too), never fewer.
 */
function countOutside(order: EventOrder | undefined, startUs: number, endUs: number): number {
  if (order === undefined) return 0;
  return order.held - (endUs > startUs ? order.countBetween(startUs, endUs) : 0);
}

/** Live accepted memories that happened in [startUs, endUs), latest first, at most `limit`. */
function occurredBetween(
  w: Workspace,
  o: {
    startUs: number;
    endUs: number;
    entityId: string | null;
    limit: number;
    accepts: (m: MemoryRecord) => boolean;
  },
): MemoryRecord[] {
  const order = eventsOf(w, o.entityId);
  const out: MemoryRecord[] = [];
  if (order === undefined) return out;
  const { ids, tags } = order.columns();
  const stop = order.firstAt(o.startUs);
  for (let i = order.firstAt(o.endUs) - 1; i >= stop && out.length < o.limit; i--) {
    if (tags[i] === DELETED_TAG) continue;
    const m = w.memories.get(ids[i] as string);
    if (m && m.supersededBy === null && o.accepts(m)) out.push(m);
  }
  return out;
}
