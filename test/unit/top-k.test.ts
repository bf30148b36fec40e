import { describe, expect, it } from 'vitest';
import { topK } from '../../src/shard/index/top-k.ts';

/** The reference: filter every document, sort by score (descending; ties by lower number), cut. */
function naive(
  docs: readonly number[],
  scores: Float64Array,
  k: number,
  accept: ((d: number) => boolean) | null,
): number[] {
  return docs
    .filter((d) => accept === null || accept(d))
    .sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b)
    .slice(0, k);
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('topK', () => {
  it('gives what filtering every document and sorting gives, ties included', () => {
    const rnd = seeded(7);
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(rnd() * 300);
      const scores = new Float64Array(n);
      // Few distinct scores, so ties are common.
      for (let d = 0; d < n; d++) scores[d] = Math.floor(rnd() * 12);
      const docs = [...scores.keys()].sort(() => rnd() - 0.5);
      const rejected = new Set(docs.filter(() => rnd() < 0.4));
      const accept = round % 3 === 0 ? null : (d: number) => !rejected.has(d);
      const k = 1 + Math.floor(rnd() * 20);
      expect(topK(docs, scores, k, accept)).toEqual(naive(docs, scores, k, accept));
    }
  });

  it('asks accept only of documents that would enter the heap', () => {
    const n = 10_000;
    const scores = new Float64Array(n);
    for (let d = 0; d < n; d++) scores[d] = n - d;
    const docs = [...scores.keys()]; // best first: after k accepted, nobody else can enter
    let asked = 0;
    const best = topK(docs, scores, 3, (d) => {
      asked += 1;
      return d % 2 === 1;
    });
    expect(best).toEqual([1, 3, 5]);
    expect(asked).toBe(6);
  });
});
