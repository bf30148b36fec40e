/**
 * @module recall/scoring — the composite score:
 *   score = w_relevance·relevance + w_recency·recency + w_importance·importance + w_reinforcement·reinforcement
 * (not normalised: weights 1/0/0/0 give score = relevance), with
 *   recency = max(0, 1 − age/max_age), age from occurred_at (event time: a memory of an old event
 *   written today is not recent);
 *   reinforcement = min(1, log2(1 + access_count) / log2(1 + cap)).
 * Always a finite number: a cap so small that 1 + cap rounds to 1 counts any access as full
 * reinforcement (the limit as the cap goes to 0) and none as 0, and weights large enough to
 * overflow the sum give the largest double, so a score never goes out as JSON `null`.
 */
import type { MemoryRecord } from '../model/memory.ts';
import type { ScoringWeights } from './types.ts';

export function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

export function recency(
  m: Pick<MemoryRecord, 'occurredAt'>,
  nowUs: number,
  maxAgeUs: number,
): number {
  return Math.max(0, 1 - Math.max(0, nowUs - m.occurredAt) / maxAgeUs);
}

export function reinforcement(m: Pick<MemoryRecord, 'accessCount'>, cap: number): number {
  const scale = Math.log2(1 + cap);
  if (!(scale > 0)) return m.accessCount > 0 ? 1 : 0;
  return Math.min(1, Math.log2(1 + m.accessCount) / scale);
}

export function compositeScore(
  m: MemoryRecord,
  relevance: number,
  w: ScoringWeights,
  nowUs: number,
): number {
  const score =
    w.w_relevance * relevance +
    w.w_recency * recency(m, nowUs, w.max_age_us) +
    w.w_importance * m.importance +
    w.w_reinforcement * reinforcement(m, w.reinforcement_cap);
  return score === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : score;
}
