/** @module shard/ops/recall-source — a workspace seen through the RecallSource interface. */
import type { MemoryRecord } from '../../model/memory.ts';
import { compileFilter, type FilterNode } from '../../recall/filter.ts';
import type { LexicalMatcher, RecallSource } from '../../recall/types.ts';
import type { OrderedIds } from '../store/ordered-ids.ts';
import type { Workspace } from '../store/workspace.ts';

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
  const passes = filter === null ? undefined : (id: string): boolean => {
    const m = w.memories.get(id);
    return m !== undefined && accepts(m);
  };
  let selective: boolean | undefined;
  const threads = new Map<string, string | null>();
  const exact = (): boolean => passes !== undefined && w.vectors.hasGraph && (selective ??= estimate(w, accepts) < SELECTIVE);
  return {
    memory: (id) => w.memories.get(id),
    accepts,
    nearest: (query, { k, ef, entityId }) => {
      if (entityId === null) return w.vectors.search(query, passes ? { k, ef, filter: passes, exact: exact() } : { k, ef });
      const ids = w.byEntity.get(entityId);
      if (!ids) return [];
      if (ids.size <= ENTITY_EXACT_MAX) return w.vectors.search(query, passes ? { k, ef, only: ids.after(null), filter: passes } : { k, ef, only: ids.after(null) });
      return w.vectors.search(query, { k, ef, filter: (id) => w.memories.get(id)?.entityId === entityId && (passes?.(id) ?? true) });
    },
    newestFirst: (entityId) => liveNewestFirst(w, entityId, accepts),
    lexical: (text) => lexicalMatcher(w, text, accepts),
    neighbours: (m) => neighbours(w, m, accepts),
    thread: (m) => threadOf(w, m, threads),
    createdBetween: (startUs, endUs, entityId, limit) => createdBetween(w, { startUs, endUs, entityId, limit, accepts }),
    countOutside: (startUs, endUs, entityId) => countOutside(entityId === null ? w.order : w.byEntity.get(entityId), startUs, endUs),
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

function* liveNewestFirst(w: Workspace, entityId: string | null, accepts: (m: MemoryRecord) => boolean, before: string | null = null): Generator<MemoryRecord> {
  const ids = entityId === null ? w.order : w.byEntity.get(entityId);
  if (!ids) return;
  for (const id of ids.newestFirst(before)) {
    const m = w.memories.get(id);
    if (m && m.supersededBy === null && accepts(m)) yield m;
  }
}

/** The cue's lexical scores for recall: its words, and at a discount the indexed words one typo away (LexicalIndex.query). */
function lexicalMatcher(w: Workspace, text: string, accepts: (m: MemoryRecord) => boolean): LexicalMatcher {
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
 * The nearest live memory on each side in creation order that has the same kind and entity (at
 * most NEIGHBOUR_SCAN ids away), kept when it was created within NEIGHBOUR_GAP_US of `m`.
 */
function neighbours(w: Workspace, m: MemoryRecord, accepts: (m: MemoryRecord) => boolean): MemoryRecord[] {
  const same = (id: string): boolean => {
    const n = w.memories.get(id);
    return n !== undefined && n.supersededBy === null && n.kind === m.kind && n.entityId === m.entityId && accepts(n);
  };
  return w.order.beside(m.id, NEIGHBOUR_SCAN, same).flatMap((id) => {
    const n = w.memories.get(id) as MemoryRecord;
    return Math.abs(n.createdAt - m.createdAt) <= NEIGHBOUR_GAP_US ? [n] : [];
  });
}

/** How many ids (of any kind or entity) a thread's walk looks at each way, at most. */
const THREAD_SCAN = 64;

/**
 * The thread of `m`: the id of its first memory, when the neighbour rule followed both ways (live
 * memories of the same kind and entity, each within NEIGHBOUR_GAP_US of the next) reaches a gap or
 * the end of the order within THREAD_SCAN ids each way; null when it does not (a stream written
 * without pauses is no session: no evidence either way). `memo` holds what this recall found: a
 * walk that reaches a memory already placed takes that memory's answer for the whole thread.
 */
function threadOf(w: Workspace, m: MemoryRecord, memo: Map<string, string | null>): string | null {
  if (memo.has(m.id)) return memo.get(m.id) ?? null;
  const ids = m.entityId === null ? w.order : w.byEntity.get(m.entityId);
  const members = [m.id];
  const walk = (direction: -1 | 1): { ended: boolean; first: string; joined?: string | null } => {
    let last = m;
    let scanned = 0;
    let end: { ended: boolean; first: string; joined?: string | null } | null = null;
    ids?.walk(m.id, direction, (id) => {
      if (++scanned > THREAD_SCAN) {
        end = { ended: false, first: last.id };
        return false;
      }
      const n = w.memories.get(id);
      if (n === undefined || n.supersededBy !== null || n.kind !== m.kind || n.entityId !== m.entityId) return true;
      if (Math.abs(last.createdAt - n.createdAt) > NEIGHBOUR_GAP_US) end = { ended: true, first: last.id };
      else if (memo.has(id)) end = { ended: true, first: last.id, joined: memo.get(id) ?? null };
      else {
        members.push(id);
        last = n;
        return true;
      }
      return false;
    });
    return end ?? { ended: true, first: last.id };
  };
  const back = walk(-1);
  const ahead = back.joined === undefined && back.ended ? walk(1) : back;
  const key = back.joined !== undefined ? back.joined : ahead.joined !== undefined ? ahead.joined : back.ended && ahead.ended ? back.first : null;
  for (const id of members) memo.set(id, key);
  return key;
}

/** The first id of millisecond `ms` (ids start with their creation time in ms, 12 hex digits). */
function idAt(ms: number): string {
  return `${Math.max(0, Math.min(ms, 2 ** 48 - 1)).toString(16).padStart(12, '0')}${'0'.repeat(20)}`;
}

/**
 * Ids held outside [startUs, endUs), by id alone: only ids whose millisecond lies a whole
 * millisecond inside the window count as in it (an id's time may differ from its memory's
 * `createdAt` by part of one), so the count is never short of the live memories outside.
 */
function countOutside(ids: OrderedIds | undefined, startUs: number, endUs: number): number {
  if (ids === undefined) return 0;
  const from = Math.floor(startUs / 1000) + 1;
  const before = Math.ceil(endUs / 1000) - 1;
  return ids.held - (before > from ? ids.countBetween(idAt(from), idAt(before)) : 0);
}

/**
 * Live memories created in [startUs, endUs), newest first, at most `limit`. Ids sort by creation
 * time, so the walk starts at the first id after the window and ends at its start.
 */
function createdBetween(w: Workspace, o: { startUs: number; endUs: number; entityId: string | null; limit: number; accepts: (m: MemoryRecord) => boolean }): MemoryRecord[] {
  const out: MemoryRecord[] = [];
  const endMs = Math.ceil(o.endUs / 1000) + 1;
  const before = endMs >= 2 ** 48 ? null : idAt(endMs);
  for (const m of liveNewestFirst(w, o.entityId, o.accepts, before)) {
    if (m.createdAt >= o.endUs) continue;
    if (m.createdAt < o.startUs - 1000 || out.length >= o.limit) break;
    if (m.createdAt >= o.startUs) out.push(m);
  }
  return out;
}
