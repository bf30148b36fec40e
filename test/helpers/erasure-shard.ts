/**
 * One shard on a temporary data directory for the erasure tests (test/unit/shard-erasure*.test.ts,
 * shard-erase-in-place.test.ts): open it with a short erasure window, find which of its files still
 * hold a text; every shard and directory is closed and removed after
 * each test.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { Shard } from '../../src/shard/shard.ts';

/** Registers the clean-up and returns the helpers (`shards`: those open, for a test that shuts one down itself); `eraseWithinS` is the shards' erasure window. */
export function erasureShards(
  prefix: string,
  eraseWithinS: number,
): { tempDir: () => string; open: (dir: string) => Shard; shards: Shard[] } {
  const dirs: string[] = [];
  const shards: Shard[] = [];
  afterEach(async () => {
    for (const s of shards.splice(0)) await s.shutdown();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    shards,
    tempDir: () => {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    open: (dir) => {
      const shard = new Shard({
        shard: 0,
        dir,
        durability: 'fsync',
        snapshotIntervalS: 3600,
        snapshotWalBytes: 1 << 30,
        eraseWithinS,
      });
      shards.push(shard);
      return shard;
    },
  };
}

/** The files of `dir` whose bytes contain `text` (a file removed meanwhile counts as not holding it). */
export function filesHolding(dir: string, text: string): string[] {
  const needle = Buffer.from(text);
  return readdirSync(dir).filter((f) => {
    try {
      return readFileSync(join(dir, f)).includes(needle);
    } catch {
      return false;
    }
  });
}
