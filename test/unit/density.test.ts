/**
 * Densities (shard/index/density.ts) and crowding in hybrid recall (recall/hybrid.ts): a memory's
 * density is the mean of its 10 highest cosines with the memories written before it, never changes
 * once computed (later memories do not count), is the same whether computed in the background or
 * when a recall asks; and a memory written from the same template as many others loses part of its
 * cosine to one that stands out.
 */
import { describe, expect, it } from 'vitest';
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { runRecall } from '../../src/recall/recall.ts';
import { DEFAULT_WEIGHTS, type RecallInput, type RecallSource } from '../../src/recall/types.ts';
import { dot } from '../../src/recall/vector.ts';
import { DENSITY_K } from '../../src/shard/index/density.ts';
import { uncrowded } from '../../src/recall/hybrid.ts';
import { recallSource } from '../../src/shard/ops/recall-source.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { memoryRecord } from '../helpers/memory-record.ts';
import { similaritySpec } from '../helpers/strategy-spec.ts';

const MINUTE_US = 60_000_000;
const NOW = Date.parse('2026-11-25T12:00:00Z') * 1000;
const SPEC = similaritySpec();
const ONLY_RELEVANCE = {
  ...DEFAULT_WEIGHTS,
  w_relevance: 1,
  w_recency: 0,
  w_importance: 0,
  w_reinforcement: 0,
};

/** Writes the texts a day apart each (no two are neighbours in a conversation). */
function write(w: Workspace, texts: readonly string[], from = 0): MemoryRecord[] {
  return texts.map((t, i) => {
    const m = memoryRecord(t, NOW - 1000 * 1440 * MINUTE_US + (from + i) * 1440 * MINUTE_US);
    w.put(m);
    return m;
  });
}

function expected(m: MemoryRecord, earlier: readonly MemoryRecord[]): number {
  const sims = earlier
    .map((e) => dot(m.embedding, e.embedding))
    .sort((a, b) => b - a)
    .slice(0, DENSITY_K);
  return sims.reduce((a, b) => a + b, 0) / sims.length;
}

const TOPICS = [
  'lighthouse keeper',
  'sourdough starter',
  'violin lesson',
  'tax forms',
  'garden hose',
  'train delay',
  'dentist visit',
  'bike tyre',
  'library book',
  'wifi password',
  'piano tuning',
  'chess club',
];

describe('densities', () => {
  it('is the mean of the 10 highest cosines with the memories written before it; none before 10', () => {
    const w = new Workspace('d');
    const ms = write(
      w,
      Array.from({ length: 30 }, (_, i) => `${TOPICS[i % TOPICS.length]} note ${i}`),
    );
    const src = recallSource(w);
    for (const m of ms.slice(0, DENSITY_K)) expect(src.density(m)).toBeNull();
    for (const [i, m] of ms.entries())
      if (i >= DENSITY_K) expect(src.density(m)).toBeCloseTo(expected(m, ms.slice(0, i)), 6);
  });

  it('later memories do not change it, and the background computes what a recall would', () => {
    const a = new Workspace('a');
    const b = new Workspace('b');
    const texts = Array.from(
      { length: 40 },
      (_, i) => `${TOPICS[i % TOPICS.length]} entry ${i % 7}`,
    );
    const ms = write(a, texts.slice(0, 25));
    const asked = ms.map((m) => recallSource(a).density(m));
    write(a, texts.slice(25), 25);
    expect(ms.map((m) => recallSource(a).density(m))).toEqual(asked);
    for (const m of ms) b.put({ ...m });
    write(b, texts.slice(25), 25);
    while (b.densities.fillSome(100, (id) => b.memories.get(id), b.earlier)) {
      // all of them, in the background's order
    }
    expect(b.densities.backlog).toBe(0);
    expect(ms.map((m) => recallSource(b).density(b.memories.get(m.id) as MemoryRecord))).toEqual(
      asked,
    );
  });

  it('a memory written again with another text is measured again; a deleted one is forgotten', () => {
    const w = new Workspace('r');
    const ms = write(
      w,
      Array.from({ length: 12 }, (_, i) => `${TOPICS[i]} fact`),
    );
    const last = ms[11] as MemoryRecord;
    const before = recallSource(w).density(last);
    const revised = {
      ...last,
      content: 'lighthouse keeper fact',
      embedding: hashEmbedBatch(['lighthouse keeper fact'], 384),
    };
    w.put(revised);
    expect(recallSource(w).density(revised)).toBeCloseTo(expected(revised, ms.slice(0, 11)), 6);
    expect(recallSource(w).density(revised)).not.toBeCloseTo(before ?? 0, 3);
    w.delete(last.id);
    w.put(last);
    expect(recallSource(w).density(last)).toBeCloseTo(before ?? 0, 6);
  });
});

describe('crowding in hybrid recall', () => {
  function ranked(src: RecallSource, cue: string): string[] {
    const input: RecallInput = {
      cue: hashEmbedBatch([cue], 384),
      cueText: cue,
      similarityMode: 'hybrid',
      cueContext: null,
      strategies: [SPEC],
      weights: ONLY_RELEVANCE,
      withEmbedding: false,
    };
    return runRecall(src, input, NOW).hits.map((h) => h.memory.content);
  }

  it('a memory that stands out comes before one of a crowd written from the same template', () => {
    const w = new Workspace('c');
    const template = Array.from(
      { length: 40 },
      (_, i) => `daily health summary: slept well, walked to the park, weight steady, day ${i}`,
    );
    write(w, template);
    write(
      w,
      [
        'bought a knee brace at the pharmacy after the park walk',
        ...TOPICS.map((t) => `${t} reminder`),
      ],
      40,
    );
    const cue = 'after I walked to the park, what did I buy?';
    const without = ranked({ ...recallSource(w), density: () => null }, cue);
    const withCrowds = ranked(recallSource(w), cue);
    const brace = 'bought a knee brace at the pharmacy after the park walk';
    expect(withCrowds[0]).toBe(brace);

    // Without densities the crowd takes the top places (here the whole top 10).
    expect(without.slice(0, 3).every((c) => c.startsWith('daily health summary'))).toBe(true);
  });

  it('lifts a sparse memory by at most its own cosine', () => {
    expect(uncrowded(0.5, 0.2)).toBeCloseTo(0.3, 9);
    expect(uncrowded(0.3, -0.2)).toBeCloseTo(0.5, 9);
    expect(uncrowded(0.04, -0.48)).toBeCloseTo(0.08, 9);
    expect(uncrowded(0.9, -0.3)).toBe(1);
  });

  it('a memory that does not match the cue stays below a crowd that does', () => {
    // A crowd of near-duplicates near the cue, and one memory far from both (vectors set by hand).
    const unit = (xs: number[]): Float32Array => {
      const v = new Float32Array(384);
      xs.forEach((x, i) => {
        v[i] = x;
      });
      const n = Math.hypot(...xs);
      return v.map((x) => x / n);
    };
    const w = new Workspace('o');
    for (let i = 0; i < 20; i++)
      w.put(
        memoryRecord(`crowd ${i}`, NOW - (1000 - i) * 1440 * MINUTE_US, {
          embedding: unit([1, 0.05 * Math.sin(i), 0.05 * Math.cos(i)]),
        }),
      );
    w.put(
      memoryRecord('far away', NOW - 900 * 1440 * MINUTE_US, { embedding: unit([0.354, 0, 0, 1]) }),
    );
    const cue = unit([0.4, 0, 0, 0, 0.9]);
    const input: RecallInput = {
      cue,
      cueText: 'zzz',
      similarityMode: 'hybrid',
      cueContext: null,
      strategies: [SPEC],
      weights: ONLY_RELEVANCE,
      withEmbedding: false,
    };
    const got = runRecall(recallSource(w), input, NOW).hits.map((h) => h.memory.content);
    expect(got).toHaveLength(10);
    expect(got).not.toContain('far away');
  });
});
