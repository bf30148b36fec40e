/**
 * REST over real sockets: per-workspace rate limits (DESIGN.md 5: token buckets, writes and reads
 * apart, 429 with Retry-After), Prometheus metrics and health bodies (DESIGN.md 13).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';
import { ManualClock } from '../helpers/clock.ts';

describe('rate limits', () => {
  let t: TestApp;
  let wsKey: string;
  let otherKey: string;
  // The buckets refill by this clock only, so a slow burst cannot refill them and the wait
  // Retry-After names is made by moving it, not by waiting.
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    t = await startTestApp({ rateLimitWrites: 5 }, {}, { clock });
    wsKey = (await t.req('POST', '/v1/workspaces', { body: { slug: 'limited' } })).body.api_key;
    otherKey = (await t.req('POST', '/v1/workspaces', { body: { slug: 'unlimited-neighbour' } }))
      .body.api_key;
  });
  afterAll(async () => t.stop());

  it('answers 429 rate_limited with Retry-After once a workspace exceeds its write rate; reads and other workspaces are unaffected', async () => {
    const writes = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        t.req('POST', '/v1/memories', { key: wsKey, body: { content: `burst ${i}` } }),
      ),
    );
    const statuses = writes.map((r) => r.status);
    const created = statuses.filter((s) => s === 201).length;
    const limited = writes.filter((r) => r.status === 429);
    expect(
      statuses.every((s) => s === 201 || s === 429),
      statuses.join(','),
    ).toBe(true);
    expect(created).toBeGreaterThanOrEqual(1);
    expect(created).toBeLessThanOrEqual(6);
    expect(limited.length).toBe(15 - created);
    for (const r of limited) {
      expect(r.body).toEqual({ error_code: 'rate_limited', message: expect.any(String) });
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const retry = r.headers.get('retry-after');
      expect(retry).toMatch(/^\d+$/);
      expect(Number(retry)).toBeGreaterThanOrEqual(1);
    }

    // Other writes of the same workspace are limited too while the bucket is empty.
    const someId = writes.find((r) => r.status === 201)?.body.memory_id as string;
    const [forget, revise] = await Promise.all([
      t.req('POST', '/v1/forget', { key: wsKey, body: { memory_ids: [someId] } }),
      t.req('PUT', `/v1/revise/${someId}`, { key: wsKey, body: { importance: 0.1 } }),
    ]);
    expect([forget.status, revise.status]).toEqual([429, 429]);
    // The limited requests stored nothing.
    const list = await t.req('GET', '/v1/memories?include_superseded=true', { key: wsKey });
    expect(list.body.memories).toHaveLength(created);
    expect(list.body.memories.every((m: any) => m.logical_clock === 0)).toBe(true);

    // Reads are counted apart and still pass.
    const reads = await Promise.all(
      Array.from({ length: 30 }, () => t.req('GET', '/v1/memories', { key: wsKey })),
    );
    expect(reads.map((r) => r.status).every((s) => s === 200)).toBe(true);
    expect((await t.req('GET', `/v1/memories/${someId}`, { key: wsKey })).status).toBe(200);
    expect((await t.req('GET', '/v1/entities', { key: wsKey })).status).toBe(200);

    // Buckets are per workspace.
    const neighbour = await t.req('POST', '/v1/memories', {
      key: otherKey,
      body: { content: 'not throttled' },
    });
    expect(neighbour.status).toBe(201);

    // Just before Retry-After seconds have passed a write is still refused; once they have, it passes.
    const retryMs = Number(limited[0]?.headers.get('retry-after') ?? '1') * 1000;
    clock.advanceMs(retryMs - 900);
    expect(
      (await t.req('POST', '/v1/memories', { key: wsKey, body: { content: 'too soon' } })).status,
    ).toBe(429);
    clock.advanceMs(900);
    const again = await t.req('POST', '/v1/memories', {
      key: wsKey,
      body: { content: 'after the wait' },
    });
    expect(again.status).toBe(201);
  });
});

describe('metrics and health', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.stop());

  it('health live and ready answer their bodies', async () => {
    const live = await t.req('GET', '/v1/health/live');
    expect(live.status).toBe(200);
    expect(live.headers.get('content-type')).toMatch(/^application\/json/);
    expect(live.body).toEqual({ status: 'alive' });
    const ready = await t.req('GET', '/v1/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
  });

  it('serves Prometheus text with request durations and the memories gauge, without per-workspace labels', async () => {
    const slug = 'metrics-ws-slug';
    const key = (await t.req('POST', '/v1/workspaces', { body: { slug } })).body.api_key as string;
    for (let i = 0; i < 3; i++)
      expect(
        (await t.req('POST', '/v1/memories', { key, body: { content: `m${i}` } })).status,
      ).toBe(201);
    expect((await t.req('GET', '/v1/memories', { key })).status).toBe(200);

    let text = '';
    let gauge = -1;
    // The memories gauge is fed by the shards' periodic reports: wait for one that counts all three.
    await until(
      async () => {
        const res = await t.req('GET', '/v1/metrics');
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        text = res.text;
        const line = text.split('\n').find((l) => /^flashbulb_memories(\{[^}]*\})? /.test(l));
        gauge = line === undefined ? -1 : Number(line.split(' ').pop());
        return gauge >= 3;
      },
      { what: () => `the memories gauge at 3 (last ${gauge})`, deadlineMs: 10_000, everyMs: 100 },
    );
    expect(text).toContain('# TYPE flashbulb_request_duration_seconds histogram');
    expect(text).toMatch(
      /flashbulb_request_duration_seconds_bucket\{[^}]*operation="remember"[^}]*\}/,
    );
    expect(text).toMatch(/flashbulb_request_duration_seconds_count\{[^}]*protocol="rest"[^}]*\}/);
    expect(text).toMatch(/flashbulb_request_duration_seconds_count\{[^}]*outcome="ok"[^}]*\}/);
    expect(text).toContain('# TYPE flashbulb_memories gauge');
    expect(gauge).toBeGreaterThanOrEqual(3);
    // Default process metrics, prefixed.
    expect(text).toMatch(/^flashbulb_process_cpu_user_seconds_total /m);
    // No per-workspace label.
    expect(text).not.toContain(slug);
    expect(text).not.toMatch(/workspace="/);
    expect(text).not.toMatch(/tenant="/);
  });

  it('records failed requests with their outcome', async () => {
    await t.req('GET', '/v1/memories/00000000000000000000000000000000');
    const res = await t.req('GET', '/v1/metrics');
    expect(res.text).toMatch(
      /flashbulb_request_duration_seconds_count\{[^}]*outcome="not_found"[^}]*\} [1-9]/,
    );
  });
});
