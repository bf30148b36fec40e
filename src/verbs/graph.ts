/** @module verbs/graph — the neighbourhood of a memory in the typed edge graph. */
import { invalid } from '../errors/codes.ts';
import type { Edge } from '../model/edge.ts';
import { parseEdgeType } from '../model/edge.ts';
import type { MemoryView } from '../model/memory.ts';
import { charge, type Ctx } from './context.ts';
import { intInRange } from './recall-options.ts';
import { checkId } from './validate.ts';

export interface GraphRequest {
  center_id: string;
  depth?: number | undefined;
  edge_types?: string[] | undefined;
  max_nodes?: number | undefined;
  direction?: 'out' | 'in' | 'both' | undefined;
}

export function graph(
  ctx: Ctx,
  req: GraphRequest,
): Promise<{ nodes: MemoryView[]; edges: Edge[]; truncated: boolean }> {
  charge(ctx, 'read');
  const edgeTypes =
    req.edge_types === undefined || req.edge_types.length === 0
      ? null
      : req.edge_types.map((n, i) => {
          const t = parseEdgeType(n);
          if (t === null) throw invalid(`edge_types[${i}] '${n}' is not a known edge type`);
          return t;
        });
  return ctx.svc.shards.call(ctx.workspace, 'graph', {
    centerId: checkId('center_id', req.center_id),
    depth: intInRange('depth', req.depth, 2, 0, 5, { cap: true }),
    maxNodes: intInRange('max_nodes', req.max_nodes, 100, 1, 500, { cap: true }),
    edgeTypes,
    direction: req.direction ?? 'both',
  });
}
