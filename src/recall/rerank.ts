/**
 * @module recall/rerank — the pure half of the optional reranker stage: which of a recall's hits a
 * cross-encoder rescores (similarity's best `candidates`, which lead the merged answer), and the
 * answer rebuilt from its scores: a rescored hit's relevance becomes the sigmoid of its logit and
 * its score the composite score with that relevance (the caller's weights still apply), the
 * rescored hits are ordered by it, and similarity's part is cut back to the `top_k` asked for;
 * the hits only other strategies found follow, in their order. Without scores (the model was late,
 * busy or failed) the same cut gives the unreranked order.
 */
import type { RecallHit, StrategySpec } from './types.ts';

export interface RerankPlan {
  /** Similarity results the caller asked for (the largest top_k of its similarity strategies). */
  topK: number;
  /** How many of similarity's best are rescored. */
  candidates: number;
}

/**
 * The strategies with similarity's top_k raised to at least `candidates`, and what to cut back to;
 * null when no strategy is similarity (then nothing is reranked).
 */
export function widenForRerank(
  strategies: readonly StrategySpec[],
  candidates: number,
): { strategies: StrategySpec[]; plan: RerankPlan } | null {
  const sims = strategies.filter((s) => s.strategy === 'similarity');
  if (sims.length === 0) return null;
  const topK = Math.max(...sims.map((s) => s.topK));
  return {
    strategies: strategies.map((s) =>
      s.strategy === 'similarity' ? { ...s, topK: Math.max(s.topK, candidates) } : s,
    ),
    plan: { topK, candidates },
  };
}

function foundBySimilarity(h: RecallHit): boolean {
  return h.strategy_details.some((d) => d.strategy === 'similarity');
}

/** The hits to rescore: the first `candidates` of similarity's (they lead the merged answer). */
export function rerankCandidates(hits: readonly RecallHit[], plan: RerankPlan): RecallHit[] {
  return hits.filter(foundBySimilarity).slice(0, plan.candidates);
}

export function sigmoid(logit: number): number {
  return 1 / (1 + Math.exp(-logit));
}

/**
 * The answer with `logits` (one per hit of `rerankCandidates`, in its order; null: none came)
 * applied: score' = score + w_relevance · (relevance' − relevance), which is the composite score
 * recomputed with relevance' since every other term stays. Ties keep the first order.
 */
export function applyRerank(
  hits: readonly RecallHit[],
  plan: RerankPlan,
  logits: ArrayLike<number> | null,
  wRelevance: number,
): RecallHit[] {
  const lead = hits.filter(foundBySimilarity);
  const rest = hits.filter((h) => !foundBySimilarity(h));
  let ordered = lead;
  if (logits !== null) {
    const n = Math.min(plan.candidates, lead.length, logits.length);
    const rescored = lead.slice(0, n).map((h, i) => {
      const relevance = sigmoid(logits[i] ?? 0);
      const score = h.score + wRelevance * (relevance - h.relevance);
      return { hit: { ...h, relevance, score: Number.isFinite(score) ? score : h.score }, i };
    });
    rescored.sort((a, b) => b.hit.score - a.hit.score || a.i - b.i);
    ordered = [...rescored.map((r) => r.hit), ...lead.slice(n)];
  }
  const kept = ordered.slice(0, plan.topK);
  // Hits cut from similarity's part that another strategy found too keep their place among its.
  const dropped = ordered
    .slice(plan.topK)
    .filter((h) => h.strategy_details.some((d) => d.strategy !== 'similarity'));
  return [...kept, ...dropped, ...rest];
}
