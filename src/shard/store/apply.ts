/**
 * @module shard/store/apply — applies one record to shard state. Live operations and recovery
 * both go through `applyLive`, so replay is the same code as the first write: a live write puts
 * the memory the op built, a frame read back (recovery, cluster replay) is decoded first.
 */
import type { Edge } from '../../model/edge.ts';
import { decodeRecord, type LiveRecord, type LogRecord } from './records.ts';
import { VectorSlab } from './vector-slab.ts';
import { Workspace } from './workspace.ts';

export class ShardState {
  readonly workspaces = new Map<string, Workspace>();
  /** Set by recovery: workspaces queue memories for their lexical index (see Workspace.deferLexical). */
  #deferLexical = false;

  workspace(slug: string): Workspace {
    let ws = this.workspaces.get(slug);
    if (!ws) {
      ws = new Workspace(slug);
      ws.deferLexical = this.#deferLexical;
      this.workspaces.set(slug, ws);
    }
    return ws;
  }

  /** Set by recovery: decoded vectors are packed into shared buffers (see VectorSlab). */
  slab: VectorSlab | null = null;

  /**
   * Recovery mode on or off: lexical deferral for every workspace, present and future, and
   * vectors packed into shared buffers.
   */
  recovering(on: boolean): void {
    this.slab = on ? new VectorSlab() : null;
    this.#deferLexical = on;
    for (const ws of this.workspaces.values()) ws.deferLexical = on;
  }

  memoryCount(): number {
    let n = 0;
    for (const ws of this.workspaces.values()) n += ws.memories.size;
    return n;
  }

  edgeCount(): number {
    let n = 0;
    for (const ws of this.workspaces.values()) n += ws.graph.edgeCount;
    return n;
  }
}

/** Applies a record read from a frame (recovery, cluster replay): decoded, then applied as a live write is. */
export function applyRecord(state: ShardState, r: LogRecord): void {
  applyLive(state, decodeRecord(r, state.slab));
}

/** Applies a live record: the state keeps the memory object it carries. */
export function applyLive(state: ShardState, r: LiveRecord): void {
  switch (r.t) {
    case 'put': {
      const w = state.workspace(r.ws);
      w.put(r.m);
      // A snapshot's memory brings its density (a function of what came before it, so kept).
      if (r.density !== undefined && r.m.supersededBy === null)
        w.densities.restore(r.m.id, r.density);
      return;
    }
    case 'unsource': {
      // Absent: deleted later in the log (a fuzzy snapshot taken after that has no trace of it).
      const w = state.workspaces.get(r.ws);
      const old = w?.memories.get(r.m.id);
      if (!w || !old) return;
      const lost = new Set(r.lost);
      r.m.sourceMemoryIds = (old.sourceMemoryIds ?? []).filter((s) => !lost.has(s));
      w.put(r.m);
      return;
    }
    case 'del':
      state.workspaces.get(r.ws)?.delete(r.id);
      return;
    case 'edge': {
      const w = state.workspace(r.ws);
      w.graph.put(w.sharedStrings(r.e));
      return;
    }
    case 'unedge':
      state.workspaces.get(r.ws)?.graph.remove(r.s, r.d, r.y);
      return;
    case 'tomb':
      state.workspace(r.ws).tombstones.set(`${r.tomb.memory_id}@${r.tomb.forgotten_at}`, r.tomb);
      return;
    case 'access': {
      const m = state.workspaces.get(r.ws)?.memories.get(r.id);
      if (m) {
        m.accessCount = Math.max(m.accessCount, r.n);
        m.lastAccessedAt = Math.max(m.lastAccessedAt, r.at);
      }
      return;
    }
    case 'drop':
      state.workspaces.delete(r.ws);
      return;
    case 'pending':
      state.workspace(r.ws).pending.set(r.p);
      return;
    case 'unpending':
      state.workspaces.get(r.ws)?.pending.delete(r.id);
      return;
  }
}

/** After replay: edges whose ends did not survive (a fuzzy snapshot can hold such) are removed. */
export function pruneDanglingEdges(state: ShardState): number {
  let pruned = 0;
  for (const ws of state.workspaces.values()) {
    // Only the dangling edges are collected (not a copy of every edge): removal must wait until
    // the walk over the graph is done.
    const dangling: Edge[] = [];
    for (const e of ws.graph.all())
      if (!ws.memories.has(e.source_id) || !ws.memories.has(e.target_id)) dangling.push(e);
    for (const e of dangling) {
      ws.graph.remove(e.source_id, e.target_id, e.edge_type);
      pruned += 1;
    }
  }
  return pruned;
}
