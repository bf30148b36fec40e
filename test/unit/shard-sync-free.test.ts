/**
 * Issue 51 item 5: a shard's periodic storage work (a snapshot, which rotates the log and deletes
 * the files it covers, and an erasure in place, with its journal) makes no synchronous sync or
 * rename: each would hold the shard's thread, and every request waiting on it, for the disk's
 * time (a directory's sync took 2-40 ms on the project's machine under load). Counted, not timed.
 */
import * as fs from 'node:fs';
import { readdirSync } from 'node:fs';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ERASE_JOURNAL } from '../../src/shard/persist/erase.ts';
import type { Shard } from '../../src/shard/shard.ts';
import { erasureShards, filesHolding } from '../helpers/erasure-shard.ts';
import { until } from '../helpers/wait.ts';

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    fsyncSync: vi.fn(real.fsyncSync),
    fdatasyncSync: vi.fn(real.fdatasyncSync),
    renameSync: vi.fn(real.renameSync),
  };
});

const ERASE_WITHIN_S = 1;
const { tempDir, open } = erasureShards('flashbulb-sync-free-', ERASE_WITHIN_S);

async function remember(shard: Shard, content: string): Promise<string> {
  const [m] = await shard.handle('remember', 'w', {
    items: [
      {
        content,
        importance: 0.5,
        context: {},
        entityId: null,
        kind: 'episode',
        embedding: new Float32Array([1, 0, 0, 0]),
        edges: [],
      },
    ],
  });
  return m?.id as string;
}

const syncCalls = (): number =>
  vi.mocked(fs.fsyncSync).mock.calls.length +
  vi.mocked(fs.fdatasyncSync).mock.calls.length +
  vi.mocked(fs.renameSync).mock.calls.length;

describe("a shard's snapshot and erasure", () => {
  beforeEach(() => vi.clearAllMocks());

  it('sync and rename off the shard thread: no synchronous fsync, fdatasync or rename while serving', async () => {
    const dir = tempDir();
    const shard = open(dir);
    const secret = 'secret-sync-free-3c7d';
    const id = await remember(shard, secret);
    await remember(shard, 'kept');
    vi.clearAllMocks(); // opening the shard (its log's first segment) may sync synchronously
    await shard.snapshot();
    expect(readdirSync(dir).filter((f) => f.startsWith('snap-'))).toHaveLength(1);
    await remember(shard, 'after the snapshot');
    await shard.snapshot(); // deletes the first snapshot and the log it covered
    await shard.handle('forget', 'w', { memoryIds: [id] });
    await until(
      () => filesHolding(dir, secret).length === 0 && !readdirSync(dir).includes(ERASE_JOURNAL),
      { what: 'the erasure in place to finish', deadlineMs: 10_000, everyMs: 25 },
    );
    expect(syncCalls()).toBe(0);
  });
});
