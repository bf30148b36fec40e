/**
 * The pruned walk behind the lexical top k (shard/index/lexical-scores.ts) against the exhaustive
 * scan (test/helpers/lexical-reference.ts) on the kind of store where pruning has most to do and
 * most to get wrong: memories written from templates (a subject, a verb, an object, a time and up
 * to three clauses, with context tags and entities), so every word of a cue is in a tenth or more
 * of the store and the best memories are those holding most of the cue's words; a rare number in
 * each; removals and replacements (dead postings, reused document numbers, loosened bounds); cues
 * from the same templates, with typos and repeated words; filters that keep a time range, an
 * entity, or almost nothing. Every `top` must equal the oracle's: ids, scores and order, bit for bit.
 */
import { describe, expect, it } from 'vitest';
import { LexicalIndex, type LexicalDoc } from '../../src/shard/index/lexical.ts';
import { ReferenceLexicalIndex } from '../helpers/lexical-reference.ts';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SUBJECTS = [
  'the customer',
  'our on-call engineer',
  'the billing service',
  'maria from support',
];
const VERBS = ['reported', 'asked about', 'complained about', 'confirmed', 'rolled back', 'fixed'];
const OBJECTS = [
  'the invoice for march',
  'a timeout when uploading large files',
  'dark mode on every device',
  'the migration to the new database',
  'a refund for the duplicate charge',
  'the flaky integration test',
];
const TAILS = ['yesterday afternoon', 'after the last release', 'during the tuesday standup'];
const CLAUSES = [
  'because the previous workaround stopped working',
  'which blocked two other teams',
  'although nobody could reproduce it',
  'and mentioned a budget of euros',
];
const TAGS = ['billing', 'bug', 'urgent', 'support', 'followup'];

function templates(seed: number): { text: () => string; next: () => number } {
  const next = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const text = (): string => {
    let s = `${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} ${pick(TAILS)}`;
    const extra = Math.floor(next() * 4);
    for (let i = 0; i < extra; i++) s += `, ${pick(CLAUSES)}`;
    if (next() < 0.1) s += ` ${pick(VERBS)} ${pick(VERBS)}`; // a word twice: tf 2
    return `${s} (ref ${Math.floor(next() * 400)})`;
  };
  return { text, next };
}

/** A typo in one word of the text (a letter dropped), sometimes. */
function typo(text: string, next: () => number): string {
  const words = text.split(' ');
  const i = Math.floor(next() * words.length);
  const w = words[i] as string;
  if (w.length >= 6) words[i] = w.slice(0, 3) + w.slice(4);
  return words.join(' ');
}

function check(
  idx: LexicalIndex,
  ref: ReferenceLexicalIndex,
  cue: string,
  accepts: Filter[],
): void {
  const q = idx.query(cue, { typos: true });
  expect(q).toEqual(ref.query(cue, { typos: true }));
  for (const accept of accepts)
    for (const k of [1, 3, 10, 30, 100]) {
      const mine = idx.search(q, k, accept);
      expect(mine, `${cue} k ${k}`).toEqual(ref.search(q, k, accept));
    }
}

type Filter = ((id: string) => boolean) | null;

describe('the pruned lexical walk returns what the exhaustive scan returns', () => {
  it('templated memories (every cue word in a tenth of the store or more), churn, filters, typos', () => {
    const { text, next } = templates(5);
    const idx = new LexicalIndex({ scanPostings: 0 });
    const ref = new ReferenceLexicalIndex();
    const live = new Map<string, LexicalDoc>();
    const n = 3000;
    const ids = Array.from({ length: n }, (_, i) => `m${String(i).padStart(5, '0')}`);
    const put = (id: string): void => {
      const doc: LexicalDoc = {
        content: text(),
        entityId: next() < 0.9 ? `user ${Math.floor(next() * 10)}` : null,
        context: { source: 'chat', tags: [TAGS[Math.floor(next() * 5)] as string, 'bug'] },
      };
      idx.add(id, doc);
      ref.add(id, doc);
      live.set(id, doc);
    };
    for (const id of ids) put(id);
    const entity = (id: string): string | null => live.get(id)?.entityId ?? null;
    const filters = (): Filter[] => {
      const from = Math.floor(next() * n);
      const range = (id: string): boolean => {
        const i = Number(id.slice(1));
        return i >= from && i < from + n / 5; // a time scope: memories written in a window
      };
      const someone = `user ${Math.floor(next() * 10)}`;
      return [null, range, (id) => entity(id) === someone, (id) => id.endsWith('17')];
    };
    for (let round = 0; round < 6; round++) {
      for (let c = 0; c < 12; c++) {
        const cue = text();
        check(idx, ref, next() < 0.3 ? typo(cue, next) : cue, filters());
      }
      check(idx, ref, `${VERBS[0]} ${VERBS[0]} reported invoice invoice`, filters()); // repeated words
      // Churn: a fifth of the memories removed, some replaced (dead postings, reused numbers).
      for (const id of ids) {
        if (next() >= 0.2 || !live.has(id)) continue;
        idx.remove(id);
        ref.remove(id, live.get(id) as LexicalDoc);
        live.delete(id);
        if (next() < 0.6) put(id);
      }
      expect(idx.size).toBe(ref.size);
    }
  });

  it('a few memories far better than the rest, and hits fewer than k', () => {
    const { text } = templates(8);
    const idx = new LexicalIndex({ scanPostings: 0 });
    const ref = new ReferenceLexicalIndex();
    for (let i = 0; i < 1500; i++) {
      const content = i % 300 === 0 ? 'the customer fixed the invoice for march twice' : text();
      const doc: LexicalDoc = { content, entityId: null, context: {} };
      idx.add(`m${i}`, doc);
      ref.add(`m${i}`, doc);
    }
    for (const cue of ['customer fixed invoice march', 'twice', 'march march twice refund', text()])
      check(idx, ref, cue, [null, (id) => id.endsWith('0'), (id) => id === 'm17' || id === 'm600']);
  });
});
