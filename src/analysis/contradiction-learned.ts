/**
 * @module analysis/contradiction-learned — a logistic regression over the pair features of
 * analysis/contradiction-features, asked only when no hand rule found a disagreement. Its weights
 * and threshold (analysis/contradiction-weights) are fitted on SICK's training split by
 * native-bench/fit-contradiction.ts; the threshold keeps the rules' and this decision's false alarms
 * together at most 1 per 100 entailing and per 100 neutral training pairs.
 */
import { FEATURES, type FeatureName } from './contradiction-features.ts';
import { BIAS, MEANS, THRESHOLD, WEIGHTS } from './contradiction-weights.ts';

export interface LearnedDecision {
  /** The model's probability that the pair contradicts. */
  p: number;
  /** The feature that pushed the decision most towards contradiction, compared with an average training pair. */
  top: FeatureName;
}

/** The probability of a contradiction for `features` (FEATURES order) with the given weights. */
export function probability(
  features: readonly number[],
  weights: readonly number[] = WEIGHTS,
  bias: number = BIAS,
): number {
  let z = bias;
  features.forEach((x, i) => {
    z += x * (weights[i] ?? 0);
  });
  return 1 / (1 + Math.exp(-z));
}

/** The decision when it reaches the fitted threshold, or null. */
export function learnedDecision(features: readonly number[]): LearnedDecision | null {
  const p = probability(features);
  if (p < THRESHOLD) return null;
  const push = (i: number): number => ((features[i] ?? 0) - (MEANS[i] ?? 0)) * (WEIGHTS[i] ?? 0);
  let best = 0;
  features.forEach((_, i) => {
    if (push(i) > push(best)) best = i;
  });
  return { p, top: FEATURES[best] ?? FEATURES[0] };
}
