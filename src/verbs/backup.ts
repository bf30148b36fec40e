/**
 * @module verbs/backup — an online backup of the whole data directory into a new directory on the
 * server's machine, while the server keeps serving: checks the caller and the target, then asks
 * the router for the copy (`ShardRouter.backup`; the files are data-dir.ts's). The result is a
 * data directory: `flashbulb serve --data-dir DIR` starts on it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { FlashbulbError, invalid } from '../errors/codes.ts';
import { requireAdmin, type Ctx } from './context.ts';

export interface BackupSummary {
  to: string;
  started_at: number;
  finished_at: number;
  shards: Array<{ shard: number; memories: number; bytes: number }>;
}

let running = false;

export async function backup(
  ctx: Pick<Ctx, 'svc' | 'principal'>,
  input: { to: string },
): Promise<BackupSummary> {
  requireAdmin(ctx);
  const to = input.to;
  if (!isAbsolute(to))
    throw invalid(`to must be an absolute path on the server's machine, got '${to}'`);
  if (existsSync(to) && readdirSync(to).length > 0)
    throw new FlashbulbError(
      'conflict',
      `${to} exists and is not empty; back up into a new directory`,
    );
  const router = ctx.svc.shards;
  if (router.backup === undefined) {
    throw invalid(
      'online backup copies a single-process data directory; in cluster mode each partition is snapshotted to JetStream (docs/operations/cluster.md)',
    );
  }
  if (running) throw new FlashbulbError('conflict', 'a backup is already running');
  running = true;
  try {
    const startedAt = Date.now() * 1000;
    const shards = await router.backup(to).catch((err: unknown) => {
      const code =
        err instanceof FlashbulbError && err.code !== 'internal_error' ? err.code : 'unavailable';
      throw new FlashbulbError(
        code,
        `backup to ${to} failed (${err instanceof Error ? err.message : String(err)}); the partial copy was removed`,
      );
    });
    return { to, started_at: startedAt, finished_at: Date.now() * 1000, shards };
  } finally {
    running = false;
  }
}
