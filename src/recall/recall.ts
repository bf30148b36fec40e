/**
 * @module recall/recall — runs the requested strategies over a `RecallSource` and merges their
 * lists into one answer in which the cue leads (similarity's results first, the other strategies'
 * after them); a memory found by several keeps every strategy's detail, and one failing strategy
 * becomes a `strategy_errors` entry.
 */
import type { MemoryRecord } from '../model/memory.ts';
import { timeCueOf } from './dates.ts';
import { reciprocalRankFusion, type RankedList } from './fusion.ts';
import { clamp01, compositeScore } from './scoring.ts';
import {
  analogical,
  causal,
  similarity,
  StrategyFailure,
  temporal,
  type Candidate,
  type SimilarityQuery,
} from './strategies.ts';
import type {
  RecallInput,
  RecallOutput,
  RecallSource,
  StrategyDetail,
  StrategyError,
  StrategySpec,
} from './types.ts';
import { dot } from './vector.ts';

export interface Merged {
  memory: MemoryRecord;
  score: number;
  relevance: number;
  details: StrategyDetail[];
}

/**
 * Runs `input.strategies` and merges their lists. Each strategy's list is in the order that strategy
 * alone would answer (newest first for temporal, composite score for the others). Similarity's
 * results come first, in similarity's own order: asking for more strategies never pushes out, or
 * reorders, what similarity found for the cue. The memories only the other strategies found follow,
 * ordered by weighted reciprocal rank fusion of their lists (recall/fusion.ts): analogical, causal
 * and a temporal list with a time range weigh 1; a temporal list without one weighs 0.5, since
 * "newest first" says nothing about the cue. So a memory two strategies agree on comes before one
 * that only one of them found.
 */
export function runRecall(
  src: RecallSource,
  input: RecallInput,
  nowUs: number,
): { hits: Merged[]; errors: StrategyError[] } {
  const query: SimilarityQuery = {
    vector: input.cue,
    text: input.cueText,
    mode: input.similarityMode,
    // Only hybrid similarity reads the time a cue names; other recalls skip parsing it.
    time:
      input.similarityMode === 'hybrid' && input.strategies.some((s) => s.strategy === 'similarity')
        ? timeCueOf(input.cueText, nowUs)
        : null,
  };
  const byId = new Map<string, Merged>();
  const errors: StrategyError[] = [];
  const lead = new Map<string, number>();
  const others: RankedList[] = [];
  for (const spec of input.strategies) {
    let candidates: Candidate[];
    try {
      candidates = runStrategy(src, input, query, spec);
    } catch (err) {
      if (!(err instanceof StrategyFailure)) throw err;
      errors.push({ strategy: spec.strategy, message: err.message });
      continue;
    }
    const merged = candidates.map((c) => addCandidate(byId, c, input, nowUs));
    if (spec.strategy !== 'temporal') merged.sort(byScore);
    const ids = merged.map((m) => m.memory.id);
    if (spec.strategy === 'similarity')
      ids.forEach((id, i) => {
        if (!lead.has(id)) lead.set(id, i);
      });
    else
      others.push({
        weight: spec.strategy === 'temporal' && spec.timeRange === null ? 0.5 : 1,
        ids,
      });
  }
  const fused = reciprocalRankFusion(others);
  const hits = [...byId.values()];
  const rankOf = (m: Merged): number => lead.get(m.memory.id) ?? lead.size;
  hits.sort(
    (a, b) =>
      rankOf(a) - rankOf(b) ||
      (fused.get(b.memory.id) ?? 0) - (fused.get(a.memory.id) ?? 0) ||
      byScore(a, b),
  );
  return { hits, errors };
}

function runStrategy(
  src: RecallSource,
  input: RecallInput,
  query: SimilarityQuery,
  spec: StrategySpec,
): Candidate[] {
  switch (spec.strategy) {
    case 'similarity':
      return similarity(src, query, spec);
    case 'temporal':
      return temporal(src, spec);
    case 'causal':
      return causal(src, input.cue, spec);
    case 'analogical':
      return analogical(src, input.cue, input.cueContext, spec);
  }
}

/**
 * Adds a strategy's candidate to the merged set and returns its entry. Relevance is the similarity
 * relevance when similarity found the memory (hybrid: the fused relevance), else the cosine of cue
 * and memory.
 */
export function addCandidate(
  byId: Map<string, Merged>,
  c: Candidate,
  input: Pick<RecallInput, 'cue' | 'weights'>,
  nowUs: number,
): Merged {
  const found = byId.get(c.memory.id);
  const own = c.detail.strategy === 'similarity' ? c.detail.relevance : null;
  if (found) {
    found.details.push(c.detail);
    if (own !== null) {
      found.relevance = own;
      found.score = compositeScore(c.memory, own, input.weights, nowUs);
    }
    return found;
  }
  const relevance = own ?? clamp01(dot(input.cue, c.memory.embedding));
  const entry: Merged = {
    memory: c.memory,
    relevance,
    score: compositeScore(c.memory, relevance, input.weights, nowUs),
    details: [c.detail],
  };
  byId.set(c.memory.id, entry);
  return entry;
}

/** Best score first; equal scores keep the strategy's own order (the sorts are stable). */
function byScore(a: Merged, b: Merged): number {
  return b.score - a.score;
}

export type { RecallOutput };
