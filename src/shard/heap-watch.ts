/**
 * @module shard/heap-watch — refuses writes before a shard's JavaScript heap fills, instead of
 * letting the worker die of it. After each full (mark-compact) collection the worker reads how
 * much of the old generation is still in use, which is what the shard's data holds; once that is
 * past the mark (85 % of the limit, leaving at least 16 MB), writes that add to the store are
 * refused with a message naming the limit, while reads, forget and workspace deletion go on. It
 * lifts when a later collection shows room, when what is in use right now (garbage included, so
 * never less than what is live) is under the mark, or when a forget has freed memory (the next
 * collection that began after the free sets it again if that was not enough: V8 marks
 * incrementally, so the first full collection to end after a free may have marked what it freed
 * as live before it was freed). Redis's `maxmemory` with `noeviction` behaves the same way.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import type { ShardHeap } from '../protocol/shard.ts';

/** Writes are refused once what a full collection leaves exceeds this share of the limit… */
export const HEAP_FULL_FRACTION = 0.85;
/** …or leaves less than this free, whichever comes first (a small heap needs room for a burst of writes). */
export const HEAP_MIN_FREE_BYTES = 16 * 2 ** 20;

const MB = 2 ** 20;

export class HeapWatch {
  readonly limitBytes: number;
  /** Past this, writes are refused. */
  readonly markBytes: number;
  readonly #inUse: () => number;
  readonly #onChange: (state: ShardHeap) => void;
  #liveBytes = 0;
  #full = false;
  /** Memory was freed since the last full collection ended: the next one may have begun marking before that. */
  #freedSinceCollection = false;

  /**
   * `inUse`: the old generation in use now (`oldGenerationInUse` in a worker; tests pass their
   * own). `onChange`: told each time writes start or stop being refused.
   */
  constructor(
    limitBytes: number,
    inUse: () => number,
    onChange: (state: ShardHeap) => void = () => {},
  ) {
    this.limitBytes = limitBytes;
    // A limit the runtime does not report (0) refuses nothing, rather than everything.
    this.markBytes =
      limitBytes > 0
        ? Math.max(0, Math.min(limitBytes * HEAP_FULL_FRACTION, limitBytes - HEAP_MIN_FREE_BYTES))
        : Infinity;
    this.#inUse = inUse;
    this.#onChange = onChange;
  }

  /** Called after each full collection: what is in use now is what is live. */
  afterFullCollection(): void {
    this.#liveBytes = this.#inUse();
    const full = this.#liveBytes > this.markBytes;
    // A collection whose marking may have begun before the free can only lift the refusal.
    if (!this.#freedSinceCollection || !full) this.#set(full);
    this.#freedSinceCollection = false;
  }

  /** Memory was freed (a forget, a workspace deleted): writes go on until a collection says otherwise. */
  freed(): void {
    this.#freedSinceCollection = true;
    this.#set(false);
  }

  /** Why a write to shard `shard` is refused now, or null when it may go ahead. */
  refusal(shard: number): string | null {
    if (!this.#full) return null;
    if (this.#inUse() <= this.markBytes) {
      this.#set(false);
      return null;
    }
    return (
      `shard ${shard}'s memory is full: ${Math.round(this.#liveBytes / MB)} MB of its ${Math.round(this.limitBytes / MB)} MB heap ` +
      `hold live data, and writes are refused past ${Math.round(this.markBytes / MB)} MB. Reads and forget still work: ` +
      'forget memories (or delete a workspace) to make room, or restart the server with a larger FLASHBULB_SHARD_HEAP_MB'
    );
  }

  state(): ShardHeap {
    return { liveBytes: this.#liveBytes, limitBytes: this.limitBytes, full: this.#full };
  }

  #set(full: boolean): void {
    if (full === this.#full) return;
    this.#full = full;
    this.#onChange(this.state());
  }
}

/** The old generation (every heap space but the young ones) in use now, garbage included. */
export function oldGenerationInUse(): number {
  let bytes = 0;
  for (const s of getHeapSpaceStatistics())
    if (!s.space_name.startsWith('new')) bytes += s.space_used_size;
  return bytes;
}

/** Calls `then` after each full collection of this thread's heap; returns a function that stops it. */
export function onFullCollections(then: () => void): () => void {
  const observer = new PerformanceObserver((list) => {
    const full = list
      .getEntries()
      .some(
        (e) =>
          (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
          constants.NODE_PERFORMANCE_GC_MAJOR,
      );
    if (full) then();
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
