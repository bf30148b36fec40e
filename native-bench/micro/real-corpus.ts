/**
 * @module native-bench/micro/real-corpus — real English sentences found on this machine (package
 * READMEs and JSDoc in node_modules, Debian docs, Python docstrings), so the vector benchmark can
 * also run on real model embeddings. Deterministic: sorted, then shuffled with a fixed seed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../lib/prng.ts';

const ROOTS: ReadonlyArray<[string, RegExp]> = [
  ['node_modules', /\.(md|d\.ts)$/],
  ['/usr/share/doc', /\.(md|txt)$/],
  ['/usr/lib/python3.11', /\.py$/],
];

function* files(dir: string, match: RegExp, depth = 0): Generator<string> {
  if (depth > 8 || !existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p, match, depth + 1);
    else if (match.test(e.name)) yield p;
  }
}

/** Prose of a file: doc comments of .d.ts, docstrings of .py, the text of Markdown without code. */
function prose(path: string, text: string): string {
  if (path.endsWith('.d.ts'))
    return [...text.matchAll(/\/\*\*([\s\S]*?)\*\//g)]
      .map((m) => (m[1] ?? '').replace(/^\s*\*\s?(@.*)?/gm, ' '))
      .join(' ');
  if (path.endsWith('.py'))
    return [...text.matchAll(/"""([\s\S]*?)"""/g)].map((m) => m[1] ?? '').join(' ');
  return text.replace(/```[\s\S]*?```/g, ' ');
}

function isSentence(s: string): boolean {
  if (s.length < 40 || s.length > 300 || !/^[A-Z][a-z]/.test(s) || /[`|<>{}[\]#*_=\\@]/.test(s))
    return false;
  return (s.match(/[a-zA-Z ]/g) ?? []).length / s.length >= 0.85;
}

/** Up to `max` distinct sentences, in a seeded random order. */
export function realSentences(max: number, root: string): string[] {
  const found = new Set<string>();
  for (const [dir, match] of ROOTS) {
    for (const file of files(dir.startsWith('/') ? dir : join(root, dir), match)) {
      const text = prose(file, readFileSync(file, 'utf8')).replace(/\s+/g, ' ');
      for (const s of text.split(/(?<=[.!?])\s+/)) if (isSentence(s)) found.add(s);
    }
  }
  const all = [...found].sort();
  const rng = new Rng(99);
  for (let i = all.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [all[i], all[j]] = [all[j] as string, all[i] as string];
  }
  return all.slice(0, max);
}
