/**
 * @module data-dir — the data directory's layout: meta.json (format and shard count, fixed at
 * creation), auth.json, and one folder per shard; its lock, and its online copy (backup).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config/index.ts';
import { fsyncDir, writeFileDurably } from './files/durable.ts';
import type { BackupResult, ShardWorkerData } from './protocol/shard.ts';

export interface DataDirMeta {
  format: 1;
  shards: number;
  created_at: number;
}

/** Opens (or creates) a data directory; the shard count of an existing one wins over `shards`. */
export function openDataDir(dir: string, shards: number): DataDirMeta {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'meta.json');
  if (existsSync(path)) {
    const meta = JSON.parse(readFileSync(path, 'utf8')) as DataDirMeta;
    if (meta.format !== 1 || !Number.isInteger(meta.shards) || meta.shards < 1) {
      throw new Error(`${path} is not a Flashbulb data directory description`);
    }
    return meta;
  }
  const meta: DataDirMeta = { format: 1, shards, created_at: Date.now() * 1000 };
  writeFileDurably(path, JSON.stringify(meta, null, 2));
  return meta;
}

export function shardDir(dir: string, shard: number): string {
  return join(dir, `shard-${String(shard).padStart(3, '0')}`);
}

/** Takes the data directory's lock (one server per directory); throws if a live process holds it. */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, 'LOCK');
  const holder = lockHolder(dir);
  if (holder !== null && holder !== process.pid) {
    throw new Error(`data directory ${dir} is in use by process ${holder} (remove ${path} if that process is gone)`);
  }
  writeFileSync(path, String(process.pid));
  return () => {
    if (lockHolder(dir) === process.pid) rmSync(path, { force: true });
  };
}

/** The pid of the live process holding the lock, or null. */
export function lockHolder(dir: string): number | null {
  const path = join(dir, 'LOCK');
  if (!existsSync(path)) return null;
  const pid = Number(readFileSync(path, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

/** What each shard worker is started with. */
export function shardOptions(config: Config, shards: number): ShardWorkerData[] {
  return Array.from({ length: shards }, (_, i) => ({
    shard: i,
    dir: shardDir(config.dataDir, i),
    durability: config.durability,
    snapshotIntervalS: config.snapshotIntervalS,
    snapshotWalBytes: config.snapshotWalBytes,
    eraseWithinS: config.eraseWithinS,
    contradictions: config.contradictionsEnabled,
  }));
}

/** What one shard's backup wrote. */
export type ShardBackup = { shard: number } & BackupResult;

/**
 * Copies the data directory `from` into `to` (new or empty) while its server keeps serving: the
 * description and key file, then every shard through `copyShard` (a consistent copy the shard
 * writes itself, shard/shard.ts `backup`), then makes the new directory's entries durable.
 */
export async function backupDataDir(
  from: string,
  to: string,
  opts: { shards: number; copyShard: (shard: number, dir: string) => Promise<BackupResult> },
): Promise<ShardBackup[]> {
  mkdirSync(to, { recursive: true });
  for (const file of ['meta.json', 'auth.json']) if (existsSync(join(from, file))) copyFileSync(join(from, file), join(to, file));
  const shards = await Promise.all(
    Array.from({ length: opts.shards }, async (_, shard) => ({ shard, ...(await opts.copyShard(shard, shardDir(to, shard))) })),
  );
  fsyncDir(to);
  return shards;
}
