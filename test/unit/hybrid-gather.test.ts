/**
 * Cues that ask for several things (recall/gather.ts): they are told from cues that ask for one
 * answer, and hybrid similarity answers them with a second pass whose cue is moved toward the
 * first pass's best results, so a memory like what was found ranks above an unrelated one; other
 * cues, and the `cosine` detail, are as without it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import { asksForSeveral, feedbackCue, GATHER } from '../../src/recall/gather.ts';
import { runRecall } from '../../src/recall/recall.ts';
import { DEFAULT_WEIGHTS, type RecallInput } from '../../src/recall/types.ts';
import { dot } from '../../src/recall/vector.ts';
import { recallSource } from '../../src/shard/ops/recall-source.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { memoryRecord } from '../helpers/memory-record.ts';
import { similaritySpec } from '../helpers/strategy-spec.ts';

const DAY_US = 86_400_000_000;
const NOW = Date.parse('2026-11-25T12:00:00Z') * 1000;
const SPEC = similaritySpec();
const DEFAULT_GATHER = { ...GATHER };

afterEach(() => {
  Object.assign(GATHER, DEFAULT_GATHER);
});

/** Each text a memory of its own, a day apart (no neighbours, no threads). */
function workspace(texts: readonly string[]): Workspace {
  const w = new Workspace('ws');
  texts.forEach((t, i) => {
    w.put(memoryRecord(t, NOW - (texts.length - i) * DAY_US));
  });
  return w;
}

function recall(w: Workspace, cue: string) {
  const input: RecallInput = {
    cue: hashEmbedBatch([cue], 384),
    cueText: cue,
    similarityMode: 'hybrid',
    cueContext: null,
    strategies: [SPEC],
    weights: {
      ...DEFAULT_WEIGHTS,
      w_relevance: 1,
      w_recency: 0,
      w_importance: 0,
      w_reinforcement: 0,
    },
    withEmbedding: false,
  };
  return runRecall({ ...recallSource(w), density: () => null }, input, NOW).hits.map((h) => ({
    content: h.memory.content,
    relevance: h.relevance,
    cosine: (h.details[0] as { cosine: number }).cosine,
  }));
}

const TEXTS = [
  'Ann played tennis with Bob at the harbour club',
  'harbour club tennis courts were resurfaced with blue clay',
  'a quiet evening of reading by the window',
  'the bakery sold out of rye bread by noon',
];

describe('cues that ask for several things', () => {
  it('are lists, counts, every time and plural objects, not single answers', () => {
    for (const cue of [
      'What books has Melanie read?',
      'What activities does Melanie partake in?',
      'How many times has Melanie gone to the beach in 2023?',
      'What kinds of art does Caroline make?',
      'List the places we visited',
      'Which events has Jon participated in?',
      'every time I went running',
    ])
      expect(asksForSeveral(cue), cue).toBe(true);
    for (const cue of [
      'What did Caroline research?',
      'Where did Caroline move from 4 years ago?',
      'What is Caroline’s relationship status?',
      'When did Melanie paint a sunrise?',
      'What does Melanie do to destress?',
      'What was his address?',
    ])
      expect(asksForSeveral(cue), cue).toBe(false);
  });

  it('move the cue toward the results and keep it a unit vector', () => {
    const cue = hashEmbedBatch(['tennis'], 384);
    const found = memoryRecord('harbour club courts', NOW);
    const moved = feedbackCue(cue, [found], 0.35);
    expect(dot(moved, moved)).toBeCloseTo(1, 5);
    expect(dot(moved, cue)).toBeLessThan(1);
    expect(dot(moved, found.embedding)).toBeGreaterThan(dot(cue, found.embedding));
    expect([...feedbackCue(cue, [], 0.35)]).toEqual([...cue]);
  });

  it('rank a memory like the best result above an unrelated one (feedback on by default)', () => {
    expect(GATHER.weight).toBeGreaterThan(0);
    const w = workspace(TEXTS);
    const cue = 'What sports has Ann played?';
    const related = (r: ReturnType<typeof recall>) =>
      r.find((x) => x.content.startsWith('harbour club tennis'))?.relevance ?? 0;
    const unrelated = (r: ReturnType<typeof recall>) =>
      r.find((x) => x.content.startsWith('a quiet evening'))?.relevance ?? 0;
    const on = recall(w, cue);
    GATHER.weight = 0;
    const off = recall(w, cue);
    expect(on[0]?.content).toBe(TEXTS[0]);
    expect(related(on)).toBeGreaterThan(related(off));
    expect(related(on)).toBeGreaterThan(unrelated(on));
    // The cosine detail stays the cue's own (what HEBBS calls relevance).
    expect(on.map((x) => x.cosine)).toEqual(
      on.map((x) => off.find((y) => y.content === x.content)?.cosine),
    );
  });

  it('leave a cue that asks for one answer as it was', () => {
    const w = workspace(TEXTS);
    const cue = 'Where did Ann play tennis with Bob?';
    expect(asksForSeveral(cue)).toBe(false);
    const on = recall(w, cue);
    GATHER.weight = 0;
    expect(recall(w, cue)).toEqual(on);
  });
});
