/**
 * Issue 12, defect 1, for data stored before the nesting limit existed: a memory whose context
 * nests a thousand levels (the old edge stored such) loads with its context cut at the limit, so
 * every reply that carries it is answered at once instead of waiting out the shard timeout.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { shardDir } from '../../src/data-dir.ts';
import { CUT_MARKER, JSON_LIMITS, cutAtDepth, withinDepth } from '../../src/model/json-shape.ts';
import type { JsonObject } from '../../src/model/memory.ts';
import { shardFor } from '../../src/router/shard-map.ts';
import { encodeFrame } from '../../src/shard/persist/frames.ts';
import { seqName } from '../../src/shard/persist/fsutil.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
const ID = 'abcdef00000000000000000000000001';

function nested(levels: number): JsonObject {
  let v: JsonObject = { leaf: 1 };
  for (let i = 1; i < levels; i++) v = { n: v };
  return v;
}

beforeAll(async () => {
  t = await startTestApp();
  expect(
    (await t.req('POST', '/v1/memories', { body: { content: 'a normal memory' } })).status,
  ).toBe(201);
  await t.app.stop();
  // A log segment as an older build wrote it: a put whose context nests 1,000 levels.
  const dir = shardDir(t.dataDir, shardFor('default', t.config.shards));
  const seqs = readdirSync(dir)
    .map((f) => /^(?:wal|snap)-(\d+)\./.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .map(Number);
  const now = Date.now() * 1000;
  const embedding = new Uint8Array(new Float32Array(t.app.svc.embedder.dim).fill(0.05).buffer);
  const record = {
    t: 'put',
    ws: 'default',
    m: {
      id: ID,
      content: 'deep legacy',
      importance: 0.5,
      context: { d: nested(1000) },
      entityId: null,
      kind: 'episode',
      createdAt: now,
      updatedAt: now,
      lastAccessedAt: now,
      accessCount: 0,
      logicalClock: 0,
      sourceMemoryIds: null,
      supersededBy: null,
      embedding,
    },
  };
  writeFileSync(join(dir, seqName('wal', Math.max(0, ...seqs) + 1, 'log')), encodeFrame(record));
  await t.restart();
});
afterAll(async () => t.stop());

it('the memory loads with its context cut at the limit, and every reply carrying it is served', async () => {
  const got = await t.req('GET', `/v1/memories/${ID}`);
  expect(got.status, got.text).toBe(200);
  expect(got.body.content).toBe('deep legacy');
  expect(withinDepth(got.body.context)).toBe(true);
  expect(JSON.stringify(got.body.context)).toContain(CUT_MARKER);
  // The part within the limit is kept: the body's `context` is level 1, so 31 `n` levels under `d`.
  let v = got.body.context.d;
  for (let i = 0; i < JSON_LIMITS.depth - 2; i++) v = v.n;
  expect(v).toEqual({ n: CUT_MARKER });
  const list = await t.req('GET', '/v1/memories?limit=100');
  expect(list.status).toBe(200);
  expect(list.body.memories.map((m: { content: string }) => m.content).sort()).toEqual([
    'a normal memory',
    'deep legacy',
  ]);
});

it('withinDepth and cutAtDepth handle any depth without recursion trouble', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  expect(withinDepth(deep)).toBe(false);
  expect(withinDepth(nested(JSON_LIMITS.depth))).toBe(true);
  expect(withinDepth(nested(JSON_LIMITS.depth + 1))).toBe(false);
  expect(withinDepth(cutAtDepth(deep))).toBe(true);
  expect(cutAtDepth(nested(3))).toEqual(nested(3));
});
