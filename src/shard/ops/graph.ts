/**
 * @module shard/ops/graph — breadth-first neighbourhood of a memory. `nodes` = centre + reached
 * memories; `edges` = edges (of the allowed types) with both ends in `nodes`; `truncated` is true
 * exactly when a reachable node within `depth` was left out because `max_nodes` was reached.
 */
import type { Edge, EdgeType } from '../../model/edge.ts';
import type { MemoryView } from '../../model/memory.ts';
import type { GraphInput } from '../../protocol/shard.ts';
import { requireHolder, view, type OpContext } from './context.ts';

export function graph(
  ctx: OpContext,
  ws: string,
  input: GraphInput,
): { nodes: MemoryView[]; edges: Edge[]; truncated: boolean } {
  const { w, m: center } = requireHolder(ctx.state.workspaces.get(ws), input.centerId);
  const g = w.graph;
  const allowed = input.edgeTypes ? new Set<EdgeType>(input.edgeTypes) : null;
  const pass = (e: Edge): boolean => allowed === null || allowed.has(e.edge_type);
  const step = (id: string): string[] => {
    const out: string[] = [];
    if (input.direction !== 'in')
      for (const e of g.outgoing(id)) if (pass(e)) out.push(e.target_id);
    if (input.direction !== 'out')
      for (const e of g.incoming(id)) if (pass(e)) out.push(e.source_id);
    return out;
  };
  const seen = new Set<string>([center.id]);
  let frontier = [center.id];
  let truncated = false;
  for (let depth = 1; depth <= input.depth && frontier.length > 0 && !truncated; depth++) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const other of step(id)) {
        if (seen.has(other) || !w.memories.has(other)) continue;
        if (seen.size === input.maxNodes) {
          truncated = true;
          break;
        }
        seen.add(other);
        next.push(other);
      }
      if (truncated) break;
    }
    frontier = next;
  }
  const edges: Edge[] = [];
  for (const id of seen)
    for (const e of g.outgoing(id)) if (pass(e) && seen.has(e.target_id)) edges.push(e);
  const nodes = [...seen].flatMap((id) => {
    const m = w.memories.get(id);
    return m ? [view(m)] : [];
  });
  return { nodes, edges, truncated };
}
