/** @module shard/ops/recall-source — a workspace seen through the RecallSource interface. */
import type { MemoryRecord } from '../../model/memory.ts';
import type { RecallSource } from '../../recall/types.ts';
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
    outgoing: (id) => w.graph.outgoing(id),
    incoming: (id) => w.graph.incoming(id),
  };
}

function* liveNewestFirst(w: Workspace, entityId: string | null): Generator<MemoryRecord> {
  const ids = entityId === null ? w.order : w.byEntity.get(entityId);
  if (!ids) return;
  for (const id of ids.newestFirst()) {
    const m = w.memories.get(id);
    if (m && m.supersededBy === null) yield m;
  }
}
