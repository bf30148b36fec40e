/**
 * @module analysis/contradiction-statement — one statement as the contradiction classifier
 * (analysis/contradiction) reads it: its normalised opening, content terms, words (whole and per
 * clause, with their negations and content words counted once), numbers and revision wording;
 * memoised by text, since a check compares one new statement with up to 9 others and the same
 * memories come back in later checks.
 */
import { readable, Side, wordsOfLower } from './contradiction-rules.ts';
import {
  lowerWords,
  normalise,
  NUMBER_TERMS,
  numbersIn,
  termsOf,
  without,
} from './statement-terms.ts';

/** Statements are compared on their opening: long documents are not single claims. */
export const MAX_CHARS = 600;
const REVISION =
  /\b(now|no longer|any ?more|changed|moved|switched|updated|renamed|replaced|instead|actually|nowadays|these days|as of|from now on|has become|became|used to)\b/i;
/** Where one clause of a statement ends and another begins: a sentence's end, a semicolon, ", but". */
const CLAUSE_BREAK = /[.!?;]+(?:\s+|$)|,?\s+but\s+/i;
/** The first character of a word (analysis/contradiction-rules `words`). */
const WORDY = /[\p{L}\p{N}]/u;

/** What the rules read of one statement (read-only: shared by every pair it is in). */
export interface Statement {
  text: string;
  terms: ReadonlySet<string>;
  /** The words, their negations and content words. */
  side: Side;
  /** The same of each clause, when the statement has more than one: see {@link clausesOf}. */
  clauses?: readonly Side[];
  numbers: ReadonlySet<string>;
  revision: boolean;
  /** The terms without number words and months (the numbers rule's subject), built when first asked. */
  subject?: ReadonlySet<string>;
}

let statements = new Map<string, Statement>();
/**
 * Statements kept, at most: the new statement of a check and the stored ones it is compared with
 * (when full, the older half of the memo is dropped and the newer kept).
 */
const STATEMENTS_MAX = 1024;
let older = new Map<string, Statement>();

export function statement(raw: string): Statement {
  // What is read of a statement depends on its opening alone, which is the key.
  const opening = raw.length > MAX_CHARS ? raw.slice(0, MAX_CHARS) : raw;
  let s = statements.get(opening);
  if (s !== undefined) return s;
  s = older.get(opening) ?? parse(opening);
  if (statements.size >= STATEMENTS_MAX / 2) {
    older = statements;
    statements = new Map();
  }
  statements.set(opening, s);
  return s;
}

function parse(opening: string): Statement {
  const text = normalise(opening);
  // The text's words are read once for the terms and numbers, and once more for the rules only
  // when they read it differently ("no one", curly apostrophes).
  const lower = text.toLowerCase();
  const ws = lowerWords(lower);
  return {
    text,
    terms: termsOf(ws),
    side: new Side(readable(lower) === lower ? ws : wordsOfLower(lower)),
    numbers: numbersIn(text, ws),
    revision: REVISION.test(text),
  };
}

/**
 * The words of each clause of a statement (see {@link CLAUSE_BREAK}) when it has more than one,
 * else none; read when first asked (only a negated statement's are).
 */
export function clausesOf(s: Statement): readonly Side[] {
  if (s.clauses === undefined) {
    // The rules' words of a piece are some exactly when its readable lower case has a letter or digit.
    const clauses = s.text
      .split(CLAUSE_BREAK)
      .map((piece) => piece.toLowerCase())
      .filter((piece) => WORDY.test(readable(piece)));
    s.clauses = clauses.length > 1 ? clauses.map((c) => new Side(wordsOfLower(c))) : [];
  }
  return s.clauses;
}

/** {@link Statement.subject}, kept on the statement once built. */
export function subjectTerms(s: Statement): ReadonlySet<string> {
  s.subject ??= without(s.terms, ...NUMBER_TERMS);
  return s.subject;
}
