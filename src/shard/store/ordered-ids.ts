/**
 * @module shard/store/ordered-ids — ids kept in sorted order (ids sort by creation time), with
 * lazy deletion so removing many ids stays cheap; supports "page after cursor". Beside each id it
 * keeps a small tag and a time (the workspace's group and creation time of the memory), so hot
 * walks along the order read two arrays instead of a record per id ({@link OrderedIds.columns}).
 */

/** The tag of a deleted id that is still held (walks skip it without counting it). */
export const DELETED_TAG = -2;

/** The arrays behind an {@link OrderedIds}, aligned by position: valid until its next change. */
export interface OrderColumns {
  readonly ids: readonly string[];
  /** {@link DELETED_TAG} for a deleted id, else the tag it was added with. */
  readonly tags: readonly number[];
  readonly times: readonly number[];
}

export class OrderedIds {
  #ids: string[] = [];
  #tags: number[] = [];
  #times: number[] = [];
  #deleted = new Set<string>();
  #layout = 0;

  get size(): number {
    return this.#ids.length - this.#deleted.size;
  }

  /**
   * Adds `id` with its `tag` (a small integer ≥ 0 or −1, never {@link DELETED_TAG}) and `time`;
   * for an id already held (or deleted and not yet compacted), replaces its tag and time.
   */
  add(id: string, tag = 0, time = 0): void {
    const last = this.#ids[this.#ids.length - 1];
    if (last === undefined || id > last) {
      this.#ids.push(id);
      this.#tags.push(tag);
      this.#times.push(time);
      return;
    }
    const at = lowerBound(this.#ids, id);
    if (this.#ids[at] === id) this.#deleted.delete(id);
    else {
      this.#layout += 1;
      this.#ids.splice(at, 0, id);
      this.#tags.splice(at, 0, tag);
      this.#times.splice(at, 0, time);
    }
    this.#tags[at] = tag;
    this.#times[at] = time;
  }

  delete(id: string): void {
    const at = lowerBound(this.#ids, id);
    if (this.#ids[at] !== id) return;
    this.#deleted.add(id);
    this.#tags[at] = DELETED_TAG;
    if (this.#deleted.size > 1024 && this.#deleted.size * 4 > this.#ids.length) this.#compact();
  }

  /** The ids, tags and times by position (read-only; valid until the next add or delete). */
  columns(): OrderColumns {
    return { ids: this.#ids, tags: this.#tags, times: this.#times };
  }

  /**
   * Changes whenever an id's position changes (an insertion before the end, a compaction); an
   * append or a delete keeps every position, so a position remembered under one layout still names
   * the same id.
   */
  get layout(): number {
    return this.#layout;
  }

  /** The position `id` has, or would have, in {@link columns}. */
  position(id: string): number {
    return lowerBound(this.#ids, id);
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
    for (
      let i = (before === null ? this.#ids.length : lowerBound(this.#ids, before)) - 1;
      i >= 0;
      i--
    ) {
      const id = this.#ids[i] as string;
      if (!this.#deleted.has(id)) yield id;
    }
  }

  #compact(): void {
    this.#layout += 1;
    let kept = 0;
    for (let i = 0; i < this.#ids.length; i++) {
      if (this.#tags[i] === DELETED_TAG) continue;
      this.#ids[kept] = this.#ids[i] as string;
      this.#tags[kept] = this.#tags[i] as number;
      this.#times[kept] = this.#times[i] as number;
      kept += 1;
    }
    this.#ids.length = kept;
    this.#tags.length = kept;
    this.#times.length = kept;
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
