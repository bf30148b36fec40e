/**
 * @module verbs/backup — an online backup of the whole data directory into a new directory on the
 * server's machine: the data directory's description and key file, then a consistent copy of
 * every shard (shard/shard.ts `backup`), all while the server keeps serving. The result is a data
 * directory: `flashbulb serve --data-dir DIR` starts on it.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { shardDir } from '../data-dir.ts';
import { FlashbulbError, invalid } from '../errors/codes.ts';
import { ShardPool } from '../router/shard-client.ts';
import { fsyncDir } from '../shard/persist/fsutil.ts';
import { requireAdmin, type Ctx } from './context.ts';

export interface BackupSummary {
  to: string;
  started_at: number;
  finished_at: number;
  shards: Array<{ shard: number; memories: number; bytes: number }>;
}

let running = false;
/** A shard's backup writes its whole state: far longer than any request may take. */
const SHARD_BACKUP_TIMEOUT_MS = 30 * 60_000;

export async function backup(ctx: Pick<Ctx, 'svc' | 'principal'>, input: { to: string }): Promise<BackupSummary> {
  requireAdmin(ctx);
  const to = input.to;
  if (!isAbsolute(to)) throw invalid(`to must be an absolute path on the server's machine, got '${to}'`);
  if (existsSync(to) && readdirSync(to).length > 0) throw new FlashbulbError('conflict', `${to} exists and is not empty; back up into a new directory`);
  const pool = ctx.svc.shards;
  if (!(pool instanceof ShardPool)) {
    throw invalid('online backup copies a single-process data directory; in cluster mode each partition is snapshotted to JetStream (README, Cluster mode)');
  }
  if (running) throw new FlashbulbError('conflict', 'a backup is already running');
  running = true;
  try {
    const startedAt = Date.now() * 1000;
    const from = ctx.svc.config.dataDir;
    mkdirSync(to, { recursive: true });
    for (const file of ['meta.json', 'auth.json']) if (existsSync(join(from, file))) copyFileSync(join(from, file), join(to, file));
    const shards = await Promise.all(
      Array.from({ length: pool.size }, async (_, shard) => ({ shard, ...(await pool.callShard(shard, '', 'backup', { dir: shardDir(to, shard) }, [], { timeoutMs: SHARD_BACKUP_TIMEOUT_MS })) })),
    );
    fsyncDir(to);
    return { to, started_at: startedAt, finished_at: Date.now() * 1000, shards };
  } finally {
    running = false;
  }
}
