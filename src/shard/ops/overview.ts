/**
 * @module shard/ops/overview — a workspace seen whole: its entities with counts and last activity,
 * its graph without a centre (the most important memories and the edges among them, or an
 * entity's memories and their neighbours), and its contradictions (confirmed pairs and candidates
 * waiting for a verdict, with both memories). Costs are in docs/architecture-notes.md.
 */
import type { Edge, EdgeType } from '../../model/edge.ts';
import type { MemoryRecord } from '../../model/memory.ts';
import type {
  EntitySummariesInput,
  EntitySummary,
  OverviewInput,
  OverviewOutput,
} from '../../protocol/shard.ts';
import type { ContradictionsOutput } from '../../protocol/reflection.ts';
import { BoundedTop } from '../index/top-k.ts';
import { kindOfTag } from '../store/workspace.ts';
import { view, type OpContext } from './context.ts';

/** Every entity's live memories counted: O(memories with an entity), then a sort of the entities. */
export function entitySummaries(
  ctx: OpContext,
  ws: string,
  input: EntitySummariesInput,
): { entities: EntitySummary[]; total: number } {
  const w = ctx.state.workspaces.get(ws);
  if (!w) return { entities: [], total: 0 };
  const needle = input.text?.toLowerCase() ?? null;
  const out: EntitySummary[] = [];
  for (const [entityId, ids] of w.byEntity) {
    if (needle !== null && !entityId.toLowerCase().includes(needle)) continue;
    const s: EntitySummary = { entityId, memories: 0, firstAt: Infinity, lastAt: 0, kinds: {} };
    // The order's tags and times give liveness, kind and creation time; the record only the last revision.
    const { ids: list, tags, times } = ids.columns();
    for (let i = 0; i < list.length; i++) {
      const kind = kindOfTag(tags[i] as number);
      if (kind === null) continue;
      s.memories += 1;
      s.firstAt = Math.min(s.firstAt, times[i] as number);
      s.lastAt = Math.max(
        s.lastAt,
        w.memories.get(list[i] as string)?.updatedAt ?? 0,
        times[i] as number,
      );
      s.kinds[kind] = (s.kinds[kind] ?? 0) + 1;
    }
    if (s.memories > 0) out.push(s);
  }
  const byName = (a: EntitySummary, b: EntitySummary): number =>
    a.entityId < b.entityId ? -1 : a.entityId > b.entityId ? 1 : 0;
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
    if (allowed === null) return w.graph.outgoing(id).length + w.graph.incoming(id).length;
    let n = 0;
    for (const e of w.graph.outgoing(id)) if (pass(e)) n += 1;
    for (const e of w.graph.incoming(id)) if (pass(e)) n += 1;
    return n;
  };
  const live = (m: MemoryRecord | undefined): m is MemoryRecord =>
    m !== undefined && m.supersededBy === null && (input.kind === null || m.kind === input.kind);
  const first: MemoryRecord[] = [];
  const { ids: order, tags } = source.columns();
  for (let i = 0; i < order.length; i++) {
    const kind = kindOfTag(tags[i] as number);
    if (kind === null || (input.kind !== null && kind !== input.kind)) continue;
    const m = w.memories.get(order[i] as string);
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
  for (const id of ids)
    for (const e of w.graph.outgoing(id)) if (pass(e) && ids.has(e.target_id)) edges.push(e);
  return {
    nodes: chosen.map((m) => view(m)),
    edges,
    totalNodes: total,
    truncated: chosen.length < total,
  };
}

/**
 * The `k` best by importance, then edges, then id (newest), in one pass: a bounded heap that a
 * memory enters only when it beats the worst held, so most are compared once and never copied.
 */
function best(
  ms: Iterable<MemoryRecord>,
  k: number,
  degree: (id: string) => number,
): MemoryRecord[] {
  if (k <= 0) return [];
  const held: MemoryRecord[] = [];
  const keys: number[] = [];
  // Importance first; edges only break its ties (fewer than a million edges on one memory).
  const keyOf = (m: MemoryRecord): number => m.importance * 1e6 + Math.min(999_999, degree(m.id));
  const worse = (a: number, b: number): boolean =>
    (keys[a] as number) < (keys[b] as number) ||
    (keys[a] === keys[b] && (held[a] as MemoryRecord).id < (held[b] as MemoryRecord).id);
  const top = new BoundedTop(k, worse);
  for (const m of ms) {
    const key = keyOf(m);
    const w = top.worst;
    if (
      top.full &&
      w !== undefined &&
      (key < (keys[w] as number) || (key === keys[w] && m.id < (held[w] as MemoryRecord).id))
    )
      continue;
    held.push(m);
    keys.push(key);
    top.add(held.length - 1);
  }
  return top.sorted().map((i) => held[i] as MemoryRecord);
}

/**
 * Confirmed contradictions (`contradicts` edges; one pair each, newest memory first) and pending
 * candidates (newest first), about the entity when one is given, at most `limit` of each. Confirmed:
 * the memories the graph knows have such an edge, O(pairs · log pairs); pending: O(candidates).
 */
export function contradictions(
  ctx: OpContext,
  ws: string,
  input: { entityId: string | null; limit: number },
): ContradictionsOutput {
  const w = ctx.state.workspaces.get(ws);
  if (!w) return { confirmed: [], pending: [], truncated: false };
  const confirmed: ContradictionsOutput['confirmed'] = [];
  const pairs = new Map<string, { a: MemoryRecord; b: MemoryRecord; e: Edge }>();
  for (const id of w.graph.contradicting()) {
    const m = w.memories.get(id);
    if (!m) continue;
    for (const list of [w.graph.outgoing(id), w.graph.incoming(id)]) {
      for (const e of list) {
        if (e.edge_type !== 'contradicts') continue;
        const other = e.source_id === id ? e.target_id : e.source_id;
        const o = w.memories.get(other);
        if (
          !o ||
          (input.entityId !== null &&
            m.entityId !== input.entityId &&
            o.entityId !== input.entityId)
        )
          continue;
        // One pair each (both directions are usually written), its newer memory first.
        const [a, b] = m.id > o.id ? [m, o] : [o, m];
        const key = `${a.id}:${b.id}`;
        if (!pairs.has(key)) pairs.set(key, { a, b, e });
      }
    }
  }
  const newest = [...pairs.values()].sort((x, y) =>
    x.a.id < y.a.id ? 1 : x.a.id > y.a.id ? -1 : x.b.id < y.b.id ? 1 : -1,
  );
  for (const { a, b, e } of newest.slice(0, input.limit))
    confirmed.push({
      a: view(a),
      b: view(b),
      confidence: e.confidence,
      reason: e.reason ?? null,
      timestampUs: e.timestamp_us,
    });
  let truncated = newest.length > input.limit;
  const about = (m: MemoryRecord | undefined): boolean =>
    input.entityId === null || m?.entityId === input.entityId;
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
