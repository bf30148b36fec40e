/**
 * shard/heap-watch's decisions, on heap readings the test sets: when writes start and stop being
 * refused, and what the refusal says. test/integration/memory-full.test.ts fills a real heap.
 */
import { describe, expect, it } from 'vitest';
import { HeapWatch } from '../../src/shard/heap-watch.ts';
import type { ShardHeap } from '../../src/protocol/shard.ts';

const MB = 2 ** 20;

function watch(limitMb: number): {
  w: HeapWatch;
  setInUse: (mb: number) => void;
  changes: ShardHeap[];
} {
  let inUse = 0;
  const changes: ShardHeap[] = [];
  const w = new HeapWatch(
    limitMb * MB,
    () => inUse * MB,
    (s) => changes.push(s),
  );
  return { w, setInUse: (mb) => (inUse = mb), changes };
}

describe('HeapWatch', () => {
  it('puts the mark at 85 % of the limit, leaving at least 16 MB free', () => {
    expect(watch(4096).w.markBytes).toBe(4096 * 0.85 * MB);
    expect(watch(256).w.markBytes).toBe(256 * 0.85 * MB);
    expect(watch(64).w.markBytes).toBe(48 * MB);
    // A limit the runtime did not report refuses nothing.
    const unknown = watch(0);
    unknown.setInUse(500);
    unknown.w.afterFullCollection();
    expect(unknown.w.refusal(0)).toBeNull();
  });

  it('refuses writes once a full collection leaves more than the mark live, naming the limit and what to do', () => {
    const { w, setInUse, changes } = watch(64);
    setInUse(47);
    w.afterFullCollection();
    expect(w.refusal(3)).toBeNull();
    expect(changes).toEqual([]);
    setInUse(50);
    w.afterFullCollection();
    expect(w.refusal(3)).toBe(
      "shard 3's memory is full: 50 MB of its 64 MB heap hold live data, and writes are refused past 48 MB. Reads and forget still work: " +
        'forget memories (or delete a workspace) to make room, or restart the server with a larger FLASHBULB_SHARD_HEAP_MB',
    );
    expect(changes).toEqual([{ liveBytes: 50 * MB, limitBytes: 64 * MB, full: true }]);
    expect(w.state().full).toBe(true);
  });

  it('goes on refusing while what is in use now (garbage included) is past the mark, and stops when it is not', () => {
    const { w, setInUse, changes } = watch(64);
    setInUse(52);
    w.afterFullCollection();
    setInUse(55);
    expect(w.refusal(0)).not.toBeNull();
    setInUse(40);
    expect(w.refusal(0)).toBeNull();
    expect(changes.map((c) => c.full)).toEqual([true, false]);
  });

  it('takes writes again after a collection that finds room, or at once after memory was freed', () => {
    const { w, setInUse, changes } = watch(64);
    setInUse(52);
    w.afterFullCollection();
    setInUse(46);
    w.afterFullCollection();
    expect(w.refusal(0)).toBeNull();

    setInUse(52);
    w.afterFullCollection();
    w.freed(); // a forget: in use now still counts what it freed, until the next collection
    expect(w.refusal(0)).toBeNull();
    // The first full collection to end after the free may have marked (incrementally, from before
    // the free) what it freed as live: it does not refuse again…
    w.afterFullCollection();
    expect(w.refusal(0)).toBeNull();
    w.afterFullCollection(); // …the next one, begun after it, finds it was not enough
    expect(w.refusal(0)).not.toBeNull();
    expect(changes.map((c) => c.full)).toEqual([true, false, true, false, true]);
  });
});
