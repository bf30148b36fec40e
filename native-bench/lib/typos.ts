/**
 * @module native-bench/lib/typos — text misspelled as people type, for the retrieval bench's
 * `--typos P`: each word of four letters or more gets one typo with probability P (a letter
 * dropped, doubled, replaced by another, or swapped with its neighbour), drawn from a seeded
 * generator, so every configuration and run reads the same copy.
 */
import type { Rng } from './prng.ts';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

export function misspell(text: string, p: number, rng: Rng): string {
  return text.replace(/\p{L}{4,}/gu, (w) => (rng.next() < p ? typo(w, rng) : w));
}

function typo(w: string, rng: Rng): string {
  const i = rng.int(w.length);
  const kind = rng.int(4);
  const other = LETTERS[rng.int(LETTERS.length)] ?? 'e';
  if (kind === 0) return w.slice(0, i) + w.slice(i + 1);
  if (kind === 1) return w.slice(0, i + 1) + (w[i] ?? '') + w.slice(i + 1);
  if (kind === 2) return w.slice(0, i) + (other === w[i] ? 'e' : other) + w.slice(i + 1);
  const j = i + 1 < w.length ? i + 1 : i - 1;
  const [a, b] = [Math.min(i, j), Math.max(i, j)];
  return w.slice(0, a) + (w[b] ?? '') + (w[a] ?? '') + w.slice(b + 1);
}
