/**
 * @module analysis/contradiction-rules — the lexical rules of the contradiction classifier that read
 * a statement's content words with a lexicon (analysis/lexicon): negation scope (one side denies
 * what the other asserts) and opposites (one particular subject, a word against its opposite).
 */
import type { Lexicon } from './lexicon.ts';

export interface RuleFinding {
  kind: 'negation' | 'antonym';
  score: number;
  reason: string;
}

export const NEGATION_WORDS = new Set([
  'not',
  'no',
  'never',
  'none',
  'nobody',
  'nothing',
  'neither',
  'nor',
  'cannot',
  "can't",
  "won't",
  "don't",
  "doesn't",
  "didn't",
  "isn't",
  "aren't",
  "wasn't",
  "weren't",
  "hasn't",
  "haven't",
  "hadn't",
  "shouldn't",
  "wouldn't",
  "couldn't",
  'unable',
  "n't",
  'noone',
]);
/** Words that say who or how many, not what: left out when comparing what two statements claim. */
const FUNCTION_WORDS = new Set(
  (
    'a an the is are was were be been being am there here this that these those it its of to in on at by for with from as and or but ' +
    'some several any each every one ones a few many much who whom which what whose their his her hers they he she them him we you i me my ' +
    'your our us do does did doing done has have had having very while near into onto out up down off over under around through behind ' +
    'front across along next than then so also just get gets getting got someone somebody something anyone anybody anything ' +
    'now longer anymore changed moved switched updated renamed replaced instead actually nowadays became become yet still already ' +
    'another other others both all either same'
  ).split(' '),
);
/** Negations that stand for "no person". */
const NO_PERSON = new Set(['nobody', 'noone']);
/** Words that stand for "a person". */
const SOME_PERSON = new Set(['someone', 'somebody', 'anyone', 'anybody']);
/** Opposite particles and adverbs of place and time. */
const PARTICLES: Array<[string, string]> = [
  ['on', 'off'],
  ['in', 'out'],
  ['into', 'out'],
  ['up', 'down'],
  ['onto', 'off'],
  ['before', 'after'],
  ['indoors', 'outdoors'],
  ['inside', 'outside'],
  ['above', 'below'],
  ['over', 'under'],
  ['toward', 'away'],
  ['towards', 'away'],
  ['open', 'closed'],
  ['with', 'without'],
  ['upstairs', 'downstairs'],
  ['forward', 'backward'],
  ['forwards', 'backwards'],
];
export const OPPOSITE_PARTICLE = new Map<string, Set<string>>();
for (const [a, b] of PARTICLES) {
  OPPOSITE_PARTICLE.set(a, (OPPOSITE_PARTICLE.get(a) ?? new Set()).add(b));
  OPPOSITE_PARTICLE.set(b, (OPPOSITE_PARTICLE.get(b) ?? new Set()).add(a));
}

export function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/[\u2018\u2019]/g, "'")
      .replace(/\bno one\b/g, 'noone')
      .match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []
  );
}

export function negationCount(ws: readonly string[]): number {
  return ws.filter((w) => NEGATION_WORDS.has(w) || w.endsWith("n't")).length;
}

/** Content words in order: no function words, negations (a "nobody" becomes "person"), possessive 's off. */
export function contentWords(ws: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of ws) {
    const w = raw.endsWith("'s") ? raw.slice(0, -2) : raw;
    if (NO_PERSON.has(w) || SOME_PERSON.has(w)) out.push('person');
    else if (!NEGATION_WORDS.has(w) && !w.endsWith("n't") && !FUNCTION_WORDS.has(w) && w.length > 1)
      out.push(w);
  }
  return out;
}

/** Words of `claim` that nothing in `other` says, exactly or more specifically. */
export function uncovered(
  claim: readonly string[],
  other: readonly string[],
  lx: Lexicon,
): string[] {
  const said = lx.saidBy(other);
  return claim.filter((c) => !said(c));
}

/** "There is no …", "there is nobody …", "nobody …", "no …": the negated side denies that such a thing exists. */
export const THERE_IS_NO = /^(there (is|are) (no|noone|nobody|none)|nobody|noone|no|none)\b/;

/**
 * Negation scope: one side negates ("there is no man …", "nobody …", "… is not …") and every content
 * word the negation governs is said by the other side, exactly or more specifically ("no person
 * boiling noodles" / "a woman is boiling noodles in water"). A negated side that adds a detail of
 * its own ("no man running down the road" / "a man is running") does not contradict: it denies the
 * detail, not the claim.
 */
export function negationScope(
  olderWords: readonly string[],
  newerWords: readonly string[],
  lx: Lexicon,
): RuleFinding | null {
  const no = negationCount(olderWords);
  const nn = negationCount(newerWords);
  if (no === nn || Math.min(no, nn) > 0) return null;
  const [negated, plain] = nn > no ? [newerWords, olderWords] : [olderWords, newerWords];
  const claim = contentWords(negated);
  const other = contentWords(plain);
  if (claim.length < 2 || uncovered(claim, other, lx).length > 0) return null;
  if (!numbersAgree(negated, plain)) return null;
  const there = THERE_IS_NO.test(negated.join(' '));
  // "A woman is not eating" is about some woman: it denies nothing about a girl, as "there is no woman eating" would.
  if (!there && !sameSubject(claim[0] as string, other[0], lx)) return null;
  return {
    kind: 'negation',
    score: 0.85,
    reason: there
      ? 'negation scope: one statement says there is no such thing'
      : 'negation scope: one statement denies all the other asserts',
  };
}

export function sameSubject(a: string, b: string | undefined, lx: Lexicon): boolean {
  return b !== undefined && lx.covers(a, b) && lx.covers(b, a);
}

function isNumber(w: string): boolean {
  return /^\d/.test(w) || NUMBER_WORDS.has(w);
}

/** Every number the negated side names is named by the other side too. */
export function numbersAgree(negated: readonly string[], plain: readonly string[]): boolean {
  return negated.filter(isNumber).every((n) => plain.includes(n));
}

const NUMBER_WORDS = new Set(
  'two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand'.split(
    ' ',
  ),
);

/** Words of its own the less talkative side of an opposites pair may have (the opposite, synonyms). */
const MAX_OWN_WORDS = 3;

/**
 * Opposites: two statements about one particular subject ("the man", "Sarah" — not "a man", who may
 * be another man) that differ by a word and its opposite and otherwise say the same. Built-in pairs
 * and the particles of phrasal verbs (on / off, in / out, up / down, before / after …) are
 * confident; WordNet's antonym pointers (sitting / standing, arrive / leave) only make a pending
 * candidate (native-bench/HISTORY.md, Contradiction detection, says how often they were right).
 */
export function opposites(
  olderWords: readonly string[],
  newerWords: readonly string[],
  lx: Lexicon,
  builtIn: (a: string, b: string) => boolean,
): RuleFinding | null {
  if (negationCount(olderWords) !== negationCount(newerWords)) return null;
  if (!definite(olderWords, lx) || !definite(newerWords, lx)) return null;
  const a = new Set(olderWords);
  const b = new Set(newerWords);
  const onlyA = [...a].filter((w) => !b.has(w) && !NEGATION_WORDS.has(w));
  const onlyB = [...b].filter((w) => !a.has(w) && !NEGATION_WORDS.has(w));
  // One side must say nothing but the other's words (or their synonyms) and the opposite: when
  // both say several words of their own, no opposite can make them disagree about one thing.
  if (Math.min(contentWords(onlyA).length, contentWords(onlyB).length) > MAX_OWN_WORDS) return null;
  for (const x of onlyA) {
    for (const y of onlyB) {
      const particle = OPPOSITE_PARTICLE.get(x)?.has(y) ?? false;
      if (!particle && !builtIn(x, y) && !lx.antonyms(x, y)) continue;
      const restA = contentWords(olderWords.filter((w) => w !== x));
      const restB = contentWords(newerWords.filter((w) => w !== y));
      if (restA.length === 0 || restB.length === 0) continue;
      if (uncovered(restA, restB, lx).length > 0 && uncovered(restB, restA, lx).length > 0)
        continue;
      const confident = particle || builtIn(x, y);
      const name = particle ? 'opposite particles' : confident ? 'antonyms' : 'antonyms (WordNet)';
      return {
        kind: 'antonym',
        score: confident ? 0.8 : 0.6,
        reason: `${name}: '${x}' versus '${y}'`,
      };
    }
  }
  return null;
}

const INDEFINITE = new Set(
  (
    'a an some several many few one two three four five six seven eight nine ten someone somebody something people men women ' +
    'children kids boys girls persons'
  ).split(' '),
);

/**
 * Whether a statement's subject is one particular thing: "the man", "Sarah", "it" — not "a man",
 * "two dogs" or "people", which may be different individuals from the other statement's.
 */
export function definite(ws: readonly string[], lx: Lexicon): boolean {
  const first = ws[0];
  if (first === undefined || INDEFINITE.has(first)) return false;
  // A bare plural ("dogs are barking") is indefinite too.
  return !(first.endsWith('s') && lx.lemmas(first).length > 1);
}
