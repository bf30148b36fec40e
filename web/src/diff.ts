/**
 * @module diff — which words two texts do not share, for marking them side by side: a longest
 * common subsequence over the words (compared without case and surrounding punctuation); every
 * word outside it is marked. Texts are split into words and the spaces between them, so joining a
 * side's parts gives its text back exactly.
 */

export interface Part {
  text: string;
  /** A word the other text does not have at this place. */
  marked: boolean;
}

/** Longest side, in words, that is compared; a longer pair is shown unmarked. */
const MAX_WORDS = 600;

function split(text: string): string[] {
  return text.split(/(\s+)/).filter((p) => p !== '');
}

function key(word: string): string {
  return word.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
}

/** Both texts as parts, each word marked when it is not in their longest common subsequence of words. */
export function diffWords(a: string, b: string): { a: Part[]; b: Part[] } {
  const pa = split(a);
  const pb = split(b);
  const wa = pa.map((p, i) => ({ i, k: key(p) })).filter((w) => !/^\s+$/.test(pa[w.i] as string));
  const wb = pb.map((p, i) => ({ i, k: key(p) })).filter((w) => !/^\s+$/.test(pb[w.i] as string));
  const plain = (parts: string[]): Part[] => parts.map((text) => ({ text, marked: false }));
  if (wa.length > MAX_WORDS || wb.length > MAX_WORDS) return { a: plain(pa), b: plain(pb) };
  const n = wa.length;
  const m = wb.length;
  // lcs[i][j]: the longest common subsequence of wa[i..] and wb[j..], in a flat array.
  const lcs = new Uint16Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] =
        wa[i]?.k === wb[j]?.k
          ? (lcs[(i + 1) * (m + 1) + j + 1] as number) + 1
          : Math.max(lcs[(i + 1) * (m + 1) + j] as number, lcs[i * (m + 1) + j + 1] as number);
    }
  }
  const keptA = new Set<number>();
  const keptB = new Set<number>();
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (wa[i]?.k === wb[j]?.k) {
      keptA.add((wa[i] as { i: number }).i);
      keptB.add((wb[j] as { i: number }).i);
      i++;
      j++;
    } else if ((lcs[(i + 1) * (m + 1) + j] as number) >= (lcs[i * (m + 1) + j + 1] as number)) i++;
    else j++;
  }
  const mark = (parts: string[], kept: Set<number>): Part[] =>
    parts.map((text, i) => ({ text, marked: !/^\s+$/.test(text) && !kept.has(i) }));
  return { a: mark(pa, keptA), b: mark(pb, keptB) };
}
