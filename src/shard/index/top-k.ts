/**
 * @module shard/index/top-k — the k best document numbers of a scored set by a bounded binary heap
 * (descending score, ties by lower document number), as the lexical index ranks its list, and the
 * bounded heap behind it, which the index's pruned search fills as it goes; kept apart from the
 * index so that the index files hold the scoring alone.
 */

/** The k best document numbers by score (descending; ties by lower document number). */
export function topK(
  docs: readonly number[],
  scores: Float64Array,
  k: number,
  accept: ((d: number) => boolean) | null,
): number[] {
  const top = new BoundedTop(
    k,
    (a, b) => (scores[a] as number) < (scores[b] as number) || (scores[a] === scores[b] && a > b),
  );
  // `accept` is asked only of a document that would enter the heap (the same k as asking every
  // one: a document no better than the worst accepted one never enters), so its cost follows k
  // and the order of the list, not the number of documents scored.
  for (const d of docs) if (top.admits(d) && (accept === null || accept(d))) top.add(d);
  return top.sorted();
}

/** The k best of the document numbers added so far by a `worse` order, in a bounded binary heap. */
export class BoundedTop {
  readonly #heap: number[] = [];
  readonly #k: number;
  readonly #worse: (a: number, b: number) => boolean;

  constructor(k: number, worse: (a: number, b: number) => boolean) {
    this.#k = k;
    this.#worse = worse;
  }

  /** The k it keeps. */
  get capacity(): number {
    return this.#k;
  }

  /** Whether k documents are held. */
  get full(): boolean {
    return this.#heap.length >= this.#k;
  }

  /** The worst document held (undefined when none is). */
  get worst(): number | undefined {
    return this.#heap[0];
  }

  /** Whether `d` would be kept: fewer than k are held, or it is better than the worst held. */
  admits(d: number): boolean {
    if (this.#heap.length < this.#k) return true;
    return this.#heap.length > 0 && this.#worse(this.#heap[0] as number, d);
  }

  /** Keeps `d` (which {@link admits} said would be kept), dropping the worst when k are held. */
  add(d: number): void {
    const heap = this.#heap;
    if (heap.length < this.#k) {
      heap.push(d);
      siftUp(heap, heap.length - 1, this.#worse);
    } else {
      heap[0] = d;
      siftDown(heap, 0, this.#worse);
    }
  }

  /** The documents held, best first. */
  sorted(): number[] {
    const worse = this.#worse;
    return [...this.#heap].sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
  }
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
