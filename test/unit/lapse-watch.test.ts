/**
 * cluster/lapse-watch on a fake clock: another node's lease is looked at just after the moment it
 * would lapse unless renewed (not on the next heartbeat); a renewal seen in between moves that
 * moment on; a key that outlives its computed lapse (clocks a little apart) is looked at again
 * soon; a partition forgotten (free, or ours) is not looked at.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LapseWatch } from '../../src/cluster/lapse-watch.ts';

const LEASE = 5000;

describe('LapseWatch', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => vi.useRealTimers());

  it('looks just after a lease would lapse, counted from its last renewal', () => {
    const checks: number[] = [];
    const w = new LapseWatch(LEASE, (p) => checks.push(p));
    w.seen(3, 7, Date.now() - 1000); // renewed a second ago: lapses in 4 s
    vi.advanceTimersByTime(4000);
    expect(checks).toEqual([]);
    vi.advanceTimersByTime(60);
    expect(checks).toEqual([3]);
    w.stop();
  });

  it('a renewal seen before that moves the moment on; the same revision seen again does not', () => {
    const checks: number[] = [];
    const w = new LapseWatch(LEASE, (p) => checks.push(p));
    w.seen(1, 10, Date.now());
    vi.advanceTimersByTime(1700);
    w.seen(1, 10, Date.now() - 1700); // the same renewal read again
    vi.advanceTimersByTime(1700);
    w.seen(1, 11, Date.now()); // renewed: lapses 5 s from now
    vi.advanceTimersByTime(4900);
    expect(checks).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(checks).toEqual([1]);
    w.stop();
  });

  it('a key still there after its computed lapse is looked at again every 250 ms; forget stops it', () => {
    const checks: number[] = [];
    const w = new LapseWatch(LEASE, (p) => checks.push(p));
    w.seen(2, 4, Date.now());
    vi.advanceTimersByTime(5100);
    expect(checks).toEqual([2]);
    w.seen(2, 4, Date.now() - 5100); // the check read the same lease: our clock runs ahead of the server's
    vi.advanceTimersByTime(260);
    expect(checks).toEqual([2, 2]);
    w.forget(2);
    vi.advanceTimersByTime(10_000);
    expect(checks).toEqual([2, 2]);
  });
});
