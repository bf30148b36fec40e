/**
 * Issue 12, defect 11 (soak drift). Background reflection looks at a fixed window of the newest
 * BACKGROUND_EPISODES episodes, not the whole history: its cost no longer grows with the store.
 * An explicit reflection still considers up to 10,000. The gathered vectors reach the clustering
 * worker by transfer (the reflection still works end to end).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BACKGROUND_EPISODES } from '../../src/reflection/engine.ts';
import type { ShardPool } from '../../src/router/shard-client.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
const gathers: number[] = [];

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_REFLECT_ENABLED: 'true', FLASHBULB_REFLECT_MIN_NEW: '5' });
  // Record the window of every gather the reflection engine asks a shard for.
  const pool = t.app.svc.shards as ShardPool & { call: ShardPool['call'] };
  const call = pool.call.bind(pool);
  pool.call = ((ws, method, input, transfer) => {
    if (method === 'reflectGather') gathers.push((input as { max: number }).max);
    return call(ws, method, input, transfer);
  }) as ShardPool['call'];
});
afterAll(async () => t.stop());

it('a background reflection gathers at most BACKGROUND_EPISODES; an explicit one up to 10,000', async () => {
  expect(BACKGROUND_EPISODES).toBeLessThan(10_000);
  for (let i = 0; i < 6; i++) {
    const res = await t.req('POST', '/v1/memories', {
      body: { content: `Garden tomato plants need garden watering ${i}` },
    });
    expect(res.status).toBe(201);
  }
  await until(() => gathers.length > 0, {
    what: 'a background gather',
    deadlineMs: 5_000,
    everyMs: 50,
  }).catch(() => undefined);
  expect(gathers).toEqual([BACKGROUND_EPISODES]);
  const res = await t.req('POST', '/v1/reflect', {});
  expect(res.status).toBe(200);
  expect(res.body.memories_processed).toBe(6);
  expect(gathers.at(-1)).toBe(10_000);
  expect((await t.req('GET', '/v1/insights')).body.length).toBeGreaterThan(0);
});
