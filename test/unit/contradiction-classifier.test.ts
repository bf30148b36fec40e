/**
 * reflect/contradiction (DESIGN.md 9): the heuristic classifier scored against a labelled set of
 * statement pairs (test/fixtures/contradiction-pairs.json: negation, antonyms, numbers, dates,
 * revisions, and look-alike non-contradictions — paraphrases, compatible facts, different
 * subjects, added detail). A pair counts as flagged when the verdict is not 'none' and the score
 * reaches the threshold: UNCERTAIN (it becomes at least a pending candidate) or CONFIDENT (edges
 * are written without review). Similarities in the fixture are the real model's cosines.
 *
 * Measured with the classifier as it stands (109 pairs, 63 positive):
 *   ≥ UNCERTAIN: precision 0.839, recall 0.825;  ≥ CONFIDENT: precision 0.850, recall 0.810;
 *   every flagged true pair gets the right verdict (contradiction vs revision).
 * The floors below sit a little under those numbers. The "obvious cases" block lists pairs the
 * classifier should get right and currently does not (missed contractions and inflections,
 * number words, warm/cold; different subjects and paraphrases flagged) — see the report for the fix.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  classifyPair,
  CONFIDENT,
  UNCERTAIN,
  type Verdict,
} from '../../src/analysis/contradiction.ts';

interface Pair {
  id: number;
  set: 'dev' | 'holdout';
  category: string;
  expected: Verdict;
  older: string;
  newer: string;
  similarity: number;
}

const { pairs } = JSON.parse(
  readFileSync(new URL('../fixtures/contradiction-pairs.json', import.meta.url), 'utf8'),
) as { pairs: Pair[] };

interface Scores {
  precision: number;
  recall: number;
  verdictAccuracy: number;
  falsePositives: string[];
  misses: string[];
}

function score(threshold: number, subset: readonly Pair[] = pairs): Scores {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let rightVerdict = 0;
  const falsePositives: string[] = [];
  const misses: string[] = [];
  for (const p of subset) {
    const c = classifyPair(p.older, p.newer, p.similarity);
    const flagged = c.verdict !== 'none' && c.score >= threshold;
    const positive = p.expected !== 'none';
    if (flagged && positive) {
      tp += 1;
      if (c.verdict === p.expected) rightVerdict += 1;
    } else if (flagged) {
      fp += 1;
      falsePositives.push(`#${p.id} ${p.category}: ${c.verdict} ${c.score.toFixed(2)}`);
    } else if (positive) {
      fn += 1;
      misses.push(`#${p.id} ${p.category}`);
    }
  }
  return {
    precision: tp / (tp + fp),
    recall: tp / (tp + fn),
    verdictAccuracy: rightVerdict / tp,
    falsePositives,
    misses,
  };
}

describe('the labelled pairs', () => {
  it('are at least 60, cover every category on both sides, and are well-formed', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(60);
    const categories = new Set(pairs.map((p) => p.category));
    for (const c of [
      'negation',
      'antonym',
      'number',
      'date',
      'revision',
      'paraphrase',
      'compatible',
      'different-subject',
      'added-detail',
    ]) {
      expect(categories.has(c), c).toBe(true);
    }
    const positives = pairs.filter((p) => p.expected !== 'none').length;
    expect(positives).toBeGreaterThanOrEqual(30);
    expect(pairs.length - positives).toBeGreaterThanOrEqual(30);
    for (const p of pairs) {
      expect(['contradiction', 'revision', 'none']).toContain(p.expected);
      expect(p.similarity).toBeGreaterThan(0);
      expect(p.similarity).toBeLessThanOrEqual(1);
      expect(p.older).not.toBe(p.newer);
    }
    expect(new Set(pairs.map((p) => p.id)).size).toBe(pairs.length);
  });
});

describe('classifyPair precision and recall', () => {
  it('pairs flagged at all (score ≥ UNCERTAIN): precision ≥ 0.80, recall ≥ 0.78', () => {
    const s = score(UNCERTAIN);
    console.log(
      `≥ UNCERTAIN (${UNCERTAIN}): precision ${s.precision.toFixed(3)}, recall ${s.recall.toFixed(3)}, verdicts ${s.verdictAccuracy.toFixed(3)}; ` +
        `false positives ${JSON.stringify(s.falsePositives)}; misses ${JSON.stringify(s.misses)}`,
    );
    expect(s.precision).toBeGreaterThanOrEqual(0.8);
    expect(s.recall).toBeGreaterThanOrEqual(0.78);
  });

  it('pairs acted on without review (score ≥ CONFIDENT): precision ≥ 0.80, recall ≥ 0.78', () => {
    const s = score(CONFIDENT);
    console.log(
      `≥ CONFIDENT (${CONFIDENT}): precision ${s.precision.toFixed(3)}, recall ${s.recall.toFixed(3)}, verdicts ${s.verdictAccuracy.toFixed(3)}`,
    );
    expect(s.precision).toBeGreaterThanOrEqual(0.8);
    expect(s.recall).toBeGreaterThanOrEqual(0.78);
  });

  it('flagged true pairs get the right verdict: updates are revisions, the rest contradictions', () => {
    expect(score(UNCERTAIN).verdictAccuracy).toBeGreaterThanOrEqual(0.95);
  });

  it('CONFIDENT is stricter than UNCERTAIN', () => {
    expect(CONFIDENT).toBeGreaterThan(UNCERTAIN);
    const loose = score(UNCERTAIN);
    const strict = score(CONFIDENT);
    expect(strict.recall).toBeLessThanOrEqual(loose.recall);
  });
});

describe('classifyPair basics', () => {
  it('a plain negation is a confident contradiction', () => {
    const c = classifyPair('Tom is allergic to peanuts.', 'Tom is not allergic to peanuts.', 0.956);
    expect(c.verdict).toBe('contradiction');
    expect(c.score).toBeGreaterThanOrEqual(CONFIDENT);
    expect(c.reason).toMatch(/negat/);
  });

  it('an update ("now lives in") is a confident revision', () => {
    const c = classifyPair('Bob lives in Berlin.', 'Bob now lives in Paris.', 0.691);
    expect(c.verdict).toBe('revision');
    expect(c.score).toBeGreaterThanOrEqual(CONFIDENT);
  });

  it('"no longer" is a revision, whichever finding triggers it', () => {
    expect(
      classifyPair(
        'Carlos is the project manager.',
        'Carlos is no longer the project manager.',
        0.879,
      ).verdict,
    ).toBe('revision');
  });

  it('an antonym pair and a disagreeing number are contradictions', () => {
    expect(
      classifyPair('Sarah loves horror movies.', 'Sarah hates horror movies.', 0.89),
    ).toMatchObject({ verdict: 'contradiction' });
    const n = classifyPair(
      'The conference room seats 12 people.',
      'The conference room seats 20 people.',
      0.858,
    );
    expect(n.verdict).toBe('contradiction');
    expect(n.reason).toContain('12');
  });

  it('paraphrases, added detail and unrelated changes are not flagged', () => {
    for (const [a, b, sim] of [
      ['Alice likes coffee.', 'Alice enjoys drinking coffee.', 0.911],
      ['Sales rose in March.', 'Sales fell in April.', 0.591],
      [
        'The company has 50 employees.',
        'The company has 50 employees, 20 of whom are engineers.',
        0.802,
      ],
      ['Alice does not eat meat.', 'Alice does not eat meat or fish.', 0.961],
    ] as const) {
      expect(classifyPair(a, b, sim), `${a} / ${b}`).toMatchObject({ verdict: 'none', score: 0 });
    }
  });

  it('a lower embedding similarity lowers the score', () => {
    const high = classifyPair(
      'Tom is allergic to peanuts.',
      'Tom is not allergic to peanuts.',
      0.9,
    );
    const low = classifyPair('Tom is allergic to peanuts.', 'Tom is not allergic to peanuts.', 0.5);
    expect(low.score).toBeLessThan(high.score);
    expect(high.score).toBeLessThanOrEqual(1);
  });
});

/** Pairs a contradiction checker should get right; the current heuristics do not (see the report for the fix). */
describe('classifyPair: obvious cases', () => {
  it.each([
    [
      'negation with a contraction and an inflected verb',
      'Maria speaks French fluently.',
      "Maria doesn't speak French.",
      0.814,
    ],
    [
      'warm / cold',
      'The lake water is warm in August.',
      'The lake water is cold in August.',
      0.932,
    ],
    [
      'numbers written as words',
      'The recipe calls for four eggs.',
      'The recipe calls for two eggs.',
      0.849,
    ],
    [
      'an update naming the subject with a possessive',
      "Ravi's phone number is 555-0101.",
      'Ravi changed his phone number to 555-0199.',
      0.791,
    ],
  ])('flags (%s) %j / %j', (_why, older, newer, sim) => {
    const c = classifyPair(older, newer, sim);
    expect(c.verdict).not.toBe('none');
    expect(c.score).toBeGreaterThanOrEqual(UNCERTAIN);
  });

  it.each([
    [
      'a paraphrase ("unable" is a negation too)',
      'Jake cannot swim.',
      'Jake is unable to swim.',
      0.944,
    ],
    [
      'different subjects',
      'The north entrance is closed on Sundays.',
      'The south entrance is open on Sundays.',
      0.814,
    ],
    [
      'numbers that name different things',
      'Room 101 seats 12 people.',
      'Room 205 seats 30 people.',
      0.825,
    ],
    ['digits inside names', 'The server supports IPv6.', 'The server supports HTTP/2.', 0.604],
    [
      'a negation inside an added detail',
      'The package arrived yesterday.',
      'The package arrived yesterday and nothing was damaged.',
      0.685,
    ],
  ])('does not flag (%s) %j / %j', (_why, older, newer, sim) => {
    const c = classifyPair(older, newer, sim);
    expect(
      c.score >= UNCERTAIN && c.verdict !== 'none',
      `${c.verdict} ${c.score.toFixed(2)}: ${c.reason}`,
    ).toBe(false);
  });
});
