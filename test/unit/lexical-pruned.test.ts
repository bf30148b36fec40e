/**
 * The lexical index's lazy, pruned scoring (shard/index/lexical-scores.ts) against the exhaustive
 * scoring it replaced (test/helpers/lexical-reference.ts): seeded random workspaces with skewed word
 * frequencies (some words in most memories), typos of indexed words, duplicated texts (ties), adds,
 * removals, replacements and reused document numbers; every query's terms, `top` for k from 1 to
 * past the hits with filters that reject some memories, `norm` of every id and `union` of random
 * sets must equal the oracle's to the last bit and in the same order.
 */
import { describe, expect, it } from 'vitest';
import { LexicalIndex, type LexicalDoc, type LexicalQuery } from '../../src/shard/index/lexical.ts';
import { ReferenceLexicalIndex } from '../helpers/lexical-reference.ts';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const LETTERS = 'abcdefghiklmnoprstuvw';

/** A workspace's worth of random text: a Zipf-like vocabulary, with misspellings of its words. */
function corpus(
  seed: number,
  vocabulary: number,
): { text: (words: number) => string; cue: () => string; next: () => number } {
  const next = seeded(seed);
  const int = (n: number): number => Math.floor(next() * n);
  const word = (): string =>
    Array.from({ length: 5 + int(4) }, () => LETTERS[int(LETTERS.length)]).join('');
  const words = Array.from({ length: vocabulary }, word);
  const weights = words.map((_, r) => 1 / (r + 1) ** 1.1);
  const total = weights.reduce((a, b) => a + b, 0);
  const pick = (): string => {
    let x = next() * total;
    for (let r = 0; r < words.length; r++)
      if ((x -= weights[r] as number) <= 0) return words[r] as string;
    return words[0] as string;
  };
  const misspell = (w: string): string => {
    const i = 1 + int(w.length - 2);
    return int(2) === 0
      ? w.slice(0, i) + w.slice(i + 1)
      : w.slice(0, i) + (w[i + 1] as string) + (w[i] as string) + w.slice(i + 2);
  };
  const some = (n: number, typo: number): string[] =>
    Array.from({ length: n }, () => (next() < typo ? misspell(pick()) : pick()));
  const text = (n: number): string => {
    const out = some(n, 0.08);
    if (next() < 0.9) out.push('note'); // in most memories
    if (next() < 0.7) out.push('item', 'item');
    if (next() < 0.1) out.push(`2023-0${1 + int(9)}-1${int(10)}`);
    if (next() < 0.3) out.push(String(int(50)));
    return out.join(' ');
  };
  return {
    text,
    cue: () => some(1 + int(6), 0.15).join(' ') + (next() < 0.5 ? ' note' : ''),
    next,
  };
}

interface Pair {
  idx: LexicalIndex;
  ref: ReferenceLexicalIndex;
}

/** Pruning always (no query is short enough to scan whole), or by the index's default. */
const MODES = [{ scanPostings: 0 }, {}];

function expectSame(
  { idx, ref }: Pair,
  text: string,
  typos: boolean,
  ids: string[],
  next: () => number,
): void {
  const q: LexicalQuery = idx.query(text, { typos });
  expect(q).toEqual(ref.query(text, { typos }));
  const hits = ref.score(q).top(10_000, null).length;
  const rejected = new Set(ids.filter(() => next() < 0.3));
  const filters: Array<((id: string) => boolean) | null> = [
    null,
    (id) => !rejected.has(id),
    (id) => id.endsWith('7'),
  ];
  for (const k of [1, 2, 3, 5, 10, 30, hits, hits + 3]) {
    for (const accept of filters)
      expect(idx.search(q, k, accept), `${text} k ${k}`).toEqual(ref.search(q, k, accept));
  }
  const mine = idx.score(q);
  const theirs = ref.score(q);
  expect(mine.top(3, null)).toEqual(theirs.top(3, null));
  expect(ids.map((id) => mine.norm(id))).toEqual(ids.map((id) => theirs.norm(id)));
  for (let i = 0; i < 5; i++) {
    const some = ids.filter(() => next() < 0.05);
    expect(mine.union(some)).toEqual(theirs.union(some));
  }
  expect(mine.top(7, (id) => !rejected.has(id))).toEqual(theirs.top(7, (id) => !rejected.has(id)));
}

function run(
  seed: number,
  opts: { steps: number; ids: number; vocabulary: number; every: number; scanPostings?: number },
): void {
  const c = corpus(seed, opts.vocabulary);
  const int = (n: number): number => Math.floor(c.next() * n);
  const pair: Pair = {
    idx: new LexicalIndex(
      opts.scanPostings === undefined ? {} : { scanPostings: opts.scanPostings },
    ),
    ref: new ReferenceLexicalIndex(),
  };
  const live = new Map<string, LexicalDoc>();
  const texts: string[] = [];
  const ids = Array.from({ length: opts.ids }, (_, i) => `m${i}`);
  for (let step = 1; step <= opts.steps; step++) {
    const id = ids[int(ids.length)] as string;
    const old = live.get(id);
    if (old !== undefined) {
      pair.idx.remove(id);
      pair.ref.remove(id, old);
      live.delete(id);
      if (int(3) === 0) continue;
    }
    const content =
      texts.length > 0 && c.next() < 0.15
        ? (texts[int(texts.length)] as string)
        : c.text(3 + int(12));
    texts.push(content);
    const doc: LexicalDoc = {
      content,
      entityId: c.next() < 0.3 ? `entity ${int(5)}` : null,
      context: c.next() < 0.3 ? { tag: c.text(1), n: [c.text(1)] } : {},
    };
    pair.idx.add(id, doc);
    pair.ref.add(id, doc);
    live.set(id, doc);
    if (step % opts.every !== 0) continue;
    expect(pair.idx.size).toBe(pair.ref.size);
    expect(pair.idx.termCount).toBe(pair.ref.termCount);
    expectSame(pair, c.cue(), true, ids, c.next);
    expectSame(pair, c.cue(), false, ids, c.next);
    expectSame(pair, content, false, ids, c.next); // a remember's contradiction check: its whole text
  }
}

describe('pruned lexical scoring equals the exhaustive scan, bit for bit', () => {
  it('small workspaces with heavy churn: removals, replacements, reused document numbers', () => {
    for (const mode of MODES)
      for (const seed of [1, 2, 3])
        run(seed, { steps: 900, ids: 120, vocabulary: 60, every: 30, ...mode });
  });

  it('a larger workspace where common words are in most memories', () => {
    for (const mode of MODES)
      run(42, { steps: 4000, ids: 2500, vocabulary: 400, every: 400, ...mode });
  });

  it('hand-built queries: repeated terms, shared slots out of order, unknown terms, weights that are not positive', () => {
    for (const mode of MODES)
      handBuilt({ idx: new LexicalIndex(mode), ref: new ReferenceLexicalIndex() });
  });

  function handBuilt(pair: Pair): void {
    const c = corpus(9, 40);
    const ids = Array.from({ length: 200 }, (_, i) => `m${i}`);
    for (const id of ids) {
      const doc: LexicalDoc = { content: c.text(8), entityId: null, context: {} };
      pair.idx.add(id, doc);
      pair.ref.add(id, doc);
    }
    const terms = pair.idx.query(c.text(12)).terms;
    const queries: LexicalQuery[] = [
      { terms: [...terms, ...terms], idfSum: 10 },
      { terms: terms.map((t, i) => ({ ...t, slot: i % 2 })), idfSum: 5 },
      { terms: [{ term: 'zzzzzz', idf: 2, slot: 0 }, ...terms], idfSum: 0 },
      { terms: terms.map((t, i) => ({ ...t, idf: i === 1 ? -1 : t.idf })), idfSum: 3 },
    ];
    for (const q of queries) {
      for (const k of [1, 4, 50, 500])
        expect(pair.idx.search(q, k, (id) => !id.endsWith('3'))).toEqual(
          pair.ref.search(q, k, (id) => !id.endsWith('3')),
        );
      const mine = pair.idx.score(q);
      const theirs = pair.ref.score(q);
      expect(ids.map((id) => mine.norm(id))).toEqual(ids.map((id) => theirs.norm(id)));
      expect(mine.union(ids.slice(0, 9))).toEqual(theirs.union(ids.slice(0, 9)));
    }
  }

  it('scores read after the index changed are an error, not a wrong answer', () => {
    const idx = new LexicalIndex();
    idx.add('a', { content: 'apple pie', entityId: null, context: {} });
    const scores = idx.score(idx.query('apple'));
    idx.add('b', { content: 'apple tart', entityId: null, context: {} });
    expect(() => scores.norm('a')).toThrow(/changed/);
  });
});
