/**
 * @module analysis/contradiction-weights — the learned contradiction decision's weights (FEATURES
 * order, analysis/contradiction-features), bias, threshold, and the features' means over the
 * training examples (for naming the feature that decided). Written by
 * `node --import tsx native-bench/fit-contradiction.ts` from SICK's training split with the cosines of
 * bge-small-en-v1.5 (the `cosine` feature; refit for another model); do not edit by hand.
 */
export const WEIGHTS: readonly number[] = [
  2.522775, -0.045895, 1.593142, 2.474654, 0.943876, -0.735753, -1.341165, 1.071319, -1.962675,
  1.745728, 1.456084, 0.154212, 1.910146, 0.876518, 0.73762, -1.831126, 0.142224, 0.248974,
  0.627519,
];
export const BIAS = -6.64434;
export const THRESHOLD = 0.485501;
export const MEANS: readonly number[] = [
  0.08065, 0.000325, 0.035447, 0.050745, 0.054466, 0.038049, 0.043252, 0.661064, 0.792676, 0.576911,
  0.054634, 0.051707, 0.76735, 0.137261, 0.086179, 0.044336, 0.202602, 0.014634, 0.311545,
];
