/**
 * @module shard/store/expiry-queue — memories that expire, ordered by expiry time (a binary
 * min-heap). Entries go stale when a memory is revised or deleted; `due` checks each entry
 * against the memory's current expiry, so stale entries are dropped instead of tracked.
 */

interface Entry {
  at: number;
  id: string;
}

export class ExpiryQueue {
  readonly #heap: Entry[] = [];

  get size(): number {
    return this.#heap.length;
  }

  /** Earliest expiry queued (possibly stale), or null. */
  get next(): number | null {
    return this.#heap[0]?.at ?? null;
  }

  add(id: string, at: number): void {
    const heap = this.#heap;
    heap.push({ at, id });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as Entry).at <= at) break;
      heap[i] = heap[parent] as Entry;
      i = parent;
    }
    heap[i] = { at, id };
  }

  /**
   * Removes and returns the ids whose entry is due at `now` and still current, i.e.
   * `currentExpiry(id)` is the entry's time (null: the memory is gone or no longer expires).
   */
  due(now: number, currentExpiry: (id: string) => number | null): string[] {
    const out = new Set<string>();
    while (this.#heap.length > 0 && (this.#heap[0] as Entry).at <= now) {
      const top = this.#pop();
      if (currentExpiry(top.id) === top.at) out.add(top.id);
    }
    return [...out];
  }

  #pop(): Entry {
    const heap = this.#heap;
    const top = heap[0] as Entry;
    const last = heap.pop() as Entry;
    if (heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      const minAt = (): number => (min === i ? last.at : (heap[min] as Entry).at);
      if (l < heap.length && (heap[l] as Entry).at < minAt()) min = l;
      if (r < heap.length && (heap[r] as Entry).at < minAt()) min = r;
      if (min === i) break;
      heap[i] = heap[min] as Entry;
      i = min;
    }
    heap[i] = last;
    return top;
  }
}
