/**
 * @module shard/store/ordered-ids — ids kept in sorted order (ids sort by creation time), with
 * lazy deletion so removing many ids stays cheap; supports "page after cursor".
 */

export class OrderedIds {
  #ids: string[] = [];
  #deleted = new Set<string>();

  get size(): number {
    return this.#ids.length - this.#deleted.size;
  }

  add(id: string): void {
    if (this.#deleted.delete(id)) return;
    const last = this.#ids[this.#ids.length - 1];
    if (last === undefined || id > last) {
      this.#ids.push(id);
      return;
    }
    const at = lowerBound(this.#ids, id);
    if (this.#ids[at] !== id) this.#ids.splice(at, 0, id);
  }

  delete(id: string): void {
    const at = lowerBound(this.#ids, id);
    if (this.#ids[at] !== id) return;
    this.#deleted.add(id);
    if (this.#deleted.size > 1024 && this.#deleted.size * 4 > this.#ids.length) this.#compact();
  }

  /** Ids strictly after `cursor` (or from the start), in order. */
  *after(cursor: string | null): Generator<string> {
    const start = cursor === null ? 0 : upperBound(this.#ids, cursor);
    for (let i = start; i < this.#ids.length; i++) {
      const id = this.#ids[i] as string;
      if (!this.#deleted.has(id)) yield id;
    }
  }

  /** About `count` ids spread evenly over the order (for estimates; O(count)). */
  *spread(count: number): Generator<string> {
    const step = Math.max(1, this.#ids.length / count);
    for (let i = 0; i < this.#ids.length; i += step) {
      const id = this.#ids[Math.floor(i)] as string;
      if (!this.#deleted.has(id)) yield id;
    }
  }

  /** Ids from newest to oldest. */
  *newestFirst(): Generator<string> {
    for (let i = this.#ids.length - 1; i >= 0; i--) {
      const id = this.#ids[i] as string;
      if (!this.#deleted.has(id)) yield id;
    }
  }

  #compact(): void {
    this.#ids = this.#ids.filter((id) => !this.#deleted.has(id));
    this.#deleted.clear();
  }
}

function lowerBound(arr: readonly string[], key: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((arr[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(arr: readonly string[], key: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((arr[mid] as string) <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
