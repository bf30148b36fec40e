/**
 * @module recall/fusion — combines ranked lists by weighted reciprocal rank fusion (RRF), which reads
 * only ranks, so lists whose scores live on different scales (cosine, BM25, recency, graph depth)
 * combine without calibration.
 */

/** The customary k (Cormack, Clarke & Büttcher 2009). */
export const RRF_K = 60;

export interface RankedList {
  weight: number;
  ids: readonly string[];
}

/**
 * Fused score of every id in any list: `fused(d) = Σ_lists weight · 1 / (k + rank_list(d))` (rank
 * from 1; a list without `d` adds no term), so a list contributes at most weight / (k + 1) to any id.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], k = RRF_K): Map<string, number> {
  const fused = new Map<string, number>();
  for (const { weight, ids } of lists) {
    ids.forEach((id, i) => {
      fused.set(id, (fused.get(id) ?? 0) + weight / (k + i + 1));
    });
  }
  return fused;
}
