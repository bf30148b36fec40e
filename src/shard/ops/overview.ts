/**
 * @module shard/ops/overview — a workspace seen whole: its entities with counts and last activity,
 * its graph without a centre (the most important memories and the edges among them, or an
 * entity's memories and their neighbours), and its contradictions (confirmed pairs and candidates
 * waiting for a verdict, with both memories). Costs are in docs/architecture-notes.md.
 */
import type { Edge, EdgeType } from '../../model/edge.ts';
import type { MemoryRecord } from '../../model/memory.ts';
import type { ContradictionsOutput, EntitySummariesInput, EntitySummary, OverviewInput, OverviewOutput } from '../../protocol/shard.ts';
import { BoundedTop } from '../index/top-k.ts';
import { view, type OpContext } from './context.ts';

/** Every entity's live memories counted: O(memories with an entity), then a sort of the entities. */
export function entitySummaries(ctx: OpContext, ws: string, input: EntitySummariesInput): { entities: EntitySummary[]; total: number } {
  const w = ctx.state.workspaces.get(ws);
  if (!w) return { entities: [], total: 0 };
  const needle = input.text?.toLowerCase() ?? null;
  const out: EntitySummary[] = [];
  for (const [entityId, ids] of w.byEntity) {
    if (needle !== null && !entityId.toLowerCase().includes(needle)) continue;
    const s: EntitySummary = { entityId, memories: 0, firstAt: Infinity, lastAt: 0, kinds: {} };
    for (const id of ids.after(null)) {
      const m = w.memories.get(id);
      if (!m || m.supersededBy !== null) continue;
      s.memories += 1;
      s.firstAt = Math.min(s.firstAt, m.createdAt);
      s.lastAt = Math.max(s.lastAt, m.updatedAt, m.createdAt);
      s.kinds[m.kind] = (s.kinds[m.kind] ?? 0) + 1;
    }
    if (s.memories > 0) out.push(s);
  }
  const byName = (a: EntitySummary, b: EntitySummary): number => (a.entityId < b.entityId ? -1 : a.entityId > b.entityId ? 1 : 0);
  if (input.sort === 'name') out.sort(byName);
  else if (input.sort === 'memories') out.sort((a, b) => b.memories - a.memories || byName(a, b));
  else out.sort((a, b) => b.lastAt - a.lastAt || byName(a, b));
  return { entities: out.slice(0, input.limit), total: out.length };
}

/**
 * The graph without a centre: the `maxNodes` live memories ranked by importance, then edges (of
 * the allowed types), then newest; for an entity, its memories first and then, in the room left,
 * their direct neighbours by the same rank. Edges are those with both ends chosen. O(candidates ·
 * log maxNodes + their edges).
 */
export function graphOverview(ctx: OpContext, ws: string, input: OverviewInput): OverviewOutput {
  const w = ctx.state.workspaces.get(ws);
  const empty: OverviewOutput = { nodes: [], edges: [], totalNodes: 0, truncated: false };
  if (!w) return empty;
  const source = input.entityId === null ? w.order : w.byEntity.get(input.entityId);
  if (!source) return empty;
  const allowed = input.edgeTypes === null ? null : new Set<EdgeType>(input.edgeTypes);
  const pass = (e: Edge): boolean => allowed === null || allowed.has(e.edge_type);
  const degree = (id: string): number => {
    let n = 0;
    for (const e of w.graph.outgoing(id)) if (pass(e)) n += 1;
    for (const e of w.graph.incoming(id)) if (pass(e)) n += 1;
    return n;
  };
  const live = (m: MemoryRecord | undefined): m is MemoryRecord => m !== undefined && m.supersededBy === null && (input.kind === null || m.kind === input.kind);
  const first: MemoryRecord[] = [];
  for (const id of source.after(null)) {
    const m = w.memories.get(id);
    if (live(m)) first.push(m);
  }
  const chosen = best(first, input.maxNodes, degree);
  let total = first.length;
  if (input.entityId !== null) {
    const inside = new Set(first.map((m) => m.id));
    const around = new Map<string, MemoryRecord>();
    for (const m of first) {
      for (const e of [...w.graph.outgoing(m.id), ...w.graph.incoming(m.id)]) {
        if (!pass(e)) continue;
        const other = e.source_id === m.id ? e.target_id : e.source_id;
        const o = w.memories.get(other);
        if (!inside.has(other) && live(o)) around.set(other, o);
      }
    }
    total += around.size;
    chosen.push(...best([...around.values()], input.maxNodes - chosen.length, degree));
  }
  const ids = new Set(chosen.map((m) => m.id));
  const edges: Edge[] = [];
  for (const id of ids) for (const e of w.graph.outgoing(id)) if (pass(e) && ids.has(e.target_id)) edges.push(e);
  return { nodes: chosen.map((m) => view(m)), edges, totalNodes: total, truncated: chosen.length < total };
}

function best(ms: readonly MemoryRecord[], k: number, degree: (id: string) => number): MemoryRecord[] {
  if (k <= 0) return [];
  const deg = new Map<string, number>();
  const d = (m: MemoryRecord): number => {
    let n = deg.get(m.id);
    if (n === undefined) deg.set(m.id, (n = degree(m.id)));
    return n;
  };
  const worse = (a: number, b: number): boolean => {
    const x = ms[a] as MemoryRecord;
    const y = ms[b] as MemoryRecord;
    if (x.importance !== y.importance) return x.importance < y.importance;
    const dx = d(x);
    const dy = d(y);
    return dx !== dy ? dx < dy : x.id < y.id;
  };
  const top = new BoundedTop(k, worse);
  for (let i = 0; i < ms.length; i++) if (top.admits(i)) top.add(i);
  return top.sorted().map((i) => ms[i] as MemoryRecord);
}

/**
 * Confirmed contradictions (`contradicts` edges; one pair each, newest memory first) and pending
 * candidates (newest first), about the entity when one is given, at most `limit` of each. Confirmed:
 * a walk of the memories newest first that stops at `limit` pairs, O(memories walked + their edges);
 * pending: O(candidates).
 */
export function contradictions(ctx: OpContext, ws: string, input: { entityId: string | null; limit: number }): ContradictionsOutput {
  const w = ctx.state.workspaces.get(ws);
  if (!w) return { confirmed: [], pending: [], truncated: false };
  const source = input.entityId === null ? w.order : w.byEntity.get(input.entityId);
  const confirmed: ContradictionsOutput['confirmed'] = [];
  const seen = new Set<string>();
  let truncated = false;
  walk: for (const id of source?.newestFirst() ?? []) {
    const m = w.memories.get(id);
    if (!m) continue;
    for (const e of [...w.graph.outgoing(id), ...w.graph.incoming(id)]) {
      if (e.edge_type !== 'contradicts') continue;
      const other = e.source_id === id ? e.target_id : e.source_id;
      const key = id < other ? `${id}:${other}` : `${other}:${id}`;
      const o = w.memories.get(other);
      if (seen.has(key) || !o) continue;
      if (confirmed.length === input.limit) {
        truncated = true;
        break walk;
      }
      seen.add(key);
      confirmed.push({ a: view(m), b: view(o), confidence: e.confidence, reason: e.reason ?? null, timestampUs: e.timestamp_us });
    }
  }
  const about = (m: MemoryRecord | undefined): boolean => input.entityId === null || m?.entityId === input.entityId;
  const pending: ContradictionsOutput['pending'] = [];
  const candidates = [...w.pending.values()].sort((x, y) => y.created_at - x.created_at);
  for (const c of candidates) {
    const a = w.memories.get(c.memory_id_a);
    const b = w.memories.get(c.memory_id_b);
    if (!a || !b || !(about(a) || about(b))) continue;
    if (pending.length === input.limit) {
      truncated = true;
      break;
    }
    pending.push({ candidate: c, a: view(a), b: view(b) });
  }
  return { confirmed, pending, truncated };
}
