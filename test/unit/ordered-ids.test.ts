/** OrderedIds: sorted ids with lazy deletion, paging after a cursor, newest first, compaction. */
import { describe, expect, it } from 'vitest';
import { DELETED_TAG, OrderedIds } from '../../src/shard/store/ordered-ids.ts';

function id(n: number): string {
  return n.toString(16).padStart(32, '0');
}

function range(from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, i) => id(from + i));
}

describe('OrderedIds', () => {
  it('keeps ids sorted whatever order they arrive in, without duplicates', () => {
    const ids = new OrderedIds();
    for (const n of [5, 1, 9, 3, 3, 7, 1, 0, 9, 2]) ids.add(id(n));
    expect([...ids.after(null)]).toEqual([0, 1, 2, 3, 5, 7, 9].map(id));
    expect(ids.size).toBe(7);
  });

  it('columns() holds each id with its tag and time by position; a deleted id is tagged DELETED_TAG until compacted', () => {
    const ids = new OrderedIds();
    for (const n of [50, 10, 30, 20, 40]) ids.add(id(n), n / 10, n * 1000);
    ids.delete(id(30));
    expect(ids.columns()).toEqual({
      ids: [10, 20, 30, 40, 50].map(id),
      tags: [1, 2, DELETED_TAG, 4, 5],
      times: [10_000, 20_000, 30_000, 40_000, 50_000],
    });
    expect(ids.position(id(30))).toBe(2);
    expect(ids.position(id(35))).toBe(3);
    // Added again (deleted or not): the new tag and time replace the old ones.
    ids.add(id(30), 7, 1);
    ids.add(id(50), 8, 2);
    expect(ids.columns().tags).toEqual([1, 2, 7, 4, 8]);
    expect(ids.columns().times).toEqual([10_000, 20_000, 1, 40_000, 2]);
    // The layout changes only when positions move: an insertion before the end, a compaction.
    const before = ids.layout;
    ids.add(id(60), 6, 6);
    ids.delete(id(20));
    expect(ids.layout).toBe(before);
    ids.add(id(15), 1, 1);
    expect(ids.layout).not.toBe(before);
    // Compaction drops deleted ids from all three arrays together.
    const many = new OrderedIds();
    for (let n = 0; n < 3000; n++) many.add(id(n), n % 5, n);
    for (let n = 0; n < 3000; n += 2) many.delete(id(n));
    // Every add was an append: only the compaction moved positions.
    const layout = many.layout;
    expect(layout).toBe(1);
    many.delete(id(1));
    expect(many.layout).toBe(layout);
    const c = many.columns();
    expect(c.ids.length).toBeLessThan(3000);
    expect(
      c.ids.every(
        (x, i) =>
          c.tags[i] === DELETED_TAG ||
          (c.tags[i] === parseInt(x, 16) % 5 && c.times[i] === parseInt(x, 16)),
      ),
    ).toBe(true);
    expect(c.ids.filter((_, i) => c.tags[i] !== DELETED_TAG)).toEqual([...many.after(null)]);
  });

  it('after(cursor) returns ids strictly after the cursor, present or not', () => {
    const ids = new OrderedIds();
    for (const n of [10, 20, 30, 40]) ids.add(id(n));
    expect([...ids.after(id(20))]).toEqual([30, 40].map(id));
    expect([...ids.after(id(25))]).toEqual([30, 40].map(id));
    expect([...ids.after(id(0))]).toEqual([10, 20, 30, 40].map(id));
    expect([...ids.after(id(40))]).toEqual([]);
    expect([...ids.after(id(99))]).toEqual([]);
  });

  it('spread(n) samples about n ids evenly over the order, skipping deleted ones', () => {
    const ids = new OrderedIds();
    for (const x of range(0, 1000)) ids.add(x);
    ids.delete(id(0));
    const sample = [...ids.spread(10)];
    expect(sample).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900].map(id));
    expect([...ids.spread(5000)]).toHaveLength(999);
    expect([...new OrderedIds().spread(10)]).toEqual([]);
  });

  it('newestFirst() walks backwards and skips deleted ids', () => {
    const ids = new OrderedIds();
    for (const n of [3, 1, 2, 5, 4]) ids.add(id(n));
    ids.delete(id(4));
    expect([...ids.newestFirst()]).toEqual([5, 3, 2, 1].map(id));
  });

  it('delete() hides an id everywhere; deleting twice or deleting an unknown id changes nothing', () => {
    const ids = new OrderedIds();
    for (const n of [1, 2, 3]) ids.add(id(n));
    ids.delete(id(2));
    ids.delete(id(2));
    ids.delete(id(42));
    expect(ids.size).toBe(2);
    expect([...ids.after(null)]).toEqual([1, 3].map(id));
    expect([...ids.after(id(1))]).toEqual([id(3)]);
  });

  it('an id added again after deletion is back, once', () => {
    const ids = new OrderedIds();
    for (const n of [1, 2, 3]) ids.add(id(n));
    ids.delete(id(2));
    ids.add(id(2));
    ids.add(id(2));
    expect(ids.size).toBe(3);
    expect([...ids.after(null)]).toEqual([1, 2, 3].map(id));
  });

  it('compacts after more than 1024 deletions and stays correct', () => {
    const ids = new OrderedIds();
    // Out of order on purpose: odd ids first, then even ones.
    for (let n = 1; n < 4000; n += 2) ids.add(id(n));
    for (let n = 0; n < 4000; n += 2) ids.add(id(n));
    expect(ids.size).toBe(4000);
    // Delete 1500 ids: crosses the compaction threshold (1024 and a quarter of the array).
    for (let n = 1000; n < 2500; n++) ids.delete(id(n));
    expect(ids.size).toBe(2500);
    const expected = [...range(0, 1000), ...range(2500, 4000)];
    expect([...ids.after(null)]).toEqual(expected);
    expect([...ids.newestFirst()]).toEqual([...expected].reverse());
    expect([...ids.after(id(999))].slice(0, 2)).toEqual([id(2500), id(2501)]);
    expect([...ids.after(id(1700))][0]).toBe(id(2500));
    // Deleted ids can come back; live ones can still go.
    ids.add(id(1500));
    ids.delete(id(0));
    ids.delete(id(1500));
    ids.add(id(1501));
    expect(ids.size).toBe(2500);
    expect([...ids.after(null)].slice(0, 2)).toEqual([id(1), id(2)]);
    expect([...ids.after(id(999))].slice(0, 2)).toEqual([id(1501), id(2500)]);
    // And a second round of mass deletion compacts again.
    for (let n = 2500; n < 4000; n++) ids.delete(id(n));
    expect([...ids.after(null)]).toEqual([...range(1, 1000), id(1501)]);
    expect(ids.size).toBe(1000);
  });

  it('matches a plain sorted-set model under random operations', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const ids = new OrderedIds();
    const model = new Set<string>();
    for (let step = 0; step < 20_000; step++) {
      const x = id(rand(3000));
      if (rand(3) === 0) {
        ids.delete(x);
        model.delete(x);
      } else {
        ids.add(x);
        model.add(x);
      }
      if (step % 2500 === 0 || step === 19_999) {
        const sorted = [...model].sort();
        expect([...ids.after(null)]).toEqual(sorted);
        expect(ids.size).toBe(model.size);
        const cursor = id(rand(3000));
        expect([...ids.after(cursor)]).toEqual(sorted.filter((s) => s > cursor));
      }
    }
  });
});
