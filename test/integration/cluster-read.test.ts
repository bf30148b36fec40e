/**
 * A takeover's reads (cluster/message-get.ts) need only the stream's leader, not JetStream's meta
 * leader (issue 23): a snapshot object and a stream range are read with gets, each retried. Two of
 * three nats-servers are killed, so no meta leader can be elected; the one left still leads its own
 * (one-replica) streams. The object store's own reader (a push consumer, created through the meta
 * leader) gets nothing there; the gets read the object whole, its digest checked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { readObject, readRange, ReadDeadlineError } from '../../src/cluster/message-get.ts';
import {
  natsServerAvailable,
  startNatsCluster,
  stopNats,
  waitJetStreamCluster,
  type NatsServer,
} from '../helpers/nats.ts';

const HAVE_NATS = natsServerAvailable();

describe.skipIf(!HAVE_NATS)(
  'takeover reads without a JetStream meta leader (3 nats-servers, 2 killed)',
  () => {
    const dirs: string[] = [];
    let nats: NatsServer[] = [];
    let nc: NatsConnection;
    let jsm: JetStreamManager;
    let os: ObjectStore;
    const blob = Buffer.from(Array.from({ length: 700_000 }, (_, i) => (i * 31) % 251));

    beforeAll(async () => {
      nats = await startNatsCluster((i) => {
        const d = mkdtempSync(join(tmpdir(), `fb-read-nats${i}-`));
        dirs.push(d);
        return d;
      });
      await waitJetStreamCluster(
        nats.map((s) => s.url),
        60_000,
      );
      nc = await connect({ servers: nats.map((s) => s.url) });
      const js = jetstream(nc, { timeout: 1000 });
      jsm = await jetstreamManager(nc, { timeout: 1000 });
      os = await new Objm(js).create('readtest', { replicas: 1 });
      await os.putBlob({ name: 'other' }, Buffer.alloc(300_000, 7)); // chunks of two objects interleave in one stream
      await os.putBlob({ name: 'snap' }, blob);
      // The partition stream on the object store's server: each test server is tagged with its name
      // (helpers/nats.ts). Placement by trial failed there: nats-server 2.12 put a new one-replica
      // stream on a server holding fewer streams, 41 times in a row.
      const host = (await jsm.streams.info('OBJ_readtest')).cluster?.leader;
      if (host === undefined) throw new Error('the object store stream has no leader');
      await jsm.streams.add({
        name: 'readtest_p0',
        subjects: ['readtest.p0'],
        num_replicas: 1,
        placement: { cluster: 'fbtest', tags: [host] },
      });
      expect((await jsm.streams.info('readtest_p0')).cluster?.leader).toBe(host);
      for (let i = 1; i <= 300; i++) await js.publish('readtest.p0', Buffer.from(`m${i}`));
      // Kill the two other servers: no meta leader from here on.
      for (const s of nats) if (s.opts.cluster?.name !== host) await stopNats(s);
      expect(
        nats.filter((s) => s.proc.exitCode === null && s.proc.signalCode === null).length,
      ).toBe(1);
    }, 120_000);

    afterAll(async () => {
      await nc?.close();
      for (const s of nats) await stopNats(s);
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('the object store reader gets nothing; gets read the snapshot object whole', async () => {
      // What the takeover did before: it gives up (here after 3 s) without the object.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 3000)));
      const old = await Promise.race([
        os.getBlob('snap').then(
          (b) => (b ? 'read' : 'missing'),
          () => 'failed',
        ),
        late,
      ]).finally(() => clearTimeout(timer));
      expect(old).not.toBe('read');
      const read = await readObject(os, jsm, 'snap', 10_000);
      expect(read?.equals(blob)).toBe(true);
      expect(await readObject(os, jsm, 'absent', 10_000)).toBeNull();
    }, 60_000);

    it('a stream range is read in order with gets; a purged sequence is a gap, not skipped', async () => {
      const seen: string[] = [];
      await readRange(
        jsm,
        'readtest_p0',
        1,
        300,
        performance.now() + 10_000,
        (m) => seen.push(m.string()),
        (seq) => new Error(`gap at ${seq}`),
        64,
      );
      expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => `m${i + 1}`));
      await jsm.streams.purge('readtest_p0', { seq: 100 });
      await expect(
        readRange(
          jsm,
          'readtest_p0',
          98,
          110,
          performance.now() + 3000,
          () => undefined,
          (seq) => new Error(`gap at ${seq}`),
        ),
      ).rejects.toThrow('gap at 98');
    }, 60_000);

    it('a read that gets no answer is retried until its deadline, then fails naming it', async () => {
      await expect(
        readRange(
          jsm,
          'no_such_stream',
          1,
          1,
          performance.now() + 1500,
          () => undefined,
          (seq) => new Error(`gap at ${seq}`),
        ),
      ).rejects.toBeInstanceOf(ReadDeadlineError);
    }, 30_000);
  },
);
