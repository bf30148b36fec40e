/**
 * @module shard/ops/reflect — the shard's half of reflection: gathering episodes in scope (their
 * vectors go to the router's reflection worker) and writing the resulting insights, new or
 * refreshed in place, with insight_from edges to their sources.
 */
import type { MemoryRecord } from '../../model/memory.ts';
import type { LiveRecord } from '../store/records.ts';
import type { GatherInput, GatherOutput, InsightWrite } from '../../protocol/reflection.ts';
import { newMemory, type OpContext } from './context.ts';
import { rewrittenInsight } from './insight-sources.ts';

export function reflectGather(ctx: OpContext, ws: string, input: GatherInput): GatherOutput {
  const w = ctx.state.workspaces.get(ws);
  // Latest event first: `since` and the cap on episodes are about when things happened.
  const ids = input.entityId === null ? w?.events : w?.eventsByEntity.get(input.entityId);
  const episodes: MemoryRecord[] = [];
  const insights: GatherOutput['insights'] = [];
  if (w && ids) {
    for (const id of ids.newestFirst()) {
      const m = w.memories.get(id);
      if (!m || m.supersededBy !== null) continue;
      if (m.kind === 'insight') insights.push({ id: m.id, sources: m.sourceMemoryIds ?? [] });
      // Revised episodes are still the agent's experience; documents and propositions are not.
      else if (
        (m.kind === 'episode' || m.kind === 'revision') &&
        episodes.length < input.max &&
        (input.sinceUs === null || m.occurredAt >= input.sinceUs)
      )
        episodes.push(m);
    }
  }
  const dim = episodes[0]?.embedding.length ?? 0;
  const vectors = new Float32Array(episodes.length * dim);
  episodes.forEach((m, i) => {
    vectors.set(m.embedding, i * dim);
  });
  return {
    ids: episodes.map((m) => m.id),
    texts: episodes.map((m) => m.content),
    meta: episodes.map((m) => ({
      importance: m.importance,
      entityId: m.entityId,
      createdAt: m.createdAt,
    })),
    vectors,
    dim,
    insights,
  };
}

export async function writeInsights(
  ctx: OpContext,
  ws: string,
  input: { insights: InsightWrite[] },
): Promise<{ created: string[]; refreshed: string[] }> {
  const w = ctx.state.workspace(ws);
  const now = ctx.nowUs();
  const records: LiveRecord[] = [];
  const created: string[] = [];
  const refreshed: string[] = [];
  for (const ins of input.insights) {
    // Sources forgotten since they were gathered are dropped: the insight is written again from
    // the rest (its text may quote the forgotten ones), or not at all when none remain.
    const sources = ins.sources.filter((id) => w.memories.has(id));
    if (sources.length === 0) continue;
    const old = ins.refreshId === null ? undefined : w.memories.get(ins.refreshId);
    const drafted: MemoryRecord = old
      ? {
          ...old,
          content: ins.content,
          context: ins.context,
          embedding: ins.embedding,
          sourceMemoryIds: sources,
          updatedAt: now,
          logicalClock: old.logicalClock + 1,
        }
      : newMemory(ctx, now, {
          content: ins.content,
          importance: ins.importance,
          context: ins.context,
          entityId: ins.entityId,
          kind: 'insight',
          embedding: ins.embedding,
          sourceMemoryIds: sources,
        });
    const m =
      sources.length === ins.sources.length ? drafted : rewrittenInsight(w, drafted, sources, now);
    records.push({ t: 'put', ws, m });
    const keep = new Set(sources);
    for (const e of w.graph.outgoing(m.id)) {
      if (e.edge_type === 'insight_from' && !keep.has(e.target_id))
        records.push({ t: 'unedge', ws, s: m.id, d: e.target_id, y: 'insight_from' });
    }
    for (const src of sources) {
      records.push({
        t: 'edge',
        ws,
        e: {
          source_id: m.id,
          target_id: src,
          edge_type: 'insight_from',
          confidence: ins.confidence,
          timestamp_us: now,
        },
      });
    }
    (old ? refreshed : created).push(m.id);
  }
  await ctx.commit(records);
  return { created, refreshed };
}
