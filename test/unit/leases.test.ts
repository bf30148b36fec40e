/**
 * cluster/leases renewalFailure: a failed renewal drops the partition only when the lease is
 * really gone (compare-and-set refused) or a whole lease has passed since the last renewal was
 * sent; a timeout or "no responders" during a NATS leader election keeps it (issue 23, item 3:
 * every such failure used to drop the partition, and the takeovers that followed needed the
 * JetStream meta leader).
 */
import { describe, expect, it } from 'vitest';
import { JetStreamApiError } from '@nats-io/jetstream';
import { renewalFailure } from '../../src/cluster/leases.ts';

const refused = new JetStreamApiError({ code: 400, err_code: 10071, description: 'wrong last sequence: 12' });
const refusedUnknown = new JetStreamApiError({ code: 400, err_code: 10164, description: 'wrong last sequence: unknown' });

describe('renewalFailure', () => {
  it('a refused compare-and-set loses the lease at once', () => {
    expect(renewalFailure(refused, 10, 5000)).toBe('lost');
    expect(renewalFailure(refusedUnknown, 10, 5000)).toBe('lost');
  });

  it('a timeout or a missing JetStream while a leader is elected keeps the lease, to be retried', () => {
    expect(renewalFailure(new Error('timeout'), 1800, 5000)).toBe('retry');
    expect(renewalFailure(new Error('jetstream is not enabled'), 4999, 5000)).toBe('retry');
    expect(renewalFailure(new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' }), 100, 5000)).toBe('retry');
  });

  it('once a whole lease has passed since the last renewal was sent, another node may hold it: lost', () => {
    expect(renewalFailure(new Error('timeout'), 5000, 5000)).toBe('lost');
    expect(renewalFailure(new Error('timeout'), 9000, 5000)).toBe('lost');
  });
});
