/**
 * Snapshot pointer and stream trim of a cluster partition (cluster/snapshots.ts, stream-log.ts,
 * trim.ts) against a real nats-server on loopback, without Flashbulb nodes: a replay that meets a
 * stream trimmed under it fails instead of skipping the trimmed writes (issue 23, 0a: a resumed
 * owner's trim raced a takeover's replay); an owner whose lease is not confirmed neither moves the
 * pointer nor trims; the stream is trimmed below a snapshot only once it was kept for the retain
 * time and the pointer does not read older than it, so NATS losing its newest pointer move and
 * object in a failover never leaves the stream starting after every snapshot there is (issue 23:
 * "the stream starts at 86 but the newest snapshot covers only up to 84").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { PartitionSnapshots } from '../../src/cluster/snapshots.ts';
import { encodeEntry, StreamLog } from '../../src/cluster/stream-log.ts';
import { readObject } from '../../src/cluster/message-get.ts';
import { ensureStream, replayStream, StreamGapError } from '../../src/cluster/stream-replay.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import { recoverAndFence } from '../../src/cluster/takeover.ts';
import { ClusterSubjects } from '../../src/cluster/subjects.ts';
import { natsServerAvailable, startNats, stopNats, type NatsServer } from '../helpers/nats.ts';
import { until } from '../helpers/wait.ts';

const HAVE_NATS = natsServerAvailable();

function access(i: number): LogRecord {
  return { t: 'access', ws: 'w', id: `m${i}`, n: i, at: i };
}

describe.skipIf(!HAVE_NATS)('cluster snapshots and trims (one nats-server)', () => {
  let dir = '';
  let nats: NatsServer | undefined;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let meta: KV;
  let os: ObjectStore;
  let store: PartitionSnapshots;
  let n = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fb-trim-'));
    nats = await startNats({ storeDir: dir });
    nc = await connect({ servers: [nats.url] });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    meta = await new Kvm(nc).create('trim-meta', { history: 1 });
    os = await new Objm(nc).create('trim-snapshots');
    store = new PartitionSnapshots(os, meta, jsm, 'trim-meta');
  });

  afterAll(async () => {
    await nc?.close();
    await stopNats(nats);
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh partition stream holding `count` messages of one record each. */
  async function partition(count: number): Promise<{ p: number; stream: string; subject: string }> {
    n += 1;
    const p = n;
    const stream = `trim_p${p}`;
    const subject = `trim.p.${p}.log`;
    await ensureStream(jsm, stream, subject, 1);
    for (let i = 1; i <= count; i++)
      await js.publish(subject, encodeEntry({ node: 'a', records: [access(i)] }));
    return { p, stream, subject };
  }

  function log(
    part: { p: number; stream: string; subject: string },
    lastSeq: number,
    confirm: () => Promise<void>,
    retainMs = 300,
  ): StreamLog {
    return new StreamLog({
      js,
      subject: part.subject,
      node: 'a',
      term: part.p,
      lastSeq,
      timeoutMs: 5000,
      onFailed: () => undefined,
      snapshots: { store, partition: part.p, jsm, stream: part.stream, confirm, retainMs },
    });
  }

  /** What node b's takeover of a partition needs (one nats-server, replicas 1). */
  function takeoverDeps(): Parameters<typeof recoverAndFence>[0] {
    return {
      node: 'b',
      js,
      jsm,
      reader: { js, jsm },
      snapshots: store,
      subjects: new ClusterSubjects('trim'),
      replicas: 1,
      timeoutMs: 5000,
    };
  }

  it('a replay that meets a stream trimmed below where it reads fails (the takeover reads the pointer again) instead of skipping writes', async () => {
    const part = await partition(10);
    await jsm.streams.purge(part.stream, { seq: 6 }); // what a deposed owner's trim did after the new owner read the pointer
    await expect(replayStream({ js, jsm }, part.stream, 2, 10)).rejects.toBeInstanceOf(
      StreamGapError,
    );
    const whole = await replayStream({ js, jsm }, part.stream, 6, 10);
    expect(whole.messages).toBe(5);
  });

  /** `jsm` with its message gets counted. */
  function countingGets(): { jsm: JetStreamManager; gets: () => number } {
    let gets = 0;
    const streams = new Proxy(jsm.streams, {
      get: (target, key, receiver) =>
        key === 'getMessage'
          ? (...args: Parameters<JetStreamManager['streams']['getMessage']>) => {
              gets += 1;
              return target.getMessage(...args);
            }
          : Reflect.get(target, key, receiver),
    });
    return {
      jsm: new Proxy(jsm, {
        get: (target, key, receiver) =>
          key === 'streams' ? streams : Reflect.get(target, key, receiver),
      }),
      gets: () => gets,
    };
  }

  it('a takeover replays a long stream through a consumer (8× faster than one get a message), in order', async () => {
    const part = await partition(300);
    const counted = countingGets();
    const replay = await replayStream({ js, jsm: counted.jsm }, part.stream, 1, 300);
    expect(replay.messages).toBe(300);
    expect(replay.recovered.replayedRecords).toBe(300);
    expect(counted.gets()).toBe(0);
  });

  it('a replay whose consumer cannot be created (no JetStream meta leader) or stops delivering goes on with gets from where it got', async () => {
    const part = await partition(300);
    // Never answers, as a consumer creation does while NATS elects its meta leader.
    const stuck = {
      consumers: { get: () => new Promise(() => undefined) },
    } as unknown as JetStreamClient;
    const counted = countingGets();
    const none = await replayStream({ js: stuck, jsm: counted.jsm }, part.stream, 1, 300);
    expect(none.messages).toBe(300);
    expect(counted.gets()).toBe(300);
    // Delivers the first 100, then nothing.
    const first = await Promise.all(
      Array.from({ length: 100 }, (_, i) => jsm.streams.getMessage(part.stream, { seq: i + 1 })),
    );
    let fetches = 0;
    const batchOf = (msgs: typeof first) => ({
      stop: () => undefined,
      async *[Symbol.asyncIterator]() {
        yield* msgs;
      },
    });
    const partial = {
      consumers: {
        get: async () => ({
          fetch: async () => batchOf(fetches++ === 0 ? first : []),
          delete: async () => true,
        }),
      },
    } as unknown as JetStreamClient;
    const counted2 = countingGets();
    const some = await replayStream({ js: partial, jsm: counted2.jsm }, part.stream, 1, 300);
    expect(some.messages).toBe(300);
    expect(counted2.gets()).toBe(200);
  });

  it('an object is read whole by direct gets, its chunks picked out from among other objects written at the same time', async () => {
    const blobs = [0, 1, 2].map((k) =>
      Buffer.from(Array.from({ length: 600_000 + k * 70_000 }, (_, i) => (i * (7 + k)) % 253)),
    );
    await Promise.all(blobs.map((b, k) => os.putBlob({ name: `interleaved-${k}` }, b)));
    // Written at once, their chunks interleave in the stream (they did in every run here).
    const counted = countingGets();
    for (const [k, b] of blobs.entries()) {
      expect((await readObject(os, counted.jsm, `interleaved-${k}`, 10_000))?.equals(b)).toBe(true);
    }
    // Read with direct gets (the payload as it is), not the JSON gets' base64 (half a takeover's time).
    expect(counted.gets()).toBe(0);
  });

  it('an owner whose lease is not confirmed neither moves the snapshot pointer nor trims the stream', async () => {
    const part = await partition(8);
    const l = log(part, 8, () => Promise.reject(new Error('lease lost')));
    await expect(l.snapshot(new ShardState())).rejects.toThrow('lease lost');
    await l.trimmed;
    expect(await store.pointer(part.p)).toBeNull();
    expect((await jsm.streams.info(part.stream)).state.first_seq).toBe(1);
    // The object it stored for the refused snapshot is gone again.
    const names: string[] = [];
    for (const o of await os.list()) names.push(o.name);
    expect(names.filter((x) => x.startsWith(`p${part.p}-`))).toEqual([]);
  });

  it('the stream is trimmed below a snapshot only once it was kept for the retain time, and not while the pointer reads older than it', async () => {
    const part = await partition(6);
    const l = log(part, 6, () => Promise.resolve(), 400);
    await l.snapshot(new ShardState());
    const first = await store.pointer(part.p);
    expect(first?.pointer.seq).toBe(6);
    expect((await jsm.streams.info(part.stream)).state.first_seq).toBe(1); // not yet: kept for the retain time first
    await l.trimmed;
    expect((await jsm.streams.info(part.stream)).state.first_seq).toBe(6);

    // A second snapshot whose pointer move NATS does not keep: the pointer goes back before the trim.
    for (let i = 7; i <= 12; i++) await l.append([access(i)]);
    await l.snapshot(new ShardState());
    const second = await store.pointer(part.p);
    expect(second?.pointer.seq).toBe(12);
    await meta.update(
      `snap.p${String(part.p)}`,
      JSON.stringify(first?.pointer),
      second?.revision ?? 0,
    );
    await l.trimmed;
    const info = await jsm.streams.info(part.stream);
    expect(info.state.first_seq).toBe(6);
    const state = new ShardState();
    const snap = await store.load(part.p, state);
    const replay = await replayStream(
      { js, jsm },
      part.stream,
      snap.seq + 1,
      info.state.last_seq,
      state,
    );
    expect(replay.messages).toBe(6);
  });

  it('NATS losing its newest pointer move and snapshot object (seen after a meta-leader kill) loses no record: the stream still starts at the snapshot before', async () => {
    const part = await partition(6);
    const l = log(part, 6, () => Promise.resolve(), 300);
    await l.snapshot(new ShardState());
    await l.trimmed;
    const first = await store.pointer(part.p);
    for (let i = 7; i <= 12; i++) await l.append([access(i)]);
    await l.snapshot(new ShardState());
    const second = await store.pointer(part.p);
    expect(second?.pointer.seq).toBe(12);
    // The failover: the pointer reads its previous value and the newest object is gone.
    await meta.update(`snap.p${part.p}`, JSON.stringify(first?.pointer), second?.revision ?? 0);
    await os.delete(second?.pointer.object ?? '');
    await l.trimmed;
    for (let i = 13; i <= 14; i++) await l.append([access(i)]);
    expect((await jsm.streams.info(part.stream)).state.first_seq).toBe(6);
    const taken = await recoverAndFence(takeoverDeps(), part.p, 98, () => true);
    expect(taken.recovered.replayedRecords).toBe(8); // 7–14, on top of the snapshot at 6
    expect(taken.fenceSeq).toBe(15);
  });

  it('a snapshot object the pointer names that no longer reads whole (NATS lost some of its chunks) is passed over for the one before it', async () => {
    const part = await partition(6);
    const l = log(part, 6, () => Promise.resolve(), 100);
    await l.snapshot(new ShardState());
    await l.trimmed;
    for (let i = 7; i <= 12; i++) await l.append([access(i)]);
    const damaged = `p${part.p}-12-0badc0de`;
    await os.putBlob({ name: damaged }, Buffer.from('not a snapshot'));
    const now = await store.pointer(part.p);
    await meta.update(
      `snap.p${part.p}`,
      JSON.stringify({ seq: 12, object: damaged, at: Date.now() }),
      now?.revision ?? 0,
    );
    const taken = await recoverAndFence(takeoverDeps(), part.p, 97, () => true);
    expect(taken.recovered.replayedRecords).toBe(6); // 7–12, on top of the snapshot at 6
    expect(taken.fenceSeq).toBe(13);
  });

  it('a stream with no message left (purged up to a snapshot that covers all of it) can be taken: the fence expects no last message', async () => {
    const part = await partition(4);
    const l = log(part, 4, () => Promise.resolve(), 100);
    await l.snapshot(new ShardState());
    await jsm.streams.purge(part.stream); // what NATS was seen to leave after a partition healed
    const info = await jsm.streams.info(part.stream);
    expect(info.state.messages).toBe(0);
    const taken = await recoverAndFence(takeoverDeps(), part.p, 96, () => true);
    expect(taken.recovered.replayedRecords).toBe(0);
    expect(taken.fenceSeq).toBe(5);
  });

  it('a snapshot is read back before the pointer moves; older ones are deleted once the stream is trimmed below a newer one', async () => {
    const part = await partition(3);
    const l = log(part, 3, () => Promise.resolve(), 50);
    await l.snapshot(new ShardState());
    await l.trimmed;
    const one = (await store.pointer(part.p))?.pointer.object;
    await l.append([access(4)]);
    await l.snapshot(new ShardState());
    await l.trimmed;
    const two = (await store.pointer(part.p))?.pointer.object;
    expect(two).not.toBe(one);
    await until(async () => ((await os.info(one ?? '')) ?? { deleted: true }).deleted, {
      what: 'the replaced snapshot to be deleted',
      deadlineMs: 5000,
      everyMs: 50,
    });
    expect((await os.info(two ?? ''))?.deleted ?? false).toBe(false);
  });

  it('a pointer read older than the stream start after a trim (seen after a NATS meta leader kill) does not make the partition untakeable: the newest snapshot object covering the stream is loaded', async () => {
    const part = await partition(6);
    const l = log(part, 6, () => Promise.resolve(), 50);
    await l.snapshot(new ShardState());
    await l.trimmed;
    const old = await store.pointer(part.p);
    for (let i = 7; i <= 12; i++) await l.append([access(i)]);
    await l.snapshot(new ShardState());
    await l.trimmed;
    expect((await jsm.streams.info(part.stream)).state.first_seq).toBe(12);
    // The pointer reads as it was before the last move, the stream already trimmed past it.
    const now = await store.pointer(part.p);
    await meta.update(`snap.p${part.p}`, JSON.stringify({ ...old?.pointer }), now?.revision ?? 0);
    for (let i = 13; i <= 14; i++) await l.append([access(i)]);
    const taken = await recoverAndFence(takeoverDeps(), part.p, 99, () => true);
    // Loaded the snapshot at 12 (the object the lost move named), replayed 13 and 14 (and the fence at 12's place is after them).
    expect(taken.recovered.replayedRecords).toBe(2);
    expect(taken.fenceSeq).toBe(15);
  });
});
