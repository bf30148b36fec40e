/**
 * A shard whose heap fills (FLASHBULB_SHARD_HEAP_MB=64, writers of 60 KB memories): writes are
 * refused with 503 naming the limit before the worker would die of it, while reads go on and the
 * server stays ready; the log and metrics say so; forgetting makes room and writes are taken again.
 * Without the guard the shard's worker ran out of heap (test/integration/shard-crash.test.ts
 * covers what happens then).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const started: TestApp[] = [];
afterAll(async () => {
  for (const t of started) await t.stop();
});

describe('a shard whose heap fills', () => {
  it('refuses writes with 503 before it runs out, keeps serving reads, and takes writes again once memories are forgotten', async () => {
    const lines: string[] = [];
    const env = {
      FLASHBULB_SHARDS: '1',
      FLASHBULB_AUTH_ENABLED: 'false',
      FLASHBULB_SHARD_HEAP_MB: '64',
      FLASHBULB_DURABILITY: 'os',
    };
    const t = await startTestApp({}, env, { log: (line) => lines.push(line) });
    started.push(t);

    const padding = 'x'.repeat(60_000);
    const acknowledged: string[] = [];
    const refusals: string[] = [];
    let n = 0;
    const writer = async (): Promise<void> => {
      // Each writer stops at its first refusal; 2,000 memories (120 MB) would not fit in 64 MB.
      while (refusals.length === 0 && n < 2000) {
        const res = await t.req('POST', '/v1/memories', {
          body: { content: `memory ${n++} ${padding}` },
        });
        if (res.status === 201) acknowledged.push(res.body.memory_id);
        else refusals.push(`${res.status} ${res.body.message}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, writer));

    expect(refusals.length).toBeGreaterThan(0);
    for (const r of refusals)
      expect(r).toMatch(
        /^503 shard 0's memory is full: \d+ MB of its 64 MB heap hold live data, and writes are refused past 48 MB\. Reads and forget still work/,
      );
    expect(acknowledged.length).toBeGreaterThan(300);
    expect(lines).toContainEqual(
      expect.stringMatching(/^shard 0: memory full \(\d+ of 64 MB live\): writes refused/),
    );
    expect(lines.filter((l) => l.includes('CRASHED'))).toEqual([]);
    expect((await t.req('GET', '/v1/health/ready')).status).toBe(200);
    expect((await t.req('GET', '/v1/memories?limit=3')).status).toBe(200);
    const metrics = (await t.req('GET', '/v1/metrics')).text;
    expect(metrics).toContain('flashbulb_shard_memory_full{shard="0"} 1');
    expect(metrics).toContain(`flashbulb_shard_heap_limit_bytes{shard="0"} ${64 * 2 ** 20}`);
    expect(metrics).not.toContain('flashbulb_shard_crashes_total{');

    const forgotten = await t.req('POST', '/v1/forget', {
      body: { memory_ids: acknowledged.slice(0, Math.floor(acknowledged.length / 2)) },
    });
    expect(forgotten.status).toBe(200);
    expect(
      (await t.req('POST', '/v1/memories', { body: { content: 'written after the forget' } }))
        .status,
    ).toBe(201);
    expect(lines).toContain('shard 0: memory no longer full: writes accepted again');
    // Nothing acknowledged was lost on the way: the half not forgotten, and the new one.
    // (Pages of 60 KB memories stop at the reply budget and go on by their cursor.)
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await t.req(
        'GET',
        `/v1/memories?limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      expect(page.status).toBe(200);
      ids.push(...page.body.memories.map((m: { memory_id: string }) => m.memory_id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(acknowledged.length - Math.floor(acknowledged.length / 2) + 1);
    expect(ids).toEqual(
      expect.arrayContaining(acknowledged.slice(Math.floor(acknowledged.length / 2))),
    );
  });
});
