/** @module shard/persist/fsutil — the names of the log's and snapshots' numbered files, and their removal. */
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';

export function seqName(prefix: string, seq: number, ext: string): string {
  return `${prefix}-${String(seq).padStart(8, '0')}.${ext}`;
}

export function parseSeq(name: string, prefix: string, ext: string): number | null {
  const m = new RegExp(`^${prefix}-(\\d{8})\\.${ext}$`).exec(name);
  return m?.[1] ? Number(m[1]) : null;
}

/**
 * Deletes files of `dir`, one after another, on libuv's thread pool: unlinking a file of tens of
 * MB (a snapshot, a log segment) takes ~6 ms on ext4, which on the shard's thread held every
 * request behind it.
 */
export async function removeFiles(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) await unlink(join(dir, name));
}
