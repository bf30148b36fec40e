/**
 * @module shard/persist/backup — an online copy of one shard: rotate the log (every acknowledged
 * write is now in the state), write a snapshot of the state into the copy (sliced and fuzzy, like
 * every snapshot), drain and rotate the log again, and copy the segment between the two rotations
 * beside the snapshot. Recovery on the copy replays that segment on the snapshot, which gives the
 * state at the second rotation. The caller runs it in turn with snapshots (they delete segments).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { copyDurably, fsyncDir } from '../../files/durable.ts';
import type { BackupResult } from '../../protocol/shard.ts';
import type { ShardState } from '../store/apply.ts';
import { seqName } from './fsutil.ts';
import { writeSnapshot } from './snapshot.ts';
import type { Wal } from './wal.ts';

export async function writeBackup(
  dir: string,
  opts: { from: string; shard: number; wal: Wal; state: ShardState },
): Promise<BackupResult> {
  mkdirSync(dir, { recursive: true });
  const walSeq = await opts.wal.rotate();
  const memories = opts.state.memoryCount();
  await writeSnapshot(dir, { shard: opts.shard, walSeq, state: opts.state });
  // Records applied while the snapshot was written must reach the copied segment.
  await opts.wal.drain();
  await opts.wal.rotate();
  const segment = seqName('wal', walSeq, 'log');
  copyDurably(join(opts.from, segment), join(dir, segment));
  fsyncDir(dir);
  const bytes =
    statSync(join(dir, segment)).size + statSync(join(dir, seqName('snap', walSeq, 'snap'))).size;
  return { memories, bytes };
}
