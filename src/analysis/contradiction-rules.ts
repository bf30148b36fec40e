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
  return wordsOfLower(text.toLowerCase());
}

/** {@link words} of a lower-case text. */
export function wordsOfLower(lower: string): string[] {
  return readable(lower).match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [];
}

/** A lower-case text as the rules read its words: curly apostrophes straight, "no one" one word. */
export function readable(lower: string): string {
  return lower.replace(/[\u2018\u2019]/g, "'").replace(/\bno one\b/g, 'noone');
}

export function negationCount(ws: readonly string[]): number {
  return ws.filter((w) => NEGATION_WORDS.has(w) || w.endsWith("n't")).length;
}

/** Content words in order: no function words, negations (a "nobody" becomes "person"), possessive 's off. */
export function contentWords(ws: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of ws) {
    const w = contentWord(raw);
    if (w !== null) out.push(w);
  }
  return out;
}

function contentWord(raw: string): string | null {
  const w = raw.endsWith("'s") ? raw.slice(0, -2) : raw;
  if (NO_PERSON.has(w) || SOME_PERSON.has(w)) return 'person';
  return !NEGATION_WORDS.has(w) && !w.endsWith("n't") && !FUNCTION_WORDS.has(w) && w.length > 1
    ? w
    : null;
}

/** `contentWords(ws).length > max`, counted no further than needed. */
function moreContent(ws: readonly string[], max: number): boolean {
  let n = 0;
  for (const raw of ws) if (contentWord(raw) !== null && ++n > max) return true;
  return false;
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
 * What the rules read of one list of words (a statement, or one clause of it), computed once when
 * first read: a check compares one new statement with up to 9 others, and the same statements
 * come back in later checks.
 */
export class Side {
  readonly words: readonly string[];
  /** {@link negationCount} of the words. */
  readonly negations: number;
  #content: readonly string[] | undefined;
  #set: ReadonlySet<string> | undefined;
  #thereIsNo: boolean | undefined;

  constructor(words: readonly string[]) {
    this.words = words;
    this.negations = negationCount(words);
  }

  /** {@link contentWords} of the words. */
  get content(): readonly string[] {
    this.#content ??= contentWords(this.words);
    return this.#content;
  }

  /** The distinct words. */
  get set(): ReadonlySet<string> {
    this.#set ??= new Set(this.words);
    return this.#set;
  }

  /** The words say there is no such thing ({@link THERE_IS_NO}: it reads at most their first three). */
  get thereIsNo(): boolean {
    this.#thereIsNo ??= THERE_IS_NO.test(this.words.slice(0, 3).join(' '));
    return this.#thereIsNo;
  }
}

/**
 * `lx.saidBy(side.content)`, built once for the side and lexicon of the latest call and kept for the
 * next few sides (a check asks for the new statement's with each of its pairs): the test is a pure
 * function of the words and the lexicon, so keeping it changes no answer.
 */
const saidTests = new Map<Side, { lx: Lexicon; test: (word: string) => boolean }>();
const SAID_MAX = 64;

export function saidOf(side: Side, lx: Lexicon): (word: string) => boolean {
  const kept = saidTests.get(side);
  if (kept !== undefined && kept.lx === lx) return kept.test;
  const test = lx.saidBy(side.content);
  if (saidTests.size >= SAID_MAX) saidTests.clear();
  saidTests.set(side, { lx, test });
  return test;
}

/**
 * Negation scope: one side negates ("there is no man …", "nobody …", "… is not …") and every content
 * word the negation governs is said by the other side, exactly or more specifically ("no person
 * boiling noodles" / "a woman is boiling noodles in water"). A negated side that adds a detail of
 * its own ("no man running down the road" / "a man is running") does not contradict: it denies the
 * detail, not the claim.
 */
export function negationScope(older: Side, newer: Side, lx: Lexicon): RuleFinding | null {
  const no = older.negations;
  const nn = newer.negations;
  if (no === nn || Math.min(no, nn) > 0) return null;
  const [negated, plain] = nn > no ? [newer, older] : [older, newer];
  const claim = negated.content;
  const other = plain.content;
  if (claim.length < 2) return null;
  const there = negated.thereIsNo;
  // "A woman is not eating" is about some woman: it denies nothing about a girl, as "there is no woman eating" would.
  if (!there && !sameSubject(claim[0] as string, other[0], lx)) return null;
  if (!numbersAgree(negated.words, plain.words)) return null;
  // Last, as it reads the lexicon most (each condition is pure, so their order changes no answer).
  const said = saidOf(plain, lx);
  for (const c of claim) if (!said(c)) return null;
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
  older: Side,
  newer: Side,
  lx: Lexicon,
  builtIn: (a: string, b: string) => boolean,
): RuleFinding | null {
  if (older.negations !== newer.negations) return null;
  const [olderWords, newerWords] = [older.words, newer.words];
  if (!definite(olderWords, lx) || !definite(newerWords, lx)) return null;
  const a = older.set;
  const b = newer.set;
  const onlyA = [...a].filter((w) => !b.has(w) && !NEGATION_WORDS.has(w));
  const onlyB = [...b].filter((w) => !a.has(w) && !NEGATION_WORDS.has(w));
  // One side must say nothing but the other's words (or their synonyms) and the opposite: when
  // both say several words of their own, no opposite can make them disagree about one thing.
  if (moreContent(onlyA, MAX_OWN_WORDS) && moreContent(onlyB, MAX_OWN_WORDS)) return null;
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
