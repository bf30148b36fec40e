/**
 * @module shard/store/event-order — live memories in event-time order: sorted by (occurred_at, id),
 * so memories written out of order (back-filled history, a conversation ingested late) sit where
 * they happened. Beside each id it keeps a small tag and its event time, as
 * {@link OrderedIds} does for creation order, so the walks of recall (neighbours, threads, time
 * windows, newest first) read two arrays instead of a record per id. Deletion is lazy: a deleted
 * entry keeps its place with {@link DELETED_TAG} until enough have gathered to compact.
 */
import { DELETED_TAG, type OrderColumns } from './ordered-ids.ts';

export class EventOrder {
  #ids: string[] = [];
  #tags: number[] = [];
  #times: number[] = [];
  #deleted = 0;
  #layout = 0;

  /** Entries not deleted. */
  get size(): number {
    return this.#ids.length - this.#deleted;
  }

  /** Every entry held, deleted ones not yet compacted included (so at least {@link size}). */
  get held(): number {
    return this.#ids.length;
  }

  /** Changes whenever an entry's position changes (an insertion before the end, a compaction). */
  get layout(): number {
    return this.#layout;
  }

  /** The ids, tags and times by position (read-only; valid until the next add or delete). */
  columns(): OrderColumns {
    return { ids: this.#ids, tags: this.#tags, times: this.#times };
  }

  /**
   * Adds `id` at event time `time` with `tag` (a small integer ≥ 0 or −1, never DELETED_TAG); an
   * entry already held at that time (live or deleted) takes the new tag.
   */
  add(id: string, tag: number, time: number): void {
    const n = this.#ids.length;
    if (n === 0 || after(time, id, this.#times[n - 1] as number, this.#ids[n - 1] as string)) {
      this.#ids.push(id);
      this.#tags.push(tag);
      this.#times.push(time);
      return;
    }
    const at = this.position(id, time);
    if (this.#ids[at] === id) {
      if (this.#tags[at] === DELETED_TAG) this.#deleted -= 1;
      this.#tags[at] = tag;
      return;
    }
    this.#layout += 1;
    this.#ids.splice(at, 0, id);
    this.#tags.splice(at, 0, tag);
    this.#times.splice(at, 0, time);
  }

  /** Deletes the entry of `id` at `time` (nothing when there is none). */
  delete(id: string, time: number): void {
    const at = this.position(id, time);
    if (this.#ids[at] !== id || this.#tags[at] === DELETED_TAG) return;
    this.#tags[at] = DELETED_TAG;
    this.#deleted += 1;
    if (this.#deleted > 1024 && this.#deleted * 4 > this.#ids.length) this.#compact();
  }

  /** The position the entry (`id`, `time`) has, or would have, in {@link columns}. */
  position(id: string, time: number): number {
    let lo = 0;
    let hi = this.#ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (after(time, id, this.#times[mid] as number, this.#ids[mid] as string)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The first position whose time is at least `time`. */
  firstAt(time: number): number {
    let lo = 0;
    let hi = this.#times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#times[mid] as number) < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many entries (deleted ones still held included) have a time in [from, before). */
  countBetween(from: number, before: number): number {
    return Math.max(0, this.firstAt(before) - this.firstAt(from));
  }

  /** Ids of entries not deleted, latest first; with `before`, only those with an earlier time. */
  *newestFirst(before: number | null = null): Generator<string> {
    for (let i = (before === null ? this.#ids.length : this.firstAt(before)) - 1; i >= 0; i--) {
      if (this.#tags[i] !== DELETED_TAG) yield this.#ids[i] as string;
    }
  }

  /** Ids of entries not deleted, earliest first. */
  *oldestFirst(): Generator<string> {
    for (let i = 0; i < this.#ids.length; i++) {
      if (this.#tags[i] !== DELETED_TAG) yield this.#ids[i] as string;
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
    this.#deleted = 0;
  }
}

/** Whether (time, id) sorts after (t, i). */
function after(time: number, id: string, t: number, i: string): boolean {
  return time > t || (time === t && id > i);
}
