/**
 * @module analysis/lexicon-tables — WordNet's word relations packed into a few strings and typed
 * arrays, so that the thread that parses them (a worker: shard/lexicon-worker) can hand them to a
 * shard by transfer, and the shard looks words up by binary search without building anything.
 */

/** Sorted integer keys, each with a list of integers (`values[start[i] .. start[i + 1]]`). */
export interface IntLists {
  keys: Int32Array;
  start: Int32Array;
  values: Int32Array;
}

export interface LexiconTables {
  /** Every lemma, sorted, each followed by '\n', in one string; `lemmaStart` holds their start offsets. */
  lemmas: string;
  lemmaStart: Int32Array;
  /** Per lemma (by its index), its commonest synsets (key: offset · 4 + part of speech): `senses[senseStart[i] .. senseStart[i + 1]]`. */
  senseStart: Int32Array;
  senses: Int32Array;
  /** Synset key → its hypernyms' keys. */
  hypernyms: IntLists;
  /** An adjective satellite's synset key → its head synsets. */
  heads: IntLists;
  /** A head synset → the head synsets whose words are its antonyms. */
  opposedHeads: IntLists;
  /** Per lemma index, the indexes of its antonyms (lemma-level pointers). */
  antonyms: IntLists;
}

export interface ParsedWordNet {
  senses: Map<string, number[]>;
  hypernyms: Map<number, number[]>;
  heads: Map<number, number[]>;
  opposedHeads: Map<number, number[]>;
  antonyms: Map<string, Set<string>>;
}

export function packTables(p: ParsedWordNet): LexiconTables {
  const lemmas = [...p.senses.keys()].sort();
  const lemmaStart = new Int32Array(lemmas.length + 1);
  const senseStart = new Int32Array(lemmas.length + 1);
  let chars = 0;
  let count = 0;
  lemmas.forEach((l, i) => {
    lemmaStart[i] = chars;
    senseStart[i] = count;
    chars += l.length + 1;
    count += (p.senses.get(l) as number[]).length;
  });
  lemmaStart[lemmas.length] = chars;
  senseStart[lemmas.length] = count;
  const senses = Int32Array.from(lemmas.flatMap((l) => p.senses.get(l) as number[]));
  const index = new Map(lemmas.map((l, i) => [l, i]));
  const antonyms = new Map<number, number[]>();
  for (const [a, set] of p.antonyms) {
    const i = index.get(a);
    const js = [...set].flatMap((b) => index.get(b) ?? []);
    if (i !== undefined && js.length > 0) antonyms.set(i, js);
  }
  return {
    lemmas: `${lemmas.join('\n')}\n`,
    lemmaStart,
    senseStart,
    senses,
    hypernyms: packLists(p.hypernyms),
    heads: packLists(p.heads),
    opposedHeads: packLists(p.opposedHeads),
    antonyms: packLists(antonyms),
  };
}

/** The typed arrays' buffers, to transfer the tables to another thread without copying them. */
export function transferList(t: LexiconTables): ArrayBuffer[] {
  const arrays = [
    t.lemmaStart,
    t.senseStart,
    t.senses,
    ...[t.hypernyms, t.heads, t.opposedHeads, t.antonyms].flatMap((l) => [
      l.keys,
      l.start,
      l.values,
    ]),
  ];
  return arrays.map((a) => a.buffer as ArrayBuffer);
}

function packLists(map: Map<number, number[]>): IntLists {
  const keys = Int32Array.from([...map.keys()].sort((a, b) => a - b));
  const start = new Int32Array(keys.length + 1);
  let n = 0;
  keys.forEach((k, i) => {
    start[i] = n;
    n += (map.get(k) as number[]).length;
  });
  start[keys.length] = n;
  const values = new Int32Array(n);
  keys.forEach((k, i) => {
    values.set(map.get(k) as number[], start[i]);
  });
  return { keys, start, values };
}

/** The list of `key` (empty when absent). */
export function listOf(l: IntLists, key: number): number[] {
  let lo = 0;
  let hi = l.keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const k = l.keys[mid] as number;
    if (k === key) return Array.from(l.values.subarray(l.start[mid], l.start[mid + 1]));
    if (k < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return [];
}

/** A lemma's index in the tables, or -1. */
export function lemmaIndex(t: LexiconTables, word: string): number {
  let lo = 0;
  let hi = t.lemmaStart.length - 2;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const l = lemmaAt(t, mid);
    if (l === word) return mid;
    if (l < word) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The senses of a lemma (empty when WordNet does not know it). */
export function sensesOf(t: LexiconTables, word: string): number[] {
  const i = lemmaIndex(t, word);
  return i < 0 ? [] : Array.from(t.senses.subarray(t.senseStart[i], t.senseStart[i + 1]));
}

/** The lemma at an index. */
export function lemmaAt(t: LexiconTables, i: number): string {
  return t.lemmas.slice(t.lemmaStart[i], (t.lemmaStart[i + 1] as number) - 1);
}

/** The antonyms of a lemma (lemma-level pointers; empty when none). */
export function antonymsOf(t: LexiconTables, word: string): string[] {
  const i = lemmaIndex(t, word);
  return i < 0 ? [] : listOf(t.antonyms, i).map((j) => lemmaAt(t, j));
}
