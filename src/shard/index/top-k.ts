/**
 * @module shard/index/top-k — the k best document numbers of a scored set by a bounded binary heap
 * (descending score, ties by lower document number), as the lexical index ranks its list; kept apart
 * from the index so that the index file holds the scoring alone.
 */

/** The k best document numbers by score (descending; ties by lower document number). */
export function topK(docs: readonly number[], scores: Float64Array, k: number, accept: ((d: number) => boolean) | null): number[] {
  const heap: number[] = [];
  const worse = (a: number, b: number): boolean => (scores[a] as number) < (scores[b] as number) || (scores[a] === scores[b] && a > b);
  // `accept` is asked only of a document that would enter the heap (the same k as asking every
  // one: a document no better than the worst accepted one never enters), so its cost follows k
  // and the order of the list, not the number of documents scored.
  for (const d of docs) {
    if (heap.length < k) {
      if (accept !== null && !accept(d)) continue;
      heap.push(d);
      siftUp(heap, heap.length - 1, worse);
    } else if (worse(heap[0] as number, d)) {
      if (accept !== null && !accept(d)) continue;
      heap[0] = d;
      siftDown(heap, 0, worse);
    }
  }
  return heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
}

function siftUp(h: number[], i: number, worse: (a: number, b: number) => boolean): void {
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!worse(h[i] as number, h[parent] as number)) return;
    [h[i], h[parent]] = [h[parent] as number, h[i] as number];
    i = parent;
  }
}

function siftDown(h: number[], i: number, worse: (a: number, b: number) => boolean): void {
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < h.length && worse(h[l] as number, h[m] as number)) m = l;
    if (r < h.length && worse(h[r] as number, h[m] as number)) m = r;
    if (m === i) return;
    [h[i], h[m]] = [h[m] as number, h[i] as number];
    i = m;
  }
}
