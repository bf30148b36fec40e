/**
 * @module recall/gather — cues that ask for several things (a list, a count, "every time": "What
 * books has Melanie read?", "How many times has she been to the beach?"), whose evidence is spread
 * over sessions and often shares no word with the cue: hybrid similarity runs them twice, the
 * second time with the cue's vector moved toward the first pass's best results (pseudo-relevance
 * feedback, Rocchio), so the memories that resemble what was found join the candidates.
 */
import type { MemoryRecord } from '../model/memory.ts';
import { clamp01 } from './scoring.ts';
import type { StrategyDetail } from './types.ts';
import { dot } from './vector.ts';

/**
 * Feedback for such cues: `weight`, how far the cue's vector moves toward the mean of the first
 * pass's best `depth` results (0: one pass, as for every other cue); `pool`, the depth of the
 * first pass's candidate lists (it only has to find those few).
 */
export const GATHER: { weight: number; depth: number; pool: number } = {
  weight: 0.35,
  depth: 3,
  pool: 10,
};

/** A count, a frequency, a list or a whole: words that ask for several answers whatever follows them. */
const SEVERAL_WORDS =
  /\b(?:how many|how often|how much|list|every|all|both|each|ever|times|kinds? of|types? of|sorts? of|ways?)\b/iu;
/**
 * What/which followed by a plural noun in one of the next two words ("what books", "what kinds",
 * "which events", "what activities does"): an -s word that is not a verb or pronoun of the
 * question's frame.
 */
const PLURAL_OBJECT = /\b(?:what|which)\s+(\p{L}+)(?:\s+(\p{L}+))?/iu;
const NOT_PLURAL = new Set(['does', 'has', 'was', 'is', 'this', 'his', 'hers', 'its', 'yes', 'us']);

function plural(word: string | undefined): boolean {
  if (word === undefined || word.length < 4) return false;
  const w = word.toLowerCase();
  return w.endsWith('s') && !NOT_PLURAL.has(w) && !/(?:ss|us|is|ous)$/u.test(w);
}

/** Whether the cue asks for several things (a count, a list, every occurrence), not one answer. */
export function asksForSeveral(cue: string): boolean {
  if (SEVERAL_WORDS.test(cue)) return true;
  const m = PLURAL_OBJECT.exec(cue);
  return m !== null && (plural(m[1]) || plural(m[2]));
}

/** normalise(cue + weight × mean(the results' vectors)); the cue itself without results. */
export function feedbackCue(
  cue: Float32Array,
  results: readonly MemoryRecord[],
  weight: number,
): Float32Array {
  const out = Float32Array.from(cue);
  if (results.length === 0) return out;
  const step = weight / results.length;
  for (const m of results)
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) + step * (m.embedding[i] ?? 0);
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / norm;
  return out;
}

/**
 * Similarity for a cue that asks for several things: a first pass (`pass`) for the best
 * GATHER.depth over candidate lists GATHER.pool deep, then the pass the cue would have had
 * (`depth`) with its vector moved toward those ({@link feedbackCue}); the `cosine` detail stays
 * the cue's own. With GATHER.weight 0, the one pass.
 */
export function gathered<
  Q extends { vector: Float32Array },
  S extends { topK: number },
  T extends { memory: MemoryRecord; detail: StrategyDetail },
>(q: Q, spec: S, pass: (q: Q, spec: S, pool: number) => T[], depth: number): T[] {
  if (GATHER.weight <= 0) return pass(q, spec, depth);
  const first = pass(q, { ...spec, topK: GATHER.depth }, GATHER.pool);
  const moved = feedbackCue(
    q.vector,
    first.map((c) => c.memory),
    GATHER.weight,
  );
  return pass({ ...q, vector: moved }, spec, depth).map((c) =>
    c.detail.strategy === 'similarity'
      ? { ...c, detail: { ...c.detail, cosine: clamp01(dot(q.vector, c.memory.embedding)) } }
      : c,
  );
}
