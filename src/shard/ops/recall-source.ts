/** @module shard/ops/recall-source — a workspace seen through the RecallSource interface. */
import type { MemoryRecord } from '../../model/memory.ts';
import type { LexicalMatcher, RecallSource } from '../../recall/types.ts';
import type { Workspace } from '../store/workspace.ts';

/** An entity with at most this many memories is searched exactly (never a filtered graph walk). */
const ENTITY_EXACT_MAX = 4096;

export function recallSource(w: Workspace): RecallSource {
  return {
    memory: (id) => w.memories.get(id),
    nearest: (query, { k, ef, entityId }) => {
      if (entityId === null) return w.vectors.search(query, { k, ef });
      const ids = w.byEntity.get(entityId);
      if (!ids) return [];
      if (ids.size <= ENTITY_EXACT_MAX) return w.vectors.search(query, { k, ef, only: ids.after(null) });
      return w.vectors.search(query, { k, ef, filter: (id) => w.memories.get(id)?.entityId === entityId });
    },
    newestFirst: (entityId) => liveNewestFirst(w, entityId),
    lexical: (text) => lexicalMatcher(w, text),
    neighbours: (m) => neighbours(w, m),
    createdBetween: (startUs, endUs, entityId, limit) => createdBetween(w, { startUs, endUs, entityId, limit }),
    withDateKeys: (keys, limit, entityId) =>
      w.lexical.withDateKeys(keys, limit).flatMap((id) => {
        const m = w.memories.get(id);
        return m && (entityId === null || m.entityId === entityId) ? [m] : [];
      }),
    outgoing: (id) => w.graph.outgoing(id),
    incoming: (id) => w.graph.incoming(id),
  };
}

function* liveNewestFirst(w: Workspace, entityId: string | null, before: string | null = null): Generator<MemoryRecord> {
  const ids = entityId === null ? w.order : w.byEntity.get(entityId);
  if (!ids) return;
  for (const id of ids.newestFirst(before)) {
    const m = w.memories.get(id);
    if (m && m.supersededBy === null) yield m;
  }
}

function lexicalMatcher(w: Workspace, text: string): LexicalMatcher {
  const q = w.lexical.query(text);
  const scores = w.lexical.score(q);
  return {
    empty: q.terms.length === 0,
    search: (k, entityId) => scores.top(k, entityId === null ? null : (id) => w.memories.get(id)?.entityId === entityId),
    normOf: (id) => scores.norm(id),
  };
}

/** How far (in creation order) and how long apart a neighbour may be. */
const NEIGHBOUR_SCAN = 4;
const NEIGHBOUR_GAP_US = 3_600_000_000;

/**
 * The nearest live memory on each side in creation order that has the same kind and entity (at
 * most NEIGHBOUR_SCAN ids away), kept when it was created within NEIGHBOUR_GAP_US of `m`.
 */
function neighbours(w: Workspace, m: MemoryRecord): MemoryRecord[] {
  const same = (id: string): boolean => {
    const n = w.memories.get(id);
    return n !== undefined && n.supersededBy === null && n.kind === m.kind && n.entityId === m.entityId;
  };
  return w.order.beside(m.id, NEIGHBOUR_SCAN, same).flatMap((id) => {
    const n = w.memories.get(id) as MemoryRecord;
    return Math.abs(n.createdAt - m.createdAt) <= NEIGHBOUR_GAP_US ? [n] : [];
  });
}

/**
 * Live memories created in [startUs, endUs), newest first, at most `limit`. Ids sort by creation
 * time, so the walk starts at the first id after the window and ends at its start.
 */
function createdBetween(w: Workspace, o: { startUs: number; endUs: number; entityId: string | null; limit: number }): MemoryRecord[] {
  const out: MemoryRecord[] = [];
  const endMs = Math.ceil(o.endUs / 1000) + 1;
  const before = endMs >= 2 ** 48 ? null : `${endMs.toString(16).padStart(12, '0')}${'0'.repeat(20)}`;
  for (const m of liveNewestFirst(w, o.entityId, before)) {
    if (m.createdAt >= o.endUs) continue;
    if (m.createdAt < o.startUs - 1000 || out.length >= o.limit) break;
    if (m.createdAt >= o.startUs) out.push(m);
  }
  return out;
}
