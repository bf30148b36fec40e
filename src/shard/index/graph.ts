/**
 * @module shard/index/graph — the typed edge graph of one workspace in adjacency form, indexed in
 * both directions. At most one edge per (source, target, type); writing it again replaces it.
 */
import type { Edge, EdgeType } from '../../model/edge.ts';

export class Graph {
  readonly #out = new Map<string, Edge[]>();
  readonly #in = new Map<string, Edge[]>();
  #count = 0;

  get edgeCount(): number {
    return this.#count;
  }

  put(edge: Edge): void {
    this.remove(edge.source_id, edge.target_id, edge.edge_type);
    push(this.#out, edge.source_id, edge);
    push(this.#in, edge.target_id, edge);
    this.#count += 1;
  }

  remove(source: string, target: string, type: EdgeType): boolean {
    const removed = drop(this.#out, source, (e) => e.target_id === target && e.edge_type === type);
    drop(this.#in, target, (e) => e.source_id === source && e.edge_type === type);
    if (removed) this.#count -= 1;
    return removed;
  }

  outgoing(id: string): readonly Edge[] {
    return this.#out.get(id) ?? [];
  }

  incoming(id: string): readonly Edge[] {
    return this.#in.get(id) ?? [];
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

function push(map: Map<string, Edge[]>, key: string, edge: Edge): void {
  const list = map.get(key);
  if (list) list.push(edge);
  else map.set(key, [edge]);
}

function drop(map: Map<string, Edge[]>, key: string, match: (e: Edge) => boolean): boolean {
  const list = map.get(key);
  if (!list) return false;
  const at = list.findIndex(match);
  if (at < 0) return false;
  list.splice(at, 1);
  if (list.length === 0) map.delete(key);
  return true;
}
