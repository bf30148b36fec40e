/**
 * Expiry inside one shard, on a clock the test sets (the shard's `clock`; the log's I/O and the
 * shard's timers run on real time), and the subscription time scopes and prime windows that count
 * back from that clock. An expired memory is invisible to every read from the moment it
 * expires, then forgotten with forget's cascade and tombstones, crashes included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { until } from '../helpers/wait.ts';
import type { StoredMemory } from '../../src/shard/store/records.ts';
import { Wal } from '../../src/shard/persist/wal.ts';
import { Shard } from '../../src/shard/shard.ts';
import { ExpiryQueue } from '../../src/shard/store/expiry-queue.ts';
import type { RememberItem } from '../../src/protocol/shard.ts';
import { DEFAULT_WEIGHTS } from '../../src/recall/types.ts';
import { filesHolding } from '../helpers/erasure-shard.ts';

const T0 = Date.UTC(2026, 0, 1);
const SEC = 1_000_000;
const dirs: string[] = [];
const shards: Shard[] = [];

let clock = new ManualClock(T0);

beforeEach(() => {
  clock = new ManualClock(T0);
});

afterEach(async () => {
  for (const s of shards.splice(0)) await s.shutdown();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(dir = mkdtempSync(join(tmpdir(), 'flashbulb-expiry-'))): {
  shard: Shard;
  dir: string;
} {
  if (!dirs.includes(dir)) dirs.push(dir);
  const shard = new Shard(
    {
      shard: 0,
      dir,
      durability: 'fsync',
      snapshotIntervalS: 3600,
      snapshotWalBytes: 1 << 30,
      eraseWithinS: 1,
    },
    undefined,
    undefined,
    clock,
  );
  shards.push(shard);
  return { shard, dir };
}

function vec(i: number): Float32Array {
  const v = new Float32Array(8);
  v[i % 8] = 1;
  return v;
}

function item(
  content: string,
  i: number,
  expiresAt: number | null,
  extra: Partial<RememberItem> = {},
): RememberItem {
  return {
    content,
    importance: 0.5,
    context: {},
    entityId: 'e',
    kind: 'episode',
    embedding: vec(i),
    edges: [],
    expiresAt,
    ...extra,
  };
}

async function put(shard: Shard, it: RememberItem): Promise<string> {
  const [m] = await shard.handle('remember', 'w', { items: [it] });
  return m?.id as string;
}

const nowUs = (): number => clock.nowUs();

describe('expiry queue', () => {
  it('returns due ids soonest first, once, skipping entries that are no longer current', () => {
    const q = new ExpiryQueue();
    const current = new Map<string, number>();
    const times = [50, 10, 40, 30, 20, 60, 10];
    times.forEach((at, i) => {
      q.add(`m${i}`, at);
      current.set(`m${i}`, at);
    });
    current.set('m2', 99); // revised to a later expiry
    q.add('m2', 99);
    current.delete('m3'); // forgotten
    expect(q.due(45, (id) => current.get(id) ?? null).sort()).toEqual(['m1', 'm4', 'm6']);
    expect(q.due(45, (id) => current.get(id) ?? null)).toEqual([]);
    expect(q.due(100, (id) => current.get(id) ?? null).sort()).toEqual(['m0', 'm2', 'm5']);
    expect(q.size).toBe(0);
  });
});

describe('shard expiry', () => {
  it('hides an expired memory from every read at its expiry, then forgets it with a tombstone', async () => {
    const { shard } = open();
    const keep = await put(shard, item('kept forever', 0, null));
    const gone = await put(
      shard,
      item('short lived', 1, nowUs() + 60 * SEC, {
        edges: [{ targetId: keep, edgeType: 'caused_by', confidence: 1 }],
      }),
    );
    expect((await shard.handle('get', 'w', { id: gone, withEmbedding: false })).expiresAt).toBe(
      nowUs() + 60 * SEC,
    );

    clock.setMs(T0 + 59_999);
    expect(
      (
        await shard.handle('list', 'w', {
          entityId: null,
          kind: null,
          cursor: null,
          limit: 10,
          includeSuperseded: false,
        })
      ).memories,
    ).toHaveLength(2);

    clock.setMs(T0 + 60_000);
    await expect(
      shard.handle('get', 'w', { id: gone, withEmbedding: false }),
    ).rejects.toMatchObject({ code: 'not_found' });
    const listed = await shard.handle('list', 'w', {
      entityId: 'e',
      kind: null,
      cursor: null,
      limit: 10,
      includeSuperseded: true,
    });
    expect(listed.memories.map((m) => m.id)).toEqual([keep]);
    const recalled = await shard.handle('recall', 'w', {
      cue: vec(1),
      cueText: 'expiring',
      similarityMode: 'hybrid',
      cueContext: null,
      weights: DEFAULT_WEIGHTS,
      withEmbedding: false,
      strategies: [
        {
          strategy: 'similarity',
          topK: 10,
          efSearch: 50,
          entityId: null,
          timeRange: null,
          seedId: null,
          edgeTypes: null,
          maxDepth: 5,
          alpha: 0.5,
        },
        {
          strategy: 'temporal',
          topK: 10,
          efSearch: 50,
          entityId: 'e',
          timeRange: null,
          seedId: null,
          edgeTypes: null,
          maxDepth: 5,
          alpha: 0.5,
        },
      ],
    });
    expect(recalled.results.map((h) => h.memory.id)).toEqual([keep]);
    const walked = await shard.handle('graph', 'w', {
      centerId: keep,
      depth: 3,
      maxNodes: 10,
      edgeTypes: null,
      direction: 'both',
    });
    expect(walked.nodes.map((n) => n.id)).toEqual([keep]);
    expect(walked.edges).toEqual([]);
    expect(shard.takeMetrics().expired).toBe(1);
    expect(shard.memoryCount).toBe(1);
  });

  it('a subscription never pushes an expired memory, from fed text or from later writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-expiry-'));
    dirs.push(dir);
    const pushed: string[] = [];
    const shard = new Shard(
      {
        shard: 0,
        dir,
        durability: 'fsync',
        snapshotIntervalS: 3600,
        snapshotWalBytes: 1 << 30,
        eraseWithinS: 1,
      },
      (e) => {
        if (e.kind === 'push') pushed.push(...e.pushes.map((p) => p.memory.id));
      },
      undefined,
      clock,
    );
    shards.push(shard);
    await shard.handle('subOpen', 'w', {
      id: 7,
      entityId: null,
      kinds: ['episode'],
      threshold: 0.5,
      timeScopeUs: null,
      maxPushes: 5,
    });
    await put(shard, item('expires before the chunk arrives', 3, nowUs() + 1 * SEC));
    clock.setMs(T0 + 1_000);
    expect(await shard.handle('subMatch', 'w', { id: 7, vector: vec(3), offset: 0 })).toEqual([]);
    // A write that matches the recent chunk is pushed at once; one that has already expired is not.
    const live = await put(shard, item('still here', 3, null));
    await put(shard, item('expired on arrival', 3, nowUs() - 1));
    expect(pushed).toEqual([live]);
  });

  it('a subscription time scope counts back from the shard clock, for fed text and for later writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-expiry-'));
    dirs.push(dir);
    const pushed: string[] = [];
    const shard = new Shard(
      {
        shard: 0,
        dir,
        durability: 'fsync',
        snapshotIntervalS: 3600,
        snapshotWalBytes: 1 << 30,
        eraseWithinS: 1,
      },
      (e) => {
        if (e.kind === 'push') pushed.push(...e.pushes.map((p) => p.memory.id));
      },
      undefined,
      clock,
    );
    shards.push(shard);
    const old = await put(shard, item('written an hour ago', 4, null));
    clock.setMs(T0 + 3_600_000);
    const fresh = await put(shard, item('written just now', 4, null));
    clock.advanceMs(59_000);
    await shard.handle('subOpen', 'w', {
      id: 9,
      entityId: null,
      kinds: ['episode'],
      threshold: 0.5,
      timeScopeUs: 60 * SEC,
      maxPushes: 5,
    });
    const matched = await shard.handle('subMatch', 'w', { id: 9, vector: vec(4), offset: 0 });
    expect(matched.map((p) => p.memory.id)).toEqual([fresh]);
    expect(matched.map((p) => p.memory.id)).not.toContain(old);
    // A write is pushed when it is inside the scope at the time it is written.
    const later = await put(shard, item('written later', 4, null));
    expect(pushed).toEqual([later]);
  });

  it('prime’s recency window counts back from the shard clock', async () => {
    const { shard } = open();
    const old = await put(shard, item('written at T0', 5, null));
    clock.setMs(T0 + 600_000);
    const fresh = await put(shard, item('written ten minutes later', 6, null));
    clock.advanceMs(1_000);
    const prime = (windowUs: number) =>
      shard.handle('prime', 'w', {
        entityId: null,
        maxMemories: 10,
        cue: null,
        recencyWindowUs: windowUs,
        weights: DEFAULT_WEIGHTS,
        withEmbedding: false,
      });
    expect((await prime(60 * SEC)).results.map((r) => r.memory.id)).toEqual([fresh]);
    expect((await prime(3600 * SEC)).results.map((r) => r.memory.id).sort()).toEqual(
      [old, fresh].sort(),
    );
  });

  it('takes superseded versions with it, and a revise that extends the expiry wins over the old one', async () => {
    const { shard } = open();
    const id = await put(shard, item('first text', 0, nowUs() + 10 * SEC));
    await shard.handle('revise', 'w', {
      id,
      content: 'second text',
      embedding: vec(2),
      contextMode: 'merge',
      edges: [],
      expiresAt: nowUs() + 30 * SEC,
    });
    clock.setMs(T0 + 20_000);
    expect((await shard.handle('get', 'w', { id, withEmbedding: false })).content).toBe(
      'second text',
    );
    const all = await shard.handle('list', 'w', {
      entityId: null,
      kind: null,
      cursor: null,
      limit: 10,
      includeSuperseded: true,
    });
    expect(all.memories).toHaveLength(2);

    clock.setMs(T0 + 30_000);
    const after = await shard.handle('list', 'w', {
      entityId: null,
      kind: null,
      cursor: null,
      limit: 10,
      includeSuperseded: true,
    });
    expect(after.memories).toEqual([]);
    expect(shard.takeMetrics().expired).toBe(2);
  });

  it('a revise with expiresAt null keeps the memory past its old expiry', async () => {
    const { shard } = open();
    const id = await put(shard, item('was temporary', 0, nowUs() + 5 * SEC));
    await shard.handle('revise', 'w', { id, contextMode: 'merge', edges: [], expiresAt: null });
    clock.setMs(T0 + 3_600_000);
    expect((await shard.handle('get', 'w', { id, withEmbedding: false })).expiresAt).toBeNull();
  });

  it('expires memories with no request arriving (the shard tick), and erases their content from disk', async () => {
    const { shard, dir } = open();
    await put(shard, item('secret-expiring-7d2a', 0, nowUs() + 1 * SEC));
    await put(shard, item('kept', 1, null));
    clock.setMs(T0 + 1_000);
    // The shard's tick (real time, once a second) finds the expiry on the clock; erasure follows.
    await until(() => filesHolding(dir, 'secret-expiring-7d2a').length === 0, {
      what: 'the expired content to leave every file',
      everyMs: 25,
    }).catch(() => undefined);
    expect(filesHolding(dir, 'secret-expiring-7d2a')).toEqual([]);
    expect(shard.memoryCount).toBe(1);
    expect(filesHolding(dir, 'kept').length).toBeGreaterThan(0);
  });

  it('a memory that expired while the process was down is gone at start-up and erased from disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-expiry-'));
    dirs.push(dir);
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    await wal.append([
      {
        t: 'put',
        ws: 'w',
        m: stored(`${'0'.repeat(31)}1`, 'expired-while-down-91c3', T0 * 1000 + 5 * SEC),
      },
      { t: 'put', ws: 'w', m: stored(`${'0'.repeat(31)}2`, 'still here', null) },
    ]);
    await wal.close();
    clock.setMs(T0 + 10_000);
    const { shard } = open(dir);
    expect(shard.memoryCount).toBe(1);
    await expect(
      shard.handle('get', 'w', { id: `${'0'.repeat(31)}1`, withEmbedding: false }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await until(() => filesHolding(dir, 'expired-while-down-91c3').length === 0, {
      what: 'the expired content to leave every file',
      everyMs: 25,
    }).catch(() => undefined);
    expect(filesHolding(dir, 'expired-while-down-91c3')).toEqual([]);
  });
});

function stored(id: string, content: string, expiresAt: number | null): StoredMemory {
  return {
    id,
    content,
    importance: 0.5,
    context: {},
    entityId: null,
    kind: 'episode',
    createdAt: 1,
    updatedAt: 1,
    lastAccessedAt: 1,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt,
    embedding: new Uint8Array(32),
  };
}
