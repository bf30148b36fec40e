/**
 * A read whose reply is over the router's first ask (64 KiB: router/reply-budget) runs once in its
 * shard: the shard keeps the reply it computed for the second ask (protocol/reply-size). Computed
 * twice, a recall also counted its access twice (and cost a second recall: recall with all four
 * strategies answers more than 64 KiB for ten memories of a few KB each).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
const ids: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  for (let i = 0; i < 12; i++) {
    const words = Array.from({ length: 900 }, (_, j) => `word${(i * 7 + j) % 400}`).join(' ');
    const res = await t.req('POST', '/v1/memories', {
      body: { content: `lighthouse keeper log ${i}: ${words}`, entity_id: 'keeper' },
    });
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.memory_id);
  }
});
afterAll(async () => {
  await t.stop();
});

describe('a reply over the first ask', () => {
  it('is computed once: a recall of more than 64 KiB accesses its first result once', async () => {
    const res = await t.req('POST', '/v1/recall', {
      body: { cue: 'lighthouse keeper log', top_k: 10 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.text.length).toBeGreaterThan(64 * 1024);
    const first = res.body.results[0].memory.memory_id as string;
    const got = await t.req('GET', `/v1/memories/${first}`);
    expect(got.body.access_count).toBe(1);
    // The others listed were not accessed (a recall reinforces only its answer).
    const second = res.body.results[1].memory.memory_id as string;
    expect((await t.req('GET', `/v1/memories/${second}`)).body.access_count).toBe(0);
  });

  it('answers a large get and a large list whole', async () => {
    const list = await t.req('GET', '/v1/memories?limit=12&entity_id=keeper');
    expect(list.status, list.text).toBe(200);
    expect(list.text.length).toBeGreaterThan(64 * 1024);
    expect((list.body.memories as unknown[]).length).toBe(12);
  });
});
