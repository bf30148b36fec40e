/**
 * reflect/summarize (DESIGN.md 9): without a language model an insight is extractive — the
 * cluster's most central statements, whole, and its distinguishing terms (tf-idf against every
 * episode in scope) — so it reads as a summary of the theme, not a template around a few words.
 */
import { describe, expect, it } from 'vitest';
import {
  centralStatements,
  distinguishingTerms,
  extractiveInsight,
  tokens,
} from '../../src/analysis/summarize.ts';

const GARDEN = [
  'The tomato plants in the garden need watering every morning.',
  'I added compost to the garden beds before planting tomato seedlings.',
  'Basil grows best in the garden next to the tomato plants.',
  'Slugs ate the lettuce in the garden last night.',
];
const OTHER = [
  'The Postgres database needs an index on the orders table.',
  'My marathon training plan has a long run every Sunday morning.',
  'The sourdough starter needs feeding every morning.',
  'The database replica lagged behind the primary last night.',
];
const ALL = [...GARDEN, ...OTHER];

function unit(...xs: number[]): Float32Array {
  const v = Float32Array.from(xs);
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

describe('tokens', () => {
  it('lower-cases and drops stopwords, words of one or two letters, and bare numbers', () => {
    expect(tokens('The 3 big Dogs and I ran to it in 2024, quickly!')).toEqual([
      'big',
      'dogs',
      'ran',
      'quickly',
    ]);
  });

  it("keeps apostrophes and hyphens inside words ('s is part of the token) and handles non-ASCII letters", () => {
    expect(tokens("Ravi's well-known café opens")).toEqual([
      "ravi's",
      'well-known',
      'café',
      'opens',
    ]);
  });
});

describe('distinguishingTerms', () => {
  it('ranks terms frequent in the cluster and rare elsewhere first', () => {
    const terms = distinguishingTerms(GARDEN, ALL);
    expect(terms[0]).toBe('garden'); // in all four garden texts, nowhere else
    expect(terms).toContain('tomato');
    // "morning" and "night" occur in the cluster but also elsewhere: they rank below the theme words.
    for (const common of ['morning', 'night']) {
      if (terms.includes(common))
        expect(terms.indexOf(common)).toBeGreaterThan(terms.indexOf('tomato'));
    }
    // Never stopwords, never a word only one clustered statement uses.
    expect(terms).not.toContain('the');
    expect(terms).not.toContain('slugs');
    expect(terms).not.toContain('compost');
  });

  it('returns at most `max` terms, deterministically', () => {
    expect(distinguishingTerms(GARDEN, ALL, 2)).toEqual(['garden', 'tomato']);
    expect(distinguishingTerms(GARDEN, ALL)).toEqual(distinguishingTerms([...GARDEN], [...ALL]));
    expect(distinguishingTerms(GARDEN, ALL).length).toBeLessThanOrEqual(5);
  });

  it('finds nothing in a cluster whose statements share no content word', () => {
    expect(
      distinguishingTerms(['Apples are red.', 'Violins have strings.', 'Kites fly high.'], ALL),
    ).toEqual([]);
  });
});

describe('centralStatements', () => {
  // Cosines to the centroid: 0 ≈ 0.995, 3 just below (a near-copy of 0), 1 ≈ 0.74, 2 ≈ 0.68, 4 = 0.
  const rows = [
    unit(1, 0.2, 0),
    unit(0.8, -0.6, 0),
    unit(0.6, 0.8, 0),
    unit(1, 0.2, 0.01),
    unit(0, 0, 1),
  ];
  const row = (i: number): Float32Array => rows[i] as Float32Array;
  const centroid = unit(1, 0.1, 0);

  it('orders members by closeness to the centroid, skipping near-duplicates of an earlier pick', () => {
    // 3 is a near-copy of 0 (cosine > 0.92): only the more central one is kept.
    expect(centralStatements([4, 3, 2, 1, 0], row, centroid)).toEqual([0, 1, 2]);
  });

  it('honours max and works on a subset of members', () => {
    expect(centralStatements([0, 1, 2, 3, 4], row, centroid, 1)).toEqual([0]);
    expect(centralStatements([3, 4], row, centroid, 3)).toEqual([3, 4]);
  });
});

describe('extractiveInsight', () => {
  it('reads as a summary: the size, the theme terms and the central statements in full', () => {
    const text = extractiveInsight({
      texts: ALL,
      central: [0, 2],
      tags: ['garden', 'tomato', 'plants', 'basil'],
      size: 4,
    });
    expect(text).toBe(
      '4 related memories about garden, tomato, plants. Most representative: ' +
        'The tomato plants in the garden need watering every morning. Basil grows best in the garden next to the tomato plants.',
    );
  });

  it('ends each statement with punctuation, collapses whitespace and truncates very long statements', () => {
    const long = `${'word '.repeat(80)}end`;
    const text = extractiveInsight({
      texts: ['  no   full stop here ', long],
      central: [0, 1],
      tags: [],
      size: 3,
    });
    expect(
      text.startsWith('3 related memories on one theme. Most representative: no full stop here. '),
    ).toBe(true);
    const tail = text.slice(text.indexOf('here. ') + 6);
    expect(tail.length).toBe(238);
    expect(tail.endsWith('…')).toBe(true);
  });
});
