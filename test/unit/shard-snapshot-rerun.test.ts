/**
 * A snapshot asked for while one runs is run again when the first ends. When that re-run fails
 * (in cluster mode: NATS cut off by a network partition), the failure is logged, not left as an
 * unhandled rejection: found by test/integration/cluster-partition.test.ts, where both majority
 * nodes died of it ("TimeoutError: timeout" from the object store, uncaught).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Shard } from '../../src/shard/shard.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import { nextTurn, until } from '../helpers/wait.ts';

const unhandled: unknown[] = [];
const onUnhandled = (err: unknown): void => void unhandled.push(err);
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  vi.restoreAllMocks();
});

describe('shard snapshot re-run', () => {
  it('a re-run snapshot that fails is logged, not an unhandled rejection', async () => {
    process.on('unhandledRejection', onUnhandled);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    let calls = 0;
    const log = {
      failed: null,
      append: async (): Promise<void> => {},
      close: async (): Promise<void> => {},
      snapshot: async (): Promise<void> => {
        calls += 1;
        throw new Error(`snapshot ${calls}: publish failed: timeout`);
      },
    };
    const recovered = {
      state: new ShardState(),
      replayedRecords: 0,
      truncatedTail: null,
      staleFiles: false,
    };
    const shard = new Shard(
      {
        shard: 0,
        dir: '/nonexistent',
        durability: 'fsync',
        snapshotIntervalS: 3600,
        snapshotWalBytes: 1 << 30,
        eraseWithinS: 3600,
      },
      () => {},
      { recovered, ...log },
    );
    const first = shard.snapshot().catch(() => undefined);
    const second = shard.snapshot().catch(() => undefined); // asked while the first runs: a re-run follows
    await Promise.all([first, second]);
    await until(() => calls >= 2, { what: 'the re-run snapshot' });
    for (let i = 0; i < 5; i++) await nextTurn(); // its rejection, handled or not, is settled by now
    expect(unhandled).toEqual([]);
    expect(errors.mock.calls.some((c) => String(c[1]).includes('snapshot 2'))).toBe(true);
    await shard.shutdown();
  });
});
