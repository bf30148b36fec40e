/**
 * The disk under a running server fills (/dev/full stands in for it: the shard's next log segment
 * points there, and the first snapshot moves the log onto it). What a client and an operator see:
 * the write is refused as 503 `unavailable` naming the storage failure, readiness names the shard,
 * a gauge says it; then the shard is restarted from its files on its own and serves again with
 * exactly the acknowledged writes, its subscriptions closed. Stopping while the log is failed
 * reports the missing final snapshot. test/unit/shard-storage-failure.test.ts covers the shard.
 */
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startTestApp } from '../helpers/app.ts';
import { subscribeSse } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const env = {
  FLASHBULB_SHARDS: '1',
  FLASHBULB_SNAPSHOT_INTERVAL_S: '1',
  FLASHBULB_AUTH_ENABLED: 'false',
};

/**
 * What the failed write left on the full disk: nothing. Done at once after the failure, before the
 * restart (FLASHBULB_SHARD_RESTART_S, 2 s) would read the segment: /dev/full never ends.
 */
function freeDisk(shardDir: string): void {
  rmSync(join(shardDir, 'wal-00000002.log'));
  writeFileSync(join(shardDir, 'wal-00000002.log'), '');
}

/** A server whose shard's log has just failed on a full disk, with one write acknowledged before. */
async function onFullDisk(): Promise<{
  t: Awaited<ReturnType<typeof startTestApp>>;
  shardDir: string;
}> {
  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-full-disk-'));
  dirs.push(dataDir);
  const shardDir = join(dataDir, 'shard-000');
  const t = await startTestApp({ dataDir }, env);
  symlinkSync('/dev/full', join(shardDir, 'wal-00000002.log'));
  expect(
    (await t.req('POST', '/v1/memories', { body: { content: 'written before the disk filled' } }))
      .status,
  ).toBe(201);
  await until(() => existsSync(join(shardDir, 'snap-00000002.snap')), {
    what: 'the snapshot that moves the log to the full disk',
  });
  return { t, shardDir };
}

describe('a full disk under a running server', () => {
  it('refuses writes as a storage failure, says so in readiness and metrics, and the shard comes back on its own with every acknowledged write', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { t, shardDir } = await onFullDisk();
    try {
      const { stream } = await subscribeSse(t.base, null, { confidence_threshold: 0.3 });
      const refused = await t.req('POST', '/v1/memories', {
        body: { content: 'written once the disk is full' },
      });
      freeDisk(shardDir);
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({
        error_code: 'unavailable',
        message: expect.stringMatching(/^storage failure: log write failed: ENOSPC/),
      });
      expect((await t.req('GET', '/v1/memories')).status).toBe(503);
      const ready = await t.req('GET', '/v1/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.reason).toMatch(
        /^shard 0 cannot write its log \(log write failed: ENOSPC.*\); it refuses requests and is restarted from its files until that works$/,
      );
      expect((await t.req('GET', '/v1/metrics')).text).toContain(
        'flashbulb_shard_storage_failed{shard="0"} 1',
      );

      // The shard restarts by itself, on its files.
      await until(async () => (await t.req('GET', '/v1/health/ready')).status === 200, {
        what: 'the shard restarted on its files',
        deadlineMs: 20_000,
      });
      const listed = await t.req('GET', '/v1/memories');
      expect(listed.body.memories.map((m: { content: string }) => m.content)).toEqual([
        'written before the disk filled',
      ]);
      expect(
        (await t.req('POST', '/v1/memories', { body: { content: 'written after the restart' } }))
          .status,
      ).toBe(201);
      expect((await t.req('GET', '/v1/metrics')).text).toContain(
        'flashbulb_shard_storage_failed{shard="0"} 0',
      );
      // The restarted shard holds no subscriptions: the one open before was closed.
      const [closed] = await stream.waitFor('closed');
      expect(closed?.json).toMatchObject({ reason: 'closed' });
    } finally {
      await t.app.stop();
      errors.mockRestore();
    }
  });

  it('stopping while the log is failed exits with the missing final snapshot named; a restart of the server has the acknowledged writes', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { t, shardDir } = await onFullDisk();
    expect(
      (await t.req('POST', '/v1/memories', { body: { content: 'written once the disk is full' } }))
        .status,
    ).toBe(503);
    freeDisk(shardDir);
    await expect(t.app.stop()).rejects.toThrow(/shard 0: no final snapshot, since its log failed/);
    errors.mockRestore();
    const again = await startTestApp({ dataDir: join(shardDir, '..') }, env);
    try {
      const listed = await again.req('GET', '/v1/memories');
      expect(listed.body.memories.map((m: { content: string }) => m.content)).toEqual([
        'written before the disk filled',
      ]);
    } finally {
      await again.app.stop();
    }
  });

  it('a restart that fails (here: a damaged snapshot) is tried again later, and readiness says why', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { t, shardDir } = await onFullDisk();
    try {
      writeFileSync(join(shardDir, 'snap-00000009.snap'), 'not a snapshot');
      expect(
        (
          await t.req('POST', '/v1/memories', {
            body: { content: 'written once the disk is full' },
          })
        ).status,
      ).toBe(503);
      freeDisk(shardDir);
      await until(
        async () =>
          /restart failed: .*snap-00000009\.snap/.test(
            (await t.req('GET', '/v1/health/ready')).body.reason ?? '',
          ),
        { what: 'the failed restart in readiness', deadlineMs: 20_000 },
      );
      expect(
        errors.mock.calls.some((c) =>
          /^shard 0: restart after the log failure failed: .*snap-00000009\.snap/.test(
            String(c[0]),
          ),
        ),
      ).toBe(true);
      rmSync(join(shardDir, 'snap-00000009.snap'));
      await until(async () => (await t.req('GET', '/v1/health/ready')).status === 200, {
        what: 'the second restart',
        deadlineMs: 20_000,
      });
      const listed = await t.req('GET', '/v1/memories');
      expect(listed.body.memories.map((m: { content: string }) => m.content)).toEqual([
        'written before the disk filled',
      ]);
    } finally {
      await t.app.stop();
      errors.mockRestore();
    }
  });
});
