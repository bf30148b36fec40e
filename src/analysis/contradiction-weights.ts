/**
 * @module analysis/contradiction-weights — the learned contradiction decision's weights (FEATURES
 * order, analysis/contradiction-features), bias and threshold. Written by
 * `node --import tsx native-bench/fit-contradiction.ts` from SICK's training split; do not edit by hand.
 */
export const WEIGHTS: readonly number[] = [1.391780, -0.048590, 1.683191, 3.466880, 1.377694, -0.631312, -1.319381, 0.123523, -3.095347, 1.568001, 1.420597, 0.398814, 4.852343, 0.855575, 0.799869, -0.994934, 0.141744, 0.238113, 0.646992];
export const BIAS = -7.279633;
export const THRESHOLD = 0.537400;
