/**
 * @module shard/index/typos — what the lexical index's typo match reads: which cue words it applies
 * to, what a word one typo away counts, and the words one edit from a term (a letter dropped,
 * inserted, replaced, or two neighbours swapped), generated for dictionary look-ups rather than
 * indexed (no memory per term; about 20–25 µs per cue word of 6–10 letters). Used by
 * LexicalIndex.query for recall; see README, "Recall that generalises".
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
 * (README, "Recall that generalises").
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
    for (let k = 0; k < letters.length; k++) if (letters[k] !== term[i]) visit(head + letters[k] + after);
  }
}
