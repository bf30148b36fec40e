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

  /** How many ids (deleted ones still held included) sort in [from, before). */
  countBetween(from: string, before: string): number {
    return Math.max(0, lowerBound(this.#ids, before) - lowerBound(this.#ids, from));
  }

  /** Every id held, deleted ones not yet compacted included (so at least {@link size}). */
  get held(): number {
    return this.#ids.length;
  }

  /** About `count` ids spread evenly over the order (for estimates; O(count)). */
  *spread(count: number): Generator<string> {
    const step = Math.max(1, this.#ids.length / count);
    for (let i = 0; i < this.#ids.length; i += step) {
      const id = this.#ids[Math.floor(i)] as string;
      if (!this.#deleted.has(id)) yield id;
    }
  }

  /** Ids from newest to oldest; with `before`, only ids sorting before it. */
  *newestFirst(before: string | null = null): Generator<string> {
    for (let i = (before === null ? this.#ids.length : lowerBound(this.#ids, before)) - 1; i >= 0; i--) {
      const id = this.#ids[i] as string;
      if (!this.#deleted.has(id)) yield id;
    }
  }

  /**
   * Visits the live ids on one side of `id` (`-1`: those before it, newest first; `1`: those
   * after it, oldest first) until `visit` returns false; `id` itself need not be present. A loop
   * over the array, for hot walks where a generator's cost per id shows (recall's thread walk).
   */
  walk(id: string, direction: -1 | 1, visit: (other: string) => boolean): void {
    const at = lowerBound(this.#ids, id);
    const start = direction === -1 ? at - 1 : this.#ids[at] === id ? at + 1 : at;
    const deleted = this.#deleted.size === 0 ? null : this.#deleted;
    for (let i = start; i >= 0 && i < this.#ids.length; i += direction) {
      const other = this.#ids[i] as string;
      if (deleted?.has(other) === true) continue;
      if (!visit(other)) return;
    }
  }

  /**
   * The first id on each side of `id` (before, then after) that `accept` takes, looking at most
   * `steps` live ids each way; `id` itself need not be present.
   */
  beside(id: string, steps: number, accept: (other: string) => boolean): string[] {
    const out: string[] = [];
    const at = lowerBound(this.#ids, id);
    const from = this.#ids[at] === id ? at + 1 : at;
    for (const [start, step] of [[at - 1, -1], [from, 1]] as const) {
      let seen = 0;
      for (let i = start; i >= 0 && i < this.#ids.length && seen < steps; i += step) {
        const other = this.#ids[i] as string;
        if (this.#deleted.has(other)) continue;
        seen += 1;
        if (accept(other)) {
          out.push(other);
          break;
        }
      }
    }
    return out;
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
