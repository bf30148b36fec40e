/**
 * @module shard/index/tokenize — the one tokenizer behind the lexical index and its queries:
 * lower-cased (NFKC first), split into Unicode letter/number runs; a decimal or grouped number
 * (`3.5`, `1,000`) stays one token; the possessive `'s` goes; English stop words go; scripts
 * written without spaces (Han, Hiragana, Katakana, Hangul, Thai) become overlapping character
 * bigrams. Each remaining word is lightly stemmed ({@link stem}) so `paints`, `painted` and
 * `painting` meet. Names, numbers and dates survive as tokens: they are what a lexical match is for.
 */

const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)?(?:[.,]\p{N}+)*/gu;
const NO_SPACE_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
const NUMERIC = /^\p{N}/u;

/** Common English function words: they carry no topic, and every memory has them. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves may might must shall also yes yeah oh ok okay hey hi really much many ' +
    'get got im ive id youre thats its dont didnt doesnt cant wont isnt arent wasnt'
  ).split(' '),
);

/** Tokens of `text`, in order, repeats kept (callers count term frequencies). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
    const word = match[0];
    if (NO_SPACE_SCRIPT.test(word)) {
      pushBigrams(word, out);
      continue;
    }
    const token = normalizeWord(word);
    if (token !== null) out.push(token);
  }
  return out;
}

function normalizeWord(raw: string): string | null {
  if (NUMERIC.test(raw)) return raw.replace(/,/g, '');
  const word = raw.replace(/['’]s$/u, '').replace(/['’]/gu, '');
  if (word.length < 2 || STOP_WORDS.has(word)) return null;
  return stem(word);
}

/** Runs of no-space scripts as overlapping bigrams (one character alone when the run is one long). */
function pushBigrams(run: string, out: string[]): void {
  const chars = [...run];
  if (chars.length === 1) {
    out.push(run);
    return;
  }
  for (let i = 0; i + 1 < chars.length; i++) out.push(`${chars[i]}${chars[i + 1]}`);
}

const VOWEL = /[aeiouy]/;

/**
 * A light English stemmer: plural `-ies/-es/-s`, then `-ing` / `-ed` with the doubled consonant
 * undone (`running` → `run`), then a final `-e` (`bake`, `baked`, `baking` → `bak`). It only has to
 * send a word's common forms to one key, the same way for memories and cues; it does not need to
 * give real words. Short words are left alone.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || !/^[a-z]+$/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  const suffix = w.endsWith('ing') ? 3 : w.endsWith('ed') ? 2 : 0;
  if (suffix > 0 && w.length - suffix >= 3 && VOWEL.test(w.slice(0, -suffix))) {
    w = w.slice(0, -suffix);
    if (/([b-df-hj-np-rtv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  }
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}
