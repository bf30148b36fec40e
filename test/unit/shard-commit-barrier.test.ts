/**
 * Reads never see a write whose log append has not landed (shard/commit-barrier). In cluster mode
 * the partition test's linearizability check caught reads through other nodes returning a revise
 * whose client had timed out, which the takeover then lost: the owner applied it, served it, and
 * its JetStream publish never landed. A shard on a log whose appends the test releases by hand.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ShardStorage } from '../../src/shard/storage.ts';
import { Shard } from '../../src/shard/shard.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import { nextTurn } from '../helpers/wait.ts';

/** The log part of a storage: the test's shard recovers nothing. */
type Log = Omit<ShardStorage, 'recovered'>;

interface HeldLog extends Log {
  held: Array<{ resolve: () => void; reject: (e: Error) => void }>;
  fail(e: Error): void;
}

function heldLog(): HeldLog {
  let failed: Error | null = null;
  const held: HeldLog['held'] = [];
  return {
    get failed() {
      return failed;
    },
    held,
    fail(e: Error) {
      failed = e;
      for (const h of held.splice(0)) h.reject(e);
    },
    append: () => new Promise<void>((resolve, reject) => held.push({ resolve, reject })),
    close: async () => {},
  };
}

const shards: Shard[] = [];
afterEach(async () => {
  for (const s of shards.splice(0)) await s.shutdown().catch(() => undefined);
});

function open(log: Log): Shard {
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
    Object.assign(log, { recovered }),
  );
  shards.push(shard);
  return shard;
}

const item = (content: string) => ({
  content,
  importance: 0.5,
  context: {},
  entityId: null,
  kind: 'episode' as const,
  embedding: new Float32Array(4),
  edges: [],
});

/** Lets every promise chain that can move move, and says whether `p` has settled. */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 10; i++) await nextTurn();
  return done;
}

describe('shard commit barrier', () => {
  it("a read of the workspace waits until the write's append has landed", async () => {
    const log = heldLog();
    const shard = open(log);
    const write = shard.handle('remember', 'w', { items: [item('not durable yet')] });
    const listed = shard.handle('list', 'w', {
      limit: 10,
      cursor: null,
      filter: null,
      entityId: null,
      kind: null,
      includeSuperseded: false,
    });
    const counted = shard.handle('count', 'w', {});
    expect(await settledYet(counted)).toBe(false);
    expect(await settledYet(listed)).toBe(false);
    expect(log.held).toHaveLength(1);
    log.held[0]!.resolve();
    await write;
    expect(await counted).toBe(1);
    expect((await listed).memories.map((m) => m.content)).toEqual(['not durable yet']);
  });

  it('a read waiting on an append that fails is refused, and never shows the write', async () => {
    const log = heldLog();
    const shard = open(log);
    const write = shard.handle('remember', 'w', { items: [item('lost with the lease')] });
    const counted = shard.handle('count', 'w', {});
    expect(await settledYet(counted)).toBe(false);
    log.fail(new Error('publish timed out'));
    await expect(write).rejects.toThrow();
    await expect(counted).rejects.toMatchObject({ code: 'unavailable' });
  });

  it("another workspace's reads do not wait", async () => {
    const log = heldLog();
    const shard = open(log);
    const write = shard.handle('remember', 'w', { items: [item('pending')] });
    expect(await shard.handle('count', 'v', {})).toBe(0);
    log.held[0]!.resolve();
    await write;
  });
});
