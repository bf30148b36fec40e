/**
 * @module recall/scoring — the composite score:
 *   score = w_relevance·relevance + w_recency·recency + w_importance·importance + w_reinforcement·reinforcement
 * (not normalised: weights 1/0/0/0 give score = relevance), with
 *   recency = max(0, 1 − age/max_age), age from created_at;
 *   reinforcement = min(1, log2(1 + access_count) / log2(1 + cap)).
 */
import type { MemoryRecord } from '../model/memory.ts';
import type { ScoringWeights } from './types.ts';

export function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

export function recency(m: Pick<MemoryRecord, 'createdAt'>, nowUs: number, maxAgeUs: number): number {
  return Math.max(0, 1 - Math.max(0, nowUs - m.createdAt) / maxAgeUs);
}

export function reinforcement(m: Pick<MemoryRecord, 'accessCount'>, cap: number): number {
  return Math.min(1, Math.log2(1 + m.accessCount) / Math.log2(1 + cap));
}

export function compositeScore(m: MemoryRecord, relevance: number, w: ScoringWeights, nowUs: number): number {
  return (
    w.w_relevance * relevance +
    w.w_recency * recency(m, nowUs, w.max_age_us) +
    w.w_importance * m.importance +
    w.w_reinforcement * reinforcement(m, w.reinforcement_cap)
  );
}
