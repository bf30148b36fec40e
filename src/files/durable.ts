/**
 * @module files/durable — the one way a file is made durable: content fsynced before it is
 * renamed into place (so a crash leaves the old file or the new one, never a torn one), and the
 * directory fsynced after (so the rename itself survives). The auth file, the data directory's
 * description, snapshots, saved graph manifests and backup copies all go through here.
 */
import {
  closeSync,
  copyFileSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Makes a directory entry change (create, rename, unlink) durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Moves a finished, already-synced temporary file into place and makes the move durable. */
export function renameDurably(tmp: string, path: string): void {
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}

/**
 * {@link fsyncDir} on libuv's pool: a shard's periodic work (snapshots, erasures, the log's
 * rotation) awaits it instead of holding its thread (a directory's sync took 2-40 ms on the
 * project's machine under load, every request to the shard waiting behind it).
 */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** {@link renameDurably} with the rename and the directory's sync off the calling thread. */
export async function renameDurablyAsync(tmp: string, path: string): Promise<void> {
  await rename(tmp, path);
  await fsyncDirAsync(dirname(path));
}

/** Replaces `path` with `data` atomically and durably: temp file → fsync → rename → fsync dir. */
export function writeFileDurably(
  path: string,
  data: string | Uint8Array,
  opts: { mode?: number } = {},
): void {
  const tmp = `${path}.tmp`;
  try {
    const fd = openSync(tmp, 'w', opts.mode ?? 0o666);
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameDurably(tmp, path);
  } catch (err) {
    // `path` is as it was; the temporary file would only hold disk space (a full disk, often).
    rmSync(tmp, { force: true });
    const e = err as NodeJS.ErrnoException;
    throw Object.assign(new Error(`cannot write ${path}: ${e.message}`, { cause: err }), {
      code: e.code,
    });
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
