/**
 * @module recall/fusion — combining ranked lists: weighted reciprocal rank fusion (RRF).
 *
 *   fused(d) = Σ_lists weight · 1 / (k + rank_list(d))      (rank from 1; absent → no term)
 *
 * with the customary k = 60 (Cormack, Clarke & Büttcher 2009). RRF reads only ranks, so lists
 * whose scores live on different scales (cosine, BM25, recency, graph depth) combine without
 * calibration, and a list contributes at most weight / (k + 1) to any memory.
 */

export const RRF_K = 60;

export interface RankedList {
  weight: number;
  ids: readonly string[];
}

/** Fused score of every id in any list. */
export function reciprocalRankFusion(lists: readonly RankedList[], k = RRF_K): Map<string, number> {
  const fused = new Map<string, number>();
  for (const { weight, ids } of lists) {
    ids.forEach((id, i) => fused.set(id, (fused.get(id) ?? 0) + weight / (k + i + 1)));
  }
  return fused;
}
