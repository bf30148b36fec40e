/**
 * A data directory written before event time, speakers and conversations existed loads unchanged
 * (issue 49): its memories read as happening when they were written, said by nobody, in no
 * conversation, and take their place in temporal recall beside memories written with an event
 * time; the snapshot written on the way down keeps both kinds, and a memory written without the
 * new fields is stored in exactly the old form.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { shardDir } from '../../src/data-dir.ts';
import { shardFor } from '../../src/router/shard-map.ts';
import { encodeFrame } from '../../src/shard/persist/frames.ts';
import { seqName } from '../../src/shard/persist/fsutil.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
const OLD_ID = '0188f0c0a1b2c3d4e5f60718293a4b5c';
const OLD_AT = Date.UTC(2023, 5, 1) * 1000;

beforeAll(async () => {
  t = await startTestApp();
  expect(
    (
      await t.inject('POST', '/v1/memories', {
        body: { content: 'written by this build, nothing new in it' },
      })
    ).status,
  ).toBe(201);
  await t.app.stop();
  // A log segment as the build before event time wrote it: a put with exactly the old fields.
  const dir = shardDir(t.dataDir, shardFor('default', t.config.shards));
  const seqs = readdirSync(dir)
    .map((f) => /^(?:wal|snap)-(\d+)\./.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .map(Number);
  const embedding = new Uint8Array(new Float32Array(t.app.svc.embedder.dim).fill(0.05).buffer);
  const m = {
    id: OLD_ID,
    content: 'an old memory',
    importance: 0.5,
    context: { who: 'Caroline' },
    entityId: null,
    kind: 'episode',
    createdAt: OLD_AT,
    updatedAt: OLD_AT,
    lastAccessedAt: OLD_AT,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    embedding,
  };
  writeFileSync(
    join(dir, seqName('wal', Math.max(0, ...seqs) + 1, 'log')),
    encodeFrame({ t: 'put', ws: 'default', m }),
  );
  await t.restart();
});
afterAll(async () => t.stop());

it('old memories read as happening when written, by nobody, in no conversation', async () => {
  const got = await t.inject('GET', `/v1/memories/${OLD_ID}`);
  expect(got.status, got.text).toBe(200);
  expect(got.body).toMatchObject({
    content: 'an old memory',
    created_at: OLD_AT,
    occurred_at: OLD_AT,
    speaker: null,
    conversation_id: null,
    message_id: null,
    context: { who: 'Caroline' },
  });
});

it('they take their place by event time beside new ones, and all of it survives the snapshot of a restart', async () => {
  const back = await t.inject('POST', '/v1/memories', {
    body: {
      content: 'back-filled, before the old one',
      occurred_at: OLD_AT - 1_000_000,
      speaker: 'Mel',
      conversation_id: 'c',
    },
  });
  expect(back.status).toBe(201);
  const order = async (): Promise<string[]> => {
    const res = await t.inject('POST', '/v1/recall', {
      body: { cue: 'x', strategies: ['temporal'], top_k: 10 },
    });
    return res.body.results.map((r: { memory: { content: string } }) => r.memory.content);
  };
  const expected = [
    'written by this build, nothing new in it',
    'an old memory',
    'back-filled, before the old one',
  ];
  expect(await order()).toEqual(expected);
  await t.restart();
  expect(await order()).toEqual(expected);
  const turn = await t.inject('GET', `/v1/memories/${back.body.memory_id}`);
  expect(turn.body).toMatchObject({
    occurred_at: OLD_AT - 1_000_000,
    speaker: 'Mel',
    conversation_id: 'c',
  });
});

it('a memory without the new fields is stored in the old form (no new keys in any file)', async () => {
  const dir = shardDir(t.dataDir, shardFor('default', t.config.shards));
  const bytes = readdirSync(dir)
    .filter((f) => /^(wal|snap)-/.test(f))
    .map((f) => readFileSync(join(dir, f)));
  const all = Buffer.concat(bytes);
  // Only the one memory written with them carries the keys: once in its put (log or snapshot).
  expect(all.includes(Buffer.from('an old memory'))).toBe(true);
  for (const key of ['occurredAt', 'speaker', 'conversationId']) {
    expect(
      bytes.reduce((n, b) => n + occurrences(b, key), 0),
      key,
    ).toBeGreaterThan(0);
    // The snapshot holds all three memories; only one of them has the key.
    for (const b of bytes) expect(occurrences(b, key), key).toBeLessThanOrEqual(1);
  }
  expect(bytes.reduce((n, b) => n + occurrences(b, 'messageId'), 0)).toBe(0);
});

function occurrences(b: Buffer, text: string): number {
  let n = 0;
  for (let at = b.indexOf(text); at !== -1; at = b.indexOf(text, at + 1)) n += 1;
  return n;
}
