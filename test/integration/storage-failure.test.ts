/**
 * The disk under a running server fills (/dev/full stands in for it: the shard's next log segment
 * points there, and the first snapshot moves the log onto it). What a client and an operator see:
 * the write is refused as 503 `unavailable` naming the storage failure, readiness names the shard,
 * a gauge says it, stopping reports the missing final snapshot, and a restart has exactly the
 * acknowledged writes. test/unit/shard-storage-failure.test.ts covers the shard itself.
 */
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-full-disk-'));
const shardDir = join(dataDir, 'shard-000');
const env = { FLASHBULB_SHARDS: '1', FLASHBULB_SNAPSHOT_INTERVAL_S: '1', FLASHBULB_AUTH_ENABLED: 'false' };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('a full disk under a running server', () => {
  it('refuses writes as a storage failure, readiness and metrics say so, a restart has every acknowledged write', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    let t: TestApp | null = await startTestApp({ dataDir }, env);
    symlinkSync('/dev/full', join(shardDir, 'wal-00000002.log'));
    const acked = await t.req('POST', '/v1/memories', { body: { content: 'written before the disk filled' } });
    expect(acked.status).toBe(201);
    await until(() => existsSync(join(shardDir, 'snap-00000002.snap')), { what: 'the snapshot that moves the log to the full disk' });

    const refused = await t.req('POST', '/v1/memories', { body: { content: 'written once the disk is full' } });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error_code: 'unavailable', message: expect.stringMatching(/^storage failure: log write failed: ENOSPC/) });
    const read = await t.req('GET', '/v1/memories');
    expect(read.status).toBe(503);
    const ready = await t.req('GET', '/v1/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.reason).toMatch(/^shard 0 cannot write its log \(log write failed: ENOSPC.*\) and refuses every request until the server restarts$/);
    const metrics = await t.req('GET', '/v1/metrics');
    expect(metrics.text).toContain('flashbulb_shard_storage_failed{shard="0"} 1');
    await expect(t.app.stop()).rejects.toThrow(/shard 0: no final snapshot, since its log failed/);
    t = null;
    errors.mockRestore();

    // The operator frees the disk (what the failed write left: nothing) and restarts.
    rmSync(join(shardDir, 'wal-00000002.log'));
    writeFileSync(join(shardDir, 'wal-00000002.log'), '');
    const again = await startTestApp({ dataDir }, env);
    try {
      expect((await again.req('GET', '/v1/health/ready')).status).toBe(200);
      const listed = await again.req('GET', '/v1/memories');
      expect(listed.body.memories.map((m: { content: string }) => m.content)).toEqual(['written before the disk filled']);
      expect((await again.req('POST', '/v1/memories', { body: { content: 'written after the restart' } })).status).toBe(201);
      expect((await again.req('GET', '/v1/metrics')).text).toContain('flashbulb_shard_storage_failed{shard="0"} 0');
    } finally {
      await again.app.stop();
    }
  });
});
