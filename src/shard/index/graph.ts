/**
 * @module shard/index/graph — the typed edge graph of one workspace in adjacency form, indexed in
 * both directions. At most one edge per (source, target, type); writing it again replaces it.
 */
import type { Edge, EdgeType } from '../../model/edge.ts';

export class Graph {
  readonly #out = new Map<string, Edge[]>();
  readonly #in = new Map<string, Edge[]>();
  /** Keys of the edges present, so writing a new edge needs no scan of a hub's list. */
  readonly #keys = new Set<string>();

  get edgeCount(): number {
    return this.#keys.size;
  }

  put(edge: Edge): void {
    this.remove(edge.source_id, edge.target_id, edge.edge_type);
    push(this.#out, edge.source_id, edge);
    push(this.#in, edge.target_id, edge);
    this.#keys.add(key(edge.source_id, edge.target_id, edge.edge_type));
  }

  remove(source: string, target: string, type: EdgeType): boolean {
    if (!this.#keys.delete(key(source, target, type))) return false;
    drop(this.#out, source, (e) => e.target_id === target && e.edge_type === type);
    drop(this.#in, target, (e) => e.source_id === source && e.edge_type === type);
    return true;
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

function push(map: Map<string, Edge[]>, k: string, edge: Edge): void {
  const list = map.get(k);
  if (list) list.push(edge);
  else map.set(k, [edge]);
}

function key(source: string, target: string, type: EdgeType): string {
  return `${source}|${target}|${type}`;
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
