/**
 * The event order (shard/store/event-order.ts) against a plain sorted list: random adds in any
 * time order (ties on time broken by id), deletes (enough to compact), adds of deleted entries
 * again; positions, counts over time windows and both walks agree.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/analysis/cluster.ts';
import { EventOrder } from '../../src/shard/store/event-order.ts';
import { DELETED_TAG } from '../../src/shard/store/ordered-ids.ts';

interface Entry {
  id: string;
  time: number;
  tag: number;
}

const byEvent = (a: Entry, b: Entry): number =>
  a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function check(order: EventOrder, live: Map<string, Entry>): void {
  const want = [...live.values()].sort(byEvent);
  expect(order.size).toBe(want.length);
  expect([...order.oldestFirst()]).toEqual(want.map((e) => e.id));
  expect([...order.newestFirst()]).toEqual(want.map((e) => e.id).reverse());
  const { ids, tags, times } = order.columns();
  for (const e of want) {
    const at = order.position(e.id, e.time);
    expect(ids[at]).toBe(e.id);
    expect(tags[at]).toBe(e.tag);
    expect(times[at]).toBe(e.time);
  }
  for (const [from, before] of [
    [100, 400],
    [0, 1000],
    [250, 251],
    [500, 100],
  ] as const) {
    const inside = want.filter((e) => e.time >= from && e.time < before).length;
    // Deleted entries still held count too: never fewer than the live ones.
    expect(order.countBetween(from, before)).toBeGreaterThanOrEqual(inside);
    expect([...order.newestFirst(before)]).toEqual(
      want
        .filter((e) => e.time < before)
        .map((e) => e.id)
        .reverse(),
    );
  }
  const held = ids.filter((_, i) => tags[i] !== DELETED_TAG);
  expect(held).toEqual(want.map((e) => e.id));
}

describe('EventOrder', () => {
  it('keeps (time, id) order through adds in any order, deletes, compaction and re-adds', () => {
    const r = mulberry32(11);
    const order = new EventOrder();
    const live = new Map<string, Entry>();
    const all: Entry[] = [];
    for (let round = 0; round < 6000; round++) {
      const x = r();
      if (x < 0.55 || all.length === 0) {
        const e = {
          id: Math.floor(r() * 1e9)
            .toString(16)
            .padStart(8, '0'),
          time: Math.floor(r() * 1000),
          tag: Math.floor(r() * 5),
        };
        if (live.has(e.id) || all.some((a) => a.id === e.id)) continue;
        order.add(e.id, e.tag, e.time);
        live.set(e.id, e);
        all.push(e);
      } else if (x < 0.95) {
        const e = all[Math.floor(r() * all.length)] as Entry;
        order.delete(e.id, e.time);
        live.delete(e.id);
      } else {
        const e = all[Math.floor(r() * all.length)] as Entry;
        const again = { ...e, tag: (e.tag + 1) % 5 };
        order.add(again.id, again.tag, again.time);
        live.set(again.id, again);
      }
      if (round % 500 === 0) check(order, live);
    }
    check(order, live);
    // Enough deletes went by to compact: the arrays hold fewer entries than were ever added.
    expect(order.held).toBeLessThan(all.length);
  });

  it('an entry at the end is appended without moving any position', () => {
    const order = new EventOrder();
    order.add('b', 0, 10);
    const layout = order.layout;
    order.add('a', 0, 20);
    order.add('c', 0, 20);
    expect(order.layout).toBe(layout);
    order.add('a0', 0, 5);
    expect(order.layout).not.toBe(layout);
    expect([...order.oldestFirst()]).toEqual(['a0', 'b', 'a', 'c']);
  });
});
