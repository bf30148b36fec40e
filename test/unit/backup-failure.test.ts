/**
 * A backup that fails part-way (its target's disk fills) leaves nothing behind: a part-written
 * copy looks like a data directory a restore would start on. The caller hears why, as 503.
 * Found by backing up onto a 200 KB tmpfs: the answer was 500 "internal error" and the target
 * held meta.json, auth.json and one shard's snapshot, but nothing of the other shard.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backupDataDir } from '../../src/data-dir.ts';
import { backup } from '../../src/verbs/backup.ts';
import { FlashbulbError } from '../../src/errors/codes.ts';
import type { Ctx } from '../../src/verbs/context.ts';
import type { BackupResult } from '../../src/protocol/shard.ts';

let root: string;
let from: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'flashbulb-backup-failure-'));
  from = join(root, 'data');
  mkdirSync(from);
  writeFileSync(join(from, 'meta.json'), '{}');
  writeFileSync(join(from, 'auth.json'), '{}');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Shard 0 fails after writing part of its copy; shard 1 finishes later than that. */
function copyShard(shard: number, dir: string): Promise<BackupResult> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'snap-00000002.snap'), 'part');
  if (shard === 0) return Promise.reject(new Error('ENOSPC: no space left on device, write'));
  return new Promise((resolve) =>
    setTimeout(() => {
      writeFileSync(join(dir, 'wal-00000002.log'), '');
      resolve({ memories: 1, bytes: 4 } as BackupResult);
    }, 50),
  );
}

describe('a backup that fails part-way', () => {
  it('removes the directory it created, after every shard has finished', async () => {
    const to = join(root, 'new-target');
    await expect(backupDataDir(from, to, { shards: 2, copyShard })).rejects.toThrow('ENOSPC');
    expect(existsSync(to)).toBe(false);
  });

  it('empties a target that was there and empty, and keeps the directory', async () => {
    const to = join(root, 'empty-target');
    mkdirSync(to);
    await expect(backupDataDir(from, to, { shards: 2, copyShard })).rejects.toThrow('ENOSPC');
    expect(readdirSync(to)).toEqual([]);
  });

  it('answers 503 naming the target and why; a refusal with a code of its own keeps it', async () => {
    const ctx = (fail: Error): Pick<Ctx, 'svc' | 'principal'> => ({
      principal: { keyId: 'k', role: 'admin', workspace: 'default' },
      svc: { shards: { backup: () => Promise.reject(fail) } } as unknown as Ctx['svc'],
    });
    const to = join(root, 'target');
    await expect(
      backup(
        ctx(new FlashbulbError('unavailable', 'shard 0: ENOSPC: no space left on device, write')),
        { to },
      ),
    ).rejects.toMatchObject({
      code: 'unavailable',
      message: `backup to ${to} failed (shard 0: ENOSPC: no space left on device, write); the partial copy was removed`,
    });
    await expect(
      backup(ctx(new Error('ENOSPC: no space left on device, copyfile')), { to }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    await expect(
      backup(ctx(new FlashbulbError('invalid_input', 'no local log')), { to }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
