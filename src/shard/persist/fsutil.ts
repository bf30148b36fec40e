/** @module shard/persist/fsutil — small durable-file helpers (fsync of files and directories). */
import { closeSync, copyFileSync, fsyncSync, openSync } from 'node:fs';

/** Makes a directory entry change (create, rename, unlink) durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Copies a file and makes its content durable (the caller syncs the directory once for all). */
export function copyDurably(from: string, to: string): void {
  copyFileSync(from, to);
  const fd = openSync(to, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function seqName(prefix: string, seq: number, ext: string): string {
  return `${prefix}-${String(seq).padStart(8, '0')}.${ext}`;
}

export function parseSeq(name: string, prefix: string, ext: string): number | null {
  const m = new RegExp(`^${prefix}-(\\d{8})\\.${ext}$`).exec(name);
  return m?.[1] ? Number(m[1]) : null;
}
