/**
 * @module analysis/statement-terms — the words a statement is compared by: its normalised tokens,
 * their stems, its content terms (negations and revision wording left out) and the numbers it
 * names (digits, clock times, percentages, months, number words), and the set measures over them.
 */
import { NEGATION_WORDS } from './contradiction-rules.ts';
import { tokens } from './summarize.ts';

/** Words that carry no content of their own for comparing the two sides. */
const FILLER = new Set([
  'now',
  'longer',
  'anymore',
  'changed',
  'moved',
  'switched',
  'updated',
  'renamed',
  'replaced',
  'instead',
  'actually',
  'nowadays',
  'became',
  'become',
  'yet',
  'still',
  'already',
]);

export function normalise(text: string): string {
  return text.replace(/[\u2018\u2019]/g, "'");
}

function words(text: string): string[] {
  return lowerWords(text.toLowerCase());
}

/** The words of a lower-case text (`words` of a text is this of its lower case). */
export function lowerWords(lower: string): string[] {
  return lower.match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [];
}

/** Plural / third-person -s off, possessive 's off: "speaks" and "speak", "Ravi's" and "Ravi" compare equal. */
export function stem(w: string): string {
  const x = w.endsWith("'s") ? w.slice(0, -2) : w;
  if (x.length > 4 && x.endsWith('ies')) return `${x.slice(0, -3)}y`;
  if (x.length > 4 && /(ss|sh|ch|x|z)es$/.test(x)) return x.slice(0, -2);
  if (
    x.length > 3 &&
    x.endsWith('s') &&
    !x.endsWith('ss') &&
    !x.endsWith('us') &&
    !x.endsWith('is')
  )
    return x.slice(0, -1);
  return x;
}

function term(w: string): string | null {
  if (NEGATION_WORDS.has(w) || FILLER.has(w)) return null;
  const t = tokens(w)[0];
  return t === undefined ? null : stem(t);
}

/** Content terms: normalised tokens without negations and revision wording. */
export function terms(text: string): Set<string> {
  return termsOf(words(text));
}

/** {@link terms} of a text's words (its lower-case words, as {@link lowerWords} reads them). */
export function termsOf(ws: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const w of ws) {
    let t = termMemo.get(w);
    if (t === undefined) {
      t = term(w);
      if (termMemo.size >= TERMS_MAX) termMemo.clear();
      termMemo.set(w, t);
    }
    if (t !== null) out.add(t);
  }
  return out;
}

/** Each word's term, memoised (a pure function of the word; bounded: cleared at TERMS_MAX words). */
const termMemo = new Map<string, string | null>();
const TERMS_MAX = 20_000;

/** Both sides say something the other does not: likely different subjects, not a disagreement. */
export function bothAdd(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return [...a].some((w) => !b.has(w)) && [...b].some((w) => !a.has(w));
}

/** Digits not glued to a word ("IPv6", "HTTP/2" are names), clock times, percentages, months. */
const NUMBER =
  /(?<![\p{L}/])\d+(?:[.,:-]\d+)*(?:am|pm|%)?|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/giu;

const NUMBER_WORDS: Record<string, string> = {
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
  ten: '10',
  eleven: '11',
  twelve: '12',
  twenty: '20',
  thirty: '30',
  forty: '40',
  fifty: '50',
  hundred: '100',
  thousand: '1000',
  first: '1st',
  third: '3rd',
  fourth: '4th',
  fifth: '5th',
  sixth: '6th',
  seventh: '7th',
  eighth: '8th',
  ninth: '9th',
  tenth: '10th',
};

/** The numbers a text names; `ws` its words, when already read ({@link lowerWords} of its lower case). */
export function numbersIn(text: string, ws: readonly string[] = words(text)): Set<string> {
  const out = new Set(
    (text.match(NUMBER) ?? []).map((x) =>
      x.toLowerCase().slice(0, /^[a-z]/i.test(x) ? 3 : undefined),
    ),
  );
  for (const w of ws) {
    const n = NUMBER_WORDS[w];
    if (n !== undefined) out.add(n);
  }
  return out;
}

export const NUMBER_TERMS = [
  ...Object.keys(NUMBER_WORDS),
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
  'january',
  'february',
  'march',
  'april',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter += 1;
  return inter / (a.size + b.size - inter);
}

export function without(s: ReadonlySet<string>, ...ws: string[]): Set<string> {
  const out = new Set(s);
  for (const w of ws) out.delete(w);
  return out;
}
