/**
 * @module shard/index/typos — what the lexical index's typo match reads: which cue words it applies
 * to, what a word one typo away counts, and the words one edit from a term (a letter dropped,
 * inserted, replaced, or two neighbours swapped), generated for dictionary look-ups rather than
 * indexed (no memory per term; about 20–25 µs per cue word of 6–10 letters), and each index's memo
 * of them per cue word, kept exact as terms arrive. Used by LexicalIndex.query for recall; see
 * native-bench/HISTORY.md, "Recall that generalises".
 */

/**
 * Typos: a cue word of at least this many letters also matches the indexed words one edit away
 * (a letter dropped, inserted, replaced, or two swapped), each counting {@link TYPO_DISCOUNT} of the
 * cue word's weight. Shorter words are too often another word one edit away (`cat`, `car`, `cap`).
 */
export const TYPO_MIN_LETTERS = 5;
/**
 * What a word one typo away from a cue word counts, as a share of the cue word's IDF (capped by its
 * own): half a word. 1 lost 0.009 at R@10 in one development conversation written without typos
 * (native-bench/HISTORY.md, "Recall that generalises").
 */
export const TYPO_DISCOUNT = 0.5;

const LETTERS_ONLY = /^[\p{L}]+$/u;
const ASTRAL = /[\uD800-\uDFFF]/u;
const LATIN = 'abcdefghijklmnopqrstuvwxyz';

/**
 * Whether a cue term gets the typo match: at least {@link TYPO_MIN_LETTERS} letters, letters only
 * (no numbers, dates or codes), none outside the BMP (their edits would split surrogate pairs).
 */
export function typoWord(term: string): boolean {
  return term.length >= TYPO_MIN_LETTERS && LETTERS_ONLY.test(term) && !ASTRAL.test(term);
}

/**
 * Calls `visit` with every word one edit from `term` (some more than once, and possibly `term`
 * itself): a letter dropped, two neighbours swapped, a letter replaced or inserted (from a–z and
 * the word's own letters, so an accented or other script's word gets its own letters' edits). About
 * 54 × length strings; with their dictionary look-ups, 20–25 µs for a word of 6–10 letters.
 */
export function forEachOneEdit(term: string, visit: (v: string) => void): void {
  let letters = LATIN;
  for (const ch of term) if (!letters.includes(ch)) letters += ch;
  const n = term.length;
  for (let i = 0; i <= n; i++) {
    const head = term.slice(0, i);
    const tail = term.slice(i);
    for (let k = 0; k < letters.length; k++) visit(head + letters[k] + tail);
    if (i === n) break;
    const after = term.slice(i + 1);
    visit(head + after);
    if (i + 1 < n) visit(head + term[i + 1] + term[i] + term.slice(i + 2));
    for (let k = 0; k < letters.length; k++)
      if (letters[k] !== term[i]) visit(head + letters[k] + after);
  }
}

/** Cue words whose neighbours one index keeps; past this the memo starts again empty. */
const MEMO_WORDS = 1024;

/**
 * One index's memo of the indexed terms one edit from each cue word asked before (sorted, so the
 * credit order within a cue word does not depend on when a term arrived), kept exact as terms are
 * added: a term new to the index joins the lists of the cached words one edit from it. A recall
 * then pays the ~50 × length generated edits once per cue word, not once per query. Terms that
 * leave the index stay listed; the caller checks each against the index as it is.
 */
export class TypoNeighbours {
  /** Cue word length → word → its neighbours (a new term is checked only against lengths ±1). */
  readonly #memo = new Map<number, Map<string, string[]>>();
  #words = 0;
  readonly #indexed: (term: string) => boolean;

  constructor(indexed: (term: string) => boolean) {
    this.#indexed = indexed;
  }

  /** The indexed terms one edit from `word` (not `word` itself). */
  of(word: string): readonly string[] {
    const cached = this.#memo.get(word.length)?.get(word);
    if (cached !== undefined) return cached;
    if (this.#words >= MEMO_WORDS) {
      this.#memo.clear();
      this.#words = 0;
    }
    const found = new Set<string>();
    forEachOneEdit(word, (v) => {
      if (v !== word && this.#indexed(v)) found.add(v);
    });
    const list = [...found].sort();
    let byLength = this.#memo.get(word.length);
    if (byLength === undefined) this.#memo.set(word.length, (byLength = new Map()));
    byLength.set(word, list);
    this.#words += 1;
    return list;
  }

  /** A term new to the index: every remembered word one edit from it gains it. */
  added(term: string): void {
    if (this.#words === 0 || term.length < TYPO_MIN_LETTERS - 1) return;
    for (let length = term.length - 1; length <= term.length + 1; length++) {
      for (const [word, list] of this.#memo.get(length) ?? []) {
        if (word !== term && oneEditApart(word, term) && !list.includes(term)) {
          list.push(term);
          list.sort();
        }
      }
    }
  }
}

/** Whether `a` and `b` are one edit apart: a letter dropped, inserted or replaced, or two neighbours swapped. */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // replaced
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // swapped
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1); // dropped / inserted
}
