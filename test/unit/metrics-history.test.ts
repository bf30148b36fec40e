/**
 * The metrics history's percentiles (metrics/history.ts): computed from the requests' own
 * durations (nearest rank), exact up to 1,000 requests of an operation per interval and from a
 * uniform sample beyond; errors counted apart; gRPC operations kept apart from REST ones.
 */
import { describe, expect, it, vi } from 'vitest';
import { MetricsHistory } from '../../src/metrics/history.ts';

describe('MetricsHistory', () => {
  it('computes p50, p95, p99 and max from the durations themselves', async () => {
    const h = new MetricsHistory();
    // 1..100 ms, shuffled: a histogram with the server's buckets would say "≤ 100 ms" for p95.
    const ms = Array.from({ length: 100 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
    for (const m of ms) h.observe('recall', m / 1000, true);
    // A failed request counts as an error, not as a latency (a refusal at the door takes no time).
    h.observe('recall', 0.5, false);
    const { points, current } = await h.read(null);
    expect(points).toEqual([]);
    expect(current.ops['recall']).toEqual({
      count: 101,
      errors: 1,
      p50Ms: 50,
      p95Ms: 95,
      p99Ms: 99,
      maxMs: 100,
    });
    expect(current.gauges).toHaveProperty('memories');
  });

  it('samples uniformly past 1,000 requests an interval', async () => {
    const h = new MetricsHistory();
    for (let i = 1; i <= 20_000; i++) h.observe('get', i / 1e6, true);
    const op = (await h.read(null)).current.ops['get'];
    expect(op?.count).toBe(20_000);
    expect(op?.maxMs).toBeCloseTo(20, 6);
    // A uniform sample of 1,000 puts the median within a few per cent of 10 ms (6 standard errors here).
    expect(op?.p50Ms).toBeGreaterThan(9);
    expect(op?.p50Ms).toBeLessThan(11);
    expect(op?.p99Ms).toBeGreaterThan(19);
  });

  it('closes a point every 10 s, keeps an hour of them, and reads through the sources of the apps still running', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    try {
      const h = new MetricsHistory();
      const first = h.start({ problems: () => [], shards: 2 });
      h.observe('remember', 0.002, true);
      await vi.advanceTimersByTimeAsync(10_000);
      h.observe('recall', 0.004, true);
      const one = await h.read(null);
      expect(one.points).toHaveLength(1);
      expect(Object.keys(one.points[0]?.ops ?? {})).toEqual(['remember']);
      expect(one.points[0]?.seconds).toBe(10);
      expect(one.points[0]?.gauges['shards']).toBe(2);
      expect(Object.keys(one.current.ops)).toEqual(['recall']);
      await vi.advanceTimersByTimeAsync(3600_000 + 20_000);
      const full = await h.read(null);
      expect(full.points).toHaveLength(360);
      expect((await h.read(full.points[350]?.startUs ?? 0)).points).toHaveLength(10);
      const lastDown = async (): Promise<number | undefined> => {
        await vi.advanceTimersByTimeAsync(10_000);
        const after = await h.read(null);
        return after.points[after.points.length - 1]?.gauges['shards_down'];
      };
      // A second app starts (its shard is restarting) and stops: the first one's shards count again.
      const second = h.start({ problems: () => ['shard 1: restarting'], shards: 2 });
      expect(await lastDown()).toBe(1);
      h.stop(second);
      expect(await lastDown()).toBe(0);
      // The first stops while a third runs: the third's apply.
      const third = h.start({ problems: () => ['a', 'b'], shards: 2 });
      h.stop(first);
      expect(await lastDown()).toBe(2);
      h.stop(third);
      const newest = (await h.read(null)).points.at(-1)?.startUs;
      await vi.advanceTimersByTimeAsync(30_000);
      expect((await h.read(null)).points.at(-1)?.startUs).toBe(newest);
    } finally {
      vi.useRealTimers();
    }
  });
});
