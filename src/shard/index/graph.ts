/**
 * @module shard/index/graph — the typed edge graph of one workspace in adjacency form, indexed in
 * both directions. At most one edge per (source, target, type); writing it again replaces it.
 * Whether an edge exists is answered from the shorter of the two ends' lists, with no key string
 * per edge (why: docs/architecture-notes.md, "The edge graph"). The memories with a `contradicts`
 * edge are kept apart too, so listing contradictions costs the pairs, not a walk of the workspace.
 */
import type { Edge, EdgeType } from '../../model/edge.ts';

/** Lists up to this long are replaced by an exact-size copy on push instead of growing in place. */
const SMALL_LIST = 8;

export class Graph {
  readonly #out = new Map<string, Edge[]>();
  readonly #in = new Map<string, Edge[]>();
  /** Memories with a `contradicts` edge (either end) and how many: the contradictions list reads it. */
  readonly #contradicting = new Map<string, number>();
  #edges = 0;

  get edgeCount(): number {
    return this.#edges;
  }

  put(edge: Edge): void {
    this.remove(edge.source_id, edge.target_id, edge.edge_type);
    push(this.#out, edge.source_id, edge);
    push(this.#in, edge.target_id, edge);
    this.#edges += 1;
    if (edge.edge_type === 'contradicts')
      for (const id of [edge.source_id, edge.target_id])
        this.#contradicting.set(id, (this.#contradicting.get(id) ?? 0) + 1);
  }

  remove(source: string, target: string, type: EdgeType): boolean {
    if (!this.#has(source, target, type)) return false;
    drop(this.#out, source, (e) => e.target_id === target && e.edge_type === type);
    drop(this.#in, target, (e) => e.source_id === source && e.edge_type === type);
    this.#edges -= 1;
    if (type === 'contradicts') {
      for (const id of [source, target]) {
        const n = (this.#contradicting.get(id) ?? 1) - 1;
        if (n > 0) this.#contradicting.set(id, n);
        else this.#contradicting.delete(id);
      }
    }
    return true;
  }

  #has(source: string, target: string, type: EdgeType): boolean {
    const out = this.#out.get(source);
    const inc = this.#in.get(target);
    if (!out || !inc) return false;
    if (out.length <= inc.length)
      return out.some((e) => e.target_id === target && e.edge_type === type);
    return inc.some((e) => e.source_id === source && e.edge_type === type);
  }

  outgoing(id: string): readonly Edge[] {
    return this.#out.get(id) ?? [];
  }

  incoming(id: string): readonly Edge[] {
    return this.#in.get(id) ?? [];
  }

  /** Ids of the memories with at least one `contradicts` edge. */
  contradicting(): IterableIterator<string> {
    return this.#contradicting.keys();
  }

  /** Removes every edge touching `id`; returns them. */
  removeNode(id: string): Edge[] {
    const edges = [...this.outgoing(id), ...this.incoming(id)];
    for (const e of edges) this.remove(e.source_id, e.target_id, e.edge_type);
    return edges;
  }

  *all(): Generator<Edge> {
    for (const list of this.#out.values()) yield* list;
  }
}

/**
 * Appends to a node's list. Most lists hold one or two edges, and V8 grows an array's backing store
 * by half plus 16 slots on push, so short lists are copied at their exact size instead (the old
 * list is left as it was, which a snapshot iterating it between slices also tolerates; see drop).
 */
function push(map: Map<string, Edge[]>, k: string, edge: Edge): void {
  const list = map.get(k);
  if (!list) map.set(k, [edge]);
  else if (list.length < SMALL_LIST) map.set(k, [...list, edge]);
  else list.push(edge);
}

/**
 * Replaces the list rather than editing it: a snapshot may be iterating the old list between
 * slices, and an in-place removal would make that iterator skip the next edge.
 */
function drop(map: Map<string, Edge[]>, k: string, match: (e: Edge) => boolean): void {
  const list = map.get(k);
  if (!list) return;
  const kept = list.filter((e) => !match(e));
  if (kept.length === 0) map.delete(k);
  else map.set(k, kept);
}
