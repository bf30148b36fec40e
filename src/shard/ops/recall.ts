/** @module shard/ops/recall — recall and prime inside the shard that owns the workspace. */
import { addCandidate, runRecall, type Merged } from '../../recall/recall.ts';
import { similarity, temporal, type Candidate } from '../../recall/strategies.ts';
import type {
  PrimeInput,
  PrimeOutput,
  RecallHit,
  RecallInput,
  RecallOutput,
  StrategySpec,
} from '../../recall/types.ts';
import { Workspace } from '../store/workspace.ts';
import { view, type OpContext } from './context.ts';
import { recallSource } from './recall-source.ts';

export function recall(ctx: OpContext, ws: string, input: RecallInput): RecallOutput {
  const w = ctx.state.workspaces.get(ws) ?? new Workspace(ws);
  const { hits, errors } = runRecall(
    recallSource(w, input.filter ?? null),
    input,
    input.askedAtUs ?? ctx.nowUs(),
  );
  const floor = input.minRelevance ?? 0;
  const kept = floor > 0 ? hits.filter((h) => h.relevance >= floor) : hits;
  return {
    results: finish(ctx, ws, kept, input.withEmbedding, input.deferAccess ? [] : kept.slice(0, 1)),
    strategy_errors: errors,
  };
}

/**
 * Prime: half the places from the newest memories within the recency window, half from the
 * memories most similar to the cue; de-duplicated; a short half leaves its places to the other.
 */
export function prime(ctx: OpContext, ws: string, input: PrimeInput): PrimeOutput {
  const w = ctx.state.workspaces.get(ws) ?? new Workspace(ws);
  const src = recallSource(w, input.filter ?? null);
  const now = ctx.nowUs();
  const base: StrategySpec = {
    strategy: 'temporal',
    topK: input.maxMemories,
    efSearch: Math.max(50, input.maxMemories),
    entityId: input.entityId,
    timeRange: { startUs: now - input.recencyWindowUs, endUs: null },
    seedId: null,
    edgeTypes: null,
    maxDepth: 0,
    alpha: 0.5,
  };
  const recent = temporal(src, base);
  // Prime's similar half ranks by cosine, as HEBBS does (hybrid ranking is recall's).
  const floor = input.minRelevance ?? 0;
  const similar: Candidate[] = input.cue
    ? similarity(
        src,
        { vector: input.cue, text: '', mode: 'dense', time: null },
        { ...base, strategy: 'similarity', topK: input.maxMemories },
      ).filter((c) => c.detail.strategy !== 'similarity' || c.detail.relevance >= floor)
    : [];
  const { fromSimilar, fromRecent } = splitPlaces(input.maxMemories, similar, recent);
  const chosen = [...fromSimilar, ...fromRecent];
  const byId = new Map<string, Merged>();
  const cue = input.cue ?? new Float32Array(0);
  for (const c of chosen) addCandidate(byId, c, { cue, weights: input.weights }, now);
  const hits = [...byId.values()].sort((a, b) => b.score - a.score);
  return {
    results: finish(ctx, ws, hits, input.withEmbedding, hits),
    temporal_count: fromRecent.length,
    similarity_count: fromSimilar.length,
  };
}

/** Temporal gets ⌈max/2⌉ places, similarity the rest; whichever falls short leaves them to the other. */
function splitPlaces(
  max: number,
  similar: Candidate[],
  recent: Candidate[],
): { fromSimilar: Candidate[]; fromRecent: Candidate[] } {
  const fromSimilar = similar.slice(0, max - Math.ceil(max / 2));
  const taken = new Set(fromSimilar.map((c) => c.memory.id));
  const fromRecent = recent
    .filter((c) => !taken.has(c.memory.id))
    .slice(0, max - fromSimilar.length);
  for (const c of fromRecent) taken.add(c.memory.id);
  for (const c of similar.slice(fromSimilar.length)) {
    if (fromSimilar.length + fromRecent.length >= max) break;
    if (!taken.has(c.memory.id)) fromSimilar.push(c);
  }
  return { fromSimilar, fromRecent };
}

/**
 * Views of the hits; `accessed` count as accesses (logged lazily by the shard). A recall's first
 * result is the memory it answers with, and only that one is accessed: the others are listed, not
 * used, and when every listed memory was reinforced, the results of earlier, unrelated recalls
 * outranked better evidence in later ones (issue 50: R@5 −0.03 to −0.04 on the development data).
 * Prime's results are the context an agent loads: all of them are accessed.
 */
function finish(
  ctx: OpContext,
  ws: string,
  hits: Merged[],
  withEmbedding: boolean,
  accessed: readonly Merged[],
): RecallHit[] {
  const graph = ctx.state.workspaces.get(ws)?.graph;
  const out = hits.map((h): RecallHit => {
    const hit: RecallHit = {
      memory: view(h.memory, withEmbedding),
      score: h.score,
      relevance: h.relevance,
      strategy_details: h.details,
    };
    const against =
      graph
        ?.outgoing(h.memory.id)
        .filter((e) => e.edge_type === 'contradicts')
        .map((e) => e.target_id) ?? [];
    if (against.length > 0) hit.contradicted_by = against;
    return hit;
  });
  ctx.touch(
    ws,
    accessed.map((h) => h.memory),
  );
  return out;
}
