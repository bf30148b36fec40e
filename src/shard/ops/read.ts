/** @module shard/ops/read — get, batch get, entities, edges, counts and insights (the list: ops/list). */
import type { Edge } from '../../model/edge.ts';
import type { MemoryRecord, MemoryView } from '../../model/memory.ts';
import { requireMemory, view, type OpContext } from './context.ts';

export function get(
  ctx: OpContext,
  ws: string,
  input: { id: string; withEmbedding: boolean },
): MemoryView {
  return view(requireMemory(ctx.state.workspaces.get(ws), input.id), input.withEmbedding);
}

export function batchGet(
  ctx: OpContext,
  ws: string,
  input: { ids: string[]; withEmbedding: boolean },
): MemoryView[] {
  const w = ctx.state.workspaces.get(ws);
  const out: MemoryView[] = [];
  for (const id of input.ids) {
    const m = w?.memories.get(id);
    if (m) out.push(view(m, input.withEmbedding));
  }
  return out;
}

export function entities(ctx: OpContext, ws: string): string[] {
  const w = ctx.state.workspaces.get(ws);
  if (!w) return [];
  const out: string[] = [];
  for (const [entity, ids] of w.byEntity) {
    for (const id of ids.after(null)) {
      if (w.memories.get(id)?.supersededBy === null) {
        out.push(entity);
        break;
      }
    }
  }
  return out.sort();
}

export function edges(
  ctx: OpContext,
  ws: string,
  input: { id: string },
): { outgoing: Edge[]; incoming: Edge[] } {
  const w = ctx.state.workspaces.get(ws);
  requireMemory(w, input.id);
  return {
    outgoing: [...(w?.graph.outgoing(input.id) ?? [])],
    incoming: [...(w?.graph.incoming(input.id) ?? [])],
  };
}

export function count(ctx: OpContext, ws: string): number {
  return ctx.state.workspaces.get(ws)?.liveCount() ?? 0;
}

/** Live insights, most confident first (ties: newest first). */
export function insights(
  ctx: OpContext,
  ws: string,
  input: {
    entityId: string | null;
    minConfidence: number;
    maxResults: number;
    withEmbedding: boolean;
  },
): MemoryView[] {
  const w = ctx.state.workspaces.get(ws);
  const ids = input.entityId === null ? w?.order : w?.byEntity.get(input.entityId);
  if (!w || !ids) return [];
  const found: MemoryRecord[] = [];
  for (const id of ids.newestFirst()) {
    const m = w.memories.get(id);
    if (m?.kind === 'insight' && m.supersededBy === null && confidenceOf(m) >= input.minConfidence)
      found.push(m);
  }
  found.sort((a, b) => confidenceOf(b) - confidenceOf(a));
  return found.slice(0, input.maxResults).map((m) => view(m, input.withEmbedding));
}

function confidenceOf(m: MemoryRecord): number {
  const c = m.context['confidence'];
  return typeof c === 'number' ? c : 0;
}
