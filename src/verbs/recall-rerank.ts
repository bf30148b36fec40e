/**
 * @module verbs/recall-rerank — the reranker stage of a recall, when the server runs one: the
 * shard is asked for at least FLASHBULB_RERANK_CANDIDATES similarity results, their texts go with
 * the cue to the cross-encoder's pool (off the router thread), and the answer is rebuilt from its
 * scores (recall/rerank); a late, busy or failed model leaves the unreranked order, logged once a
 * minute at most and counted in `flashbulb_rerank_total`.
 */
import type { RecallHit } from '../recall/types.ts';
import { applyRerank, rerankCandidates, type RerankPlan } from '../recall/rerank.ts';
import type { Reranker } from '../embedding/reranker.ts';

const WARN_EVERY_MS = 60_000;
let lastWarning = 0;

export async function rerankHits(
  reranker: Reranker,
  cue: string,
  hits: readonly RecallHit[],
  plan: RerankPlan,
  wRelevance: number,
): Promise<RecallHit[]> {
  const candidates = rerankCandidates(hits, plan);
  if (candidates.length < 2) return applyRerank(hits, plan, null, wRelevance);
  const r = await reranker.score(
    cue,
    candidates.map((h) => h.memory.content),
  );
  if (r.outcome !== 'reranked') {
    const now = Date.now();
    if (now - lastWarning >= WARN_EVERY_MS) {
      lastWarning = now;
      process.stderr.write(`flashbulb: recall answered unreranked: ${r.message}\n`);
    }
    return applyRerank(hits, plan, null, wRelevance);
  }
  return applyRerank(hits, plan, r.scores, wRelevance);
}
