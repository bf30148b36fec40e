/**
 * @module analysis/contradiction-weights — the learned contradiction decision's weights (FEATURES
 * order, analysis/contradiction-features), bias, threshold, and the features' means over the
 * training examples (for naming the feature that decided). Written by
 * `node --import tsx native-bench/fit-contradiction.ts` from SICK's training split; do not edit by hand.
 */
export const WEIGHTS: readonly number[] = [1.391780, -0.048590, 1.683191, 3.466880, 1.377694, -0.631312, -1.319381, 0.123523, -3.095347, 1.568001, 1.420597, 0.398814, 4.852343, 0.855575, 0.799869, -0.994934, 0.141744, 0.238113, 0.646992];
export const BIAS = -7.279633;
export const THRESHOLD = 0.537400;
export const MEANS: readonly number[] = [0.084497, 0.000358, 0.041174, 0.054524, 0.058044, 0.042965, 0.045113, 0.694361, 0.823506, 0.598281, 0.056212, 0.045113, 0.775412, 0.129413, 0.094164, 0.044516, 0.217687, 0.016112, 0.281060];
