/** @module shard/ops/recall-source — a workspace seen through the RecallSource interface. */
import type { MemoryRecord } from '../../model/memory.ts';
import { compileFilter, type FilterNode } from '../../recall/filter.ts';
import type { RecallSource } from '../../recall/types.ts';
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

function* liveNewestFirst(w: Workspace, entityId: string | null, accepts: (m: MemoryRecord) => boolean): Generator<MemoryRecord> {
  const ids = entityId === null ? w.order : w.byEntity.get(entityId);
  if (!ids) return;
  for (const id of ids.newestFirst()) {
    const m = w.memories.get(id);
    if (m && m.supersededBy === null && accepts(m)) yield m;
  }
}
