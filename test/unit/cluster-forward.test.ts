/**
 * A forwarded call (cluster/forward.ts) gives up as soon as its partition's owner changes, rather
 * than waiting out the whole shard timeout for a node that died or lost its lease (issue 23, item 3:
 * writers sat 30 s on calls to a killed owner while its partitions were already served elsewhere).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { forward, pack, type Forward } from '../../src/cluster/forward.ts';

const req: Forward = { p: 3, ws: 'w', m: 'get', i: {}, o: 'a' };

/** A connection whose requests are answered by `answer` (never, when it returns null). */
function connection(answer: () => Promise<Uint8Array> | null): NatsConnection {
  const request = (): Promise<{ data: Uint8Array }> => {
    const a = answer();
    return a ? a.then((data) => ({ data })) : new Promise(() => undefined);
  };
  return { request } as unknown as NatsConnection;
}

describe('forward', () => {
  it('returns the owner’s answer while the owner stays the same', async () => {
    const nc = connection(() => Promise.resolve(pack({ ok: true, v: 42 })));
    expect(await forward(nc, 'x.node.b.call', req, 30_000, () => true)).toEqual({
      ok: true,
      v: 42,
    });
  });

  it('gives up with a retryable answer once the partition has another owner (the 30 s timeout would outlast the test)', async () => {
    let owner = 'b';
    const nc = connection(() => null); // the called node never answers (killed after taking the call)
    const pending = forward(nc, 'x.node.b.call', req, 30_000, () => owner === 'b');
    owner = 'c';
    const reply = await pending;
    expect(reply).toMatchObject({ ok: false, code: 'unavailable' });
    expect(reply.ok ? '' : reply.message).toMatch(
      /changed owner.*may or may not have been applied/,
    );
    expect(reply.ok ? true : reply.notOwner).toBeFalsy(); // the write may have been applied: not silently retried
  });
});
