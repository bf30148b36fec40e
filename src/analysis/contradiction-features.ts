/**
 * @module analysis/contradiction-features — general features of a statement pair for the learned
 * contradiction decision (analysis/contradiction-learned): what the hand rules look at
 * (analysis/contradiction-rules), as numbers in [0, 1] instead of yes / no. No feature names a
 * particular word or sentence: negation on one side, how much of each side's content the other
 * side says (exactly or more specifically, through the lexicon), subject match, opposites,
 * disagreeing numbers, the embedding cosine and the length difference.
 */
import {
  contentWords,
  definite,
  negationCount,
  numbersAgree,
  OPPOSITE_PARTICLE,
  sameSubject,
  THERE_IS_NO,
  uncovered,
} from './contradiction-rules.ts';
import type { Lexicon } from './lexicon.ts';

export const FEATURES = [
  'negation-one-side',
  'negation-both-sides',
  'there-is-no',
  'negated-covered',
  'plain-covered',
  'negated-one-uncovered',
  'negation-same-subject',
  'covered-min',
  'covered-max',
  'same-subject',
  'opposite-words',
  'numbers-differ',
  'cosine',
  'length-difference',
  'both-definite',
  'negated-uncovered-count',
  'one-word-swapped',
  'plain-adds-nothing',
  'activity-differs',
] as const;
export type FeatureName = (typeof FEATURES)[number];

/** The features of a pair in FEATURES order. */
export function pairFeatures(
  older: readonly string[],
  newer: readonly string[],
  cosine: number,
  lx: Lexicon,
  builtIn: (a: string, b: string) => boolean,
): number[] {
  const no = negationCount(older);
  const nn = negationCount(newer);
  const one = no !== nn && Math.min(no, nn) === 0 ? 1 : 0;
  const [negated, plain] = nn > no ? [newer, older] : [older, newer];
  const cn = contentWords(negated);
  const cp = contentWords(plain);
  const ca = contentWords(older);
  const cb = contentWords(newer);
  const covAB = covered(ca, cb, lx);
  const covBA = covered(cb, ca, lx);
  const subject = ca[0] !== undefined && sameSubject(ca[0], cb[0], lx) ? 1 : 0;
  const f: Record<FeatureName, number> = {
    'negation-one-side': one,
    'negation-both-sides': Math.min(no, nn) > 0 ? 1 : 0,
    'there-is-no': one * (THERE_IS_NO.test(negated.join(' ')) ? 1 : 0),
    'negated-covered': one * covered(cn, cp, lx),
    'plain-covered': one * covered(cp, cn, lx),
    'negated-one-uncovered': one * (uncovered(cn, cp, lx).length === 1 ? 1 : 0),
    'negation-same-subject': one * subject,
    'covered-min': Math.min(covAB, covBA),
    'covered-max': Math.max(covAB, covBA),
    'same-subject': subject,
    'opposite-words': oppositeWords(older, newer, lx, builtIn) ? 1 : 0,
    'numbers-differ': numbersAgree(older, newer) && numbersAgree(newer, older) ? 0 : 1,
    cosine: Math.max(0, cosine),
    'length-difference': Math.abs(ca.length - cb.length) / Math.max(1, ca.length, cb.length),
    'both-definite': definite(older, lx) && definite(newer, lx) ? 1 : 0,
    'negated-uncovered-count': (one * Math.min(3, uncovered(cn, cp, lx).length)) / 3,
    'one-word-swapped':
      uncovered(ca, cb, lx).length === 1 && uncovered(cb, ca, lx).length === 1 ? 1 : 0,
    'plain-adds-nothing': one * (uncovered(cp, cn, lx).length === 0 ? 1 : 0),
    'activity-differs': activityDiffers(ca, cb, lx) ? 1 : 0,
  };
  return FEATURES.map((name) => f[name]);
}

/** The first verbs in -ing of the two sides ("sitting" / "running") name different activities. */
function activityDiffers(a: readonly string[], b: readonly string[], lx: Lexicon): boolean {
  const va = a.find((w) => w.endsWith('ing'));
  const vb = b.find((w) => w.endsWith('ing'));
  return va !== undefined && vb !== undefined && !lx.covers(va, vb) && !lx.covers(vb, va);
}

/** Share of `claim`'s content words that `other` says, exactly or more specifically (1 for an empty claim). */
function covered(claim: readonly string[], other: readonly string[], lx: Lexicon): number {
  return claim.length === 0 ? 1 : 1 - uncovered(claim, other, lx).length / claim.length;
}

/** A word said only by one side is an opposite of a word said only by the other (particles, built-in pairs, WordNet). */
function oppositeWords(
  older: readonly string[],
  newer: readonly string[],
  lx: Lexicon,
  builtIn: (a: string, b: string) => boolean,
): boolean {
  const a = new Set(older);
  const b = new Set(newer);
  const onlyA = [...a].filter((w) => !b.has(w));
  const onlyB = [...b].filter((w) => !a.has(w));
  return onlyA.some((x) =>
    onlyB.some(
      (y) => (OPPOSITE_PARTICLE.get(x)?.has(y) ?? false) || builtIn(x, y) || lx.antonyms(x, y),
    ),
  );
}
