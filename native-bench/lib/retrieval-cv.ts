/**
 * @module native-bench/lib/retrieval-cv — leave-one-conversation-out figures for bench:retrieval.
 *
 * Fold i holds conversation i out. A configuration with nothing to fit scores on the held-out
 * conversation what it scores there; `chooseOnOthers` picks, per fold, the configuration that did
 * best on the other conversations and scores it on the held-out one (the honest figure for a
 * choice among several). Mean and spread are over folds (each conversation weighs the same).
 */

/** Summed recall@k (in KS order) and the question count, per conversation. */
export type PerConversation = Map<number, { n: number; at: number[] }>;

export interface FoldSummary {
  /** Held-out recall@k per fold (conversation index → value per k). */
  folds: Array<{ heldOut: number; chosen: string; at: number[] }>;
  mean: number[];
  sd: number[];
  min: number[];
  max: number[];
}

const recallOf = (p: PerConversation, conv: number, i: number): number => {
  const s = p.get(conv);
  return s && s.n > 0 ? (s.at[i] ?? 0) / s.n : 0;
};

/**
 * For each held-out conversation: the configuration (of `candidates`) with the best mean recall at
 * `pickIndex` over the other conversations, and its held-out figures. One candidate: no choice.
 */
export function chooseOnOthers(
  candidates: ReadonlyArray<[string, PerConversation]>,
  convs: readonly number[],
  ks: number,
  pickIndex: number,
): FoldSummary {
  const folds = convs.map((heldOut) => {
    const others = convs.filter((c) => c !== heldOut);
    let best = candidates[0] as [string, PerConversation];
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const cand of candidates) {
      const score =
        others.reduce((s, c) => s + recallOf(cand[1], c, pickIndex), 0) /
        Math.max(1, others.length);
      if (score > bestScore) [best, bestScore] = [cand, score];
    }
    return {
      heldOut,
      chosen: best[0],
      at: Array.from({ length: ks }, (_, i) => recallOf(best[1], heldOut, i)),
    };
  });
  const col = (i: number): number[] => folds.map((f) => f.at[i] ?? 0);
  const idx = Array.from({ length: ks }, (_, i) => i);
  const mean = idx.map((i) => avg(col(i)));
  return {
    folds,
    mean,
    sd: idx.map((i) => Math.sqrt(avg(col(i).map((x) => (x - (mean[i] ?? 0)) ** 2)))),
    min: idx.map((i) => Math.min(...col(i))),
    max: idx.map((i) => Math.max(...col(i))),
  };
}

function avg(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}
