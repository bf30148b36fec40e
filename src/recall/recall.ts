/**
 * @module recall/recall — runs the requested strategies, merges their candidates by memory id
 * (details concatenated), scores them, and orders them: by composite score, or newest first when
 * temporal is the only strategy. One failing strategy becomes a `strategy_errors` entry.
 */
import type { MemoryRecord } from '../model/memory.ts';
import { clamp01, compositeScore } from './scoring.ts';
import { analogical, causal, similarity, StrategyFailure, temporal, type Candidate } from './strategies.ts';
import type { RecallInput, RecallOutput, RecallSource, StrategyDetail, StrategyError, StrategySpec } from './types.ts';
import { dot } from './vector.ts';

export interface Merged {
  memory: MemoryRecord;
  score: number;
  relevance: number;
  details: StrategyDetail[];
}

export function runRecall(src: RecallSource, input: RecallInput, nowUs: number): { hits: Merged[]; errors: StrategyError[] } {
  const byId = new Map<string, Merged>();
  const errors: StrategyError[] = [];
  for (const spec of input.strategies) {
    let candidates: Candidate[];
    try {
      candidates = runStrategy(src, input, spec);
    } catch (err) {
      if (!(err instanceof StrategyFailure)) throw err;
      errors.push({ strategy: spec.strategy, message: err.message });
      continue;
    }
    for (const c of candidates) addCandidate(byId, c, input, nowUs);
  }
  const hits = [...byId.values()];
  const temporalOnly = input.strategies.every((s) => s.strategy === 'temporal');
  hits.sort(temporalOnly ? (a, b) => b.memory.createdAt - a.memory.createdAt || cmp(b.memory.id, a.memory.id) : (a, b) => b.score - a.score);
  return { hits, errors };
}

function runStrategy(src: RecallSource, input: RecallInput, spec: StrategySpec): Candidate[] {
  switch (spec.strategy) {
    case 'similarity':
      return similarity(src, input.cue, spec);
    case 'temporal':
      return temporal(src, spec);
    case 'causal':
      return causal(src, input.cue, spec);
    case 'analogical':
      return analogical(src, input.cue, input.cueContext, spec);
  }
}

export function addCandidate(byId: Map<string, Merged>, c: Candidate, input: Pick<RecallInput, 'cue' | 'weights'>, nowUs: number): void {
  const found = byId.get(c.memory.id);
  if (found) {
    found.details.push(c.detail);
    return;
  }
  const relevance = clamp01(dot(input.cue, c.memory.embedding));
  byId.set(c.memory.id, {
    memory: c.memory,
    relevance,
    score: compositeScore(c.memory, relevance, input.weights, nowUs),
    details: [c.detail],
  });
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type { RecallOutput };
