/**
 * cluster/leases renewalFailure: a failed renewal drops the partition only when the lease is
 * really gone (compare-and-set refused) or a whole lease has passed since the last renewal was
 * sent; a timeout or "no responders" during a NATS leader election keeps it (issue 23, item 3:
 * every such failure used to drop the partition, and the takeovers that followed needed the
 * JetStream meta leader).
 */
import { describe, expect, it } from 'vitest';
import { JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { LeaseTable, renewalFailure } from '../../src/cluster/leases.ts';

/** One KV key with compare-and-set on its revision; `loseAcks` updates are stored but answered with a timeout. */
class FakeKv {
  revision = 0;
  value = '';
  loseAcks = 0;

  kv(): KV {
    const update = async (_k: string, v: string, rev: number): Promise<number> => {
      if (rev !== this.revision)
        throw new JetStreamApiError({
          code: 400,
          err_code: 10071,
          description: `wrong last sequence: ${this.revision}`,
        });
      this.revision += 1;
      this.value = v;
      if (this.loseAcks > 0) {
        this.loseAcks -= 1;
        throw new Error('timeout');
      }
      return this.revision;
    };
    const get = async () => ({
      operation: 'PUT',
      revision: this.revision,
      string: () => this.value,
    });
    const create = async (_k: string, v: string): Promise<number> => update(_k, v, 0);
    return { update, get, create } as unknown as KV;
  }
}

const refused = new JetStreamApiError({
  code: 400,
  err_code: 10071,
  description: 'wrong last sequence: 12',
});
const refusedUnknown = new JetStreamApiError({
  code: 400,
  err_code: 10164,
  description: 'wrong last sequence: unknown',
});

describe('renewalFailure', () => {
  it('a refused compare-and-set loses the lease at once', () => {
    expect(renewalFailure(refused, 10, 5000)).toBe('lost');
    expect(renewalFailure(refusedUnknown, 10, 5000)).toBe('lost');
  });

  it('a timeout or a missing JetStream while a leader is elected keeps the lease, to be retried', () => {
    expect(renewalFailure(new Error('timeout'), 1800, 5000)).toBe('retry');
    expect(renewalFailure(new Error('jetstream is not enabled'), 4999, 5000)).toBe('retry');
    expect(
      renewalFailure(
        new JetStreamApiError({
          code: 503,
          err_code: 10008,
          description: 'JetStream system temporarily unavailable',
        }),
        100,
        5000,
      ),
    ).toBe('retry');
  });

  it('once a whole lease has passed since the last renewal was sent, another node may hold it: lost', () => {
    expect(renewalFailure(new Error('timeout'), 5000, 5000)).toBe('lost');
    expect(renewalFailure(new Error('timeout'), 9000, 5000)).toBe('lost');
  });
});

describe('LeaseTable.renew', () => {
  it('takes up the revision of an earlier renewal that was stored although its acknowledgement was lost', async () => {
    const store = new FakeKv();
    const leases = new LeaseTable(store.kv(), 'a');
    const rev = (await leases.acquire(3, 'term-1')) as number;
    store.loseAcks = 1;
    await expect(leases.renew(3, rev, 'term-1', 1000)).rejects.toThrow('timeout');
    // The next renewal still names the old revision: refused, but the key holds our term.
    const next = await leases.renew(3, rev, 'term-1', 1000);
    expect(next).toBe(store.revision);
    expect(JSON.parse(store.value)).toMatchObject({ node: 'a', term: 'term-1' });
  });

  it('a lease another node or another term of ours holds now is lost', async () => {
    const store = new FakeKv();
    const a = new LeaseTable(store.kv(), 'a');
    const rev = (await a.acquire(3, 'term-1')) as number;
    store.value = JSON.stringify({ node: 'b', term: 'term-9', at: 0 });
    store.revision += 1; // b took it after ours expired
    await expect(a.renew(3, rev, 'term-1', 1000)).rejects.toBeInstanceOf(JetStreamApiError);
    store.value = JSON.stringify({ node: 'a', term: 'term-2', at: 0 });
    store.revision += 1;
    await expect(a.renew(3, rev, 'term-1', 1000)).rejects.toBeInstanceOf(JetStreamApiError);
  });
});
