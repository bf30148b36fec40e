/**
 * The learned contradiction decision (analysis/contradiction-learned over
 * analysis/contradiction-features), asked after the hand rules only when a caller opts in: the
 * service does not (measured and dropped on SICK's trial split, see native-bench/HISTORY.md). The sentences are
 * written here; none is taken from a benchmark.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { classifyPair, featuresOf } from '../../src/analysis/contradiction.ts';
import { FEATURES } from '../../src/analysis/contradiction-features.ts';
import { learnedDecision, probability } from '../../src/analysis/contradiction-learned.ts';
import { BIAS, THRESHOLD, WEIGHTS } from '../../src/analysis/contradiction-weights.ts';
import { EMPTY_LEXICON, type Lexicon } from '../../src/analysis/lexicon.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';

let lexicon: Lexicon = EMPTY_LEXICON;
beforeAll(async () => {
  lexicon = await loadLexicon();
}, 30_000);

const NEGATED_WITH_DETAIL: [string, string] = [
  'There is no girl painting a fence in the garden',
  'A girl is painting a fence',
];
const ADDED_DETAIL: [string, string] = [
  'A boy is reading a book',
  'A boy is reading a book in the library',
];

describe('the learned decision', () => {
  it('has a fitted weight per feature and a threshold between 0 and 1', () => {
    expect(WEIGHTS).toHaveLength(FEATURES.length);
    expect(THRESHOLD).toBeGreaterThan(0);
    expect(THRESHOLD).toBeLessThan(1);
    expect(probability(FEATURES.map(() => 0))).toBeCloseTo(1 / (1 + Math.exp(-BIAS)), 10);
  });

  it('features are numbers in [0, 1], one per name', () => {
    const f = featuresOf(...NEGATED_WITH_DETAIL, 0.85, lexicon);
    expect(f).toHaveLength(FEATURES.length);
    for (const x of f) expect(x >= 0 && x <= 1).toBe(true);
    expect(f[FEATURES.indexOf('negation-one-side')]).toBe(1);
    expect(f[FEATURES.indexOf('there-is-no')]).toBe(1);
  });

  it('when asked, flags a negated pair the rules leave alone, naming the feature that weighed most', () => {
    expect(classifyPair(...NEGATED_WITH_DETAIL, 0.85, { lexicon }).verdict).toBe('none');
    const c = classifyPair(...NEGATED_WITH_DETAIL, 0.85, { lexicon, learned: true });
    expect(c.verdict).toBe('contradiction');
    expect(c.reason).toMatch(/^learned: [a-z-]+ \(p=0\.\d\d\)$/);
    // Named against an average training pair: a negation feature (which one depends on the fit), not "cosine".
    expect(c.reason).toMatch(/^learned: negat/);
    expect(learnedDecision(featuresOf(...NEGATED_WITH_DETAIL, 0.85, lexicon))).not.toBeNull();
  });

  it('does not flag a statement that only adds a detail, nor unrelated statements', () => {
    expect(classifyPair(...ADDED_DETAIL, 0.85, { lexicon, learned: true }).verdict).toBe('none');
    expect(
      classifyPair('There is no cat sleeping', 'A dog is barking loudly at the mailman', 0.6, {
        lexicon,
        learned: true,
      }).verdict,
    ).toBe('none');
  });
});
