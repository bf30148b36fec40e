/**
 * @module shard/persist/erase — erasure in place: each frame that holds forgotten content is
 * overwritten by a padding frame of the same length (frames.ts `paddingFrame`), in the snapshot or
 * log segment that holds it, so erasing costs the frames forgotten, not a rewrite of the store.
 * Offsets stay valid and recovery skips padding. Crash-safe through a journal: the frames to pad
 * are written durably to `erase.journal` first, and recovery pads them again (`redoErasure`)
 * before it reads anything, so a torn overwrite is never read as damage.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
  fsyncSync,
  write,
  fdatasync,
} from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fsyncDir, fsyncDirAsync, renameDurablyAsync } from '../../files/durable.ts';
import { FRAME_HEADER, FRAME_MAGIC, isPadding, paddingFrame, readFrame } from './frames.ts';
import type { FrameAt } from './content-index.ts';
import type { LogRecord } from '../store/records.ts';
import { nextTurn } from '../../threads/turn.ts';

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);

export const ERASE_JOURNAL = 'erase.journal';
/** Longest stretch of reading candidate frames before the shard's other work gets a turn. */
const SLICE_MS = 4;

interface Padding extends FrameAt {
  length: number;
}

/** What an erasure did: frames padded, and the candidates that hold no content any more. */
export interface Erased {
  padded: number;
  /** Padded now, found padded already, or in a file since deleted: the content index can drop them. */
  cleared: FrameAt[];
}

/**
 * Pads every frame of `candidates` whose record `erase` accepts (a candidate is a hash match:
 * each frame is read and decoded to check it). Resolves once the padding is durable.
 */
export async function eraseFrames(
  dir: string,
  candidates: readonly FrameAt[],
  erase: (r: LogRecord) => boolean,
): Promise<Erased> {
  const chosen: Padding[] = [];
  const cleared: FrameAt[] = [];
  let sliceEnd = performance.now() + SLICE_MS;
  for (const c of candidates) {
    const p = checked(dir, c, erase);
    if (p === 'cleared') cleared.push(c);
    else if (p) chosen.push(p);
    if (performance.now() < sliceEnd) continue;
    await nextTurn();
    sliceEnd = performance.now() + SLICE_MS;
  }
  if (chosen.length === 0) return { padded: 0, cleared };
  await writeJournal(dir, JSON.stringify(chosen));
  const fds = new Map<string, number>();
  try {
    for (const p of chosen) {
      let fd = fds.get(p.file);
      if (fd === undefined) fds.set(p.file, (fd = openSync(join(dir, p.file), 'r+')));
      const frame = paddingFrame(p.length);
      for (let off = 0; off < frame.length; )
        off += (await writeAsync(fd, frame, off, frame.length - off, p.offset + off)).bytesWritten;
    }
    for (const fd of fds.values()) await datasyncAsync(fd);
  } finally {
    for (const fd of fds.values()) closeSync(fd);
  }
  await unlink(join(dir, ERASE_JOURNAL));
  await fsyncDirAsync(dir);
  for (const p of chosen) cleared.push({ file: p.file, offset: p.offset });
  return { padded: chosen.length, cleared };
}

/** The journal, durably (temp file, sync, rename, the directory's sync), off the shard's thread. */
async function writeJournal(dir: string, text: string): Promise<void> {
  const tmp = join(dir, `${ERASE_JOURNAL}.tmp`);
  await writeFile(tmp, text);
  const fd = openSync(tmp, 'r+');
  try {
    await datasyncAsync(fd);
  } finally {
    closeSync(fd);
  }
  await renameDurablyAsync(tmp, join(dir, ERASE_JOURNAL));
}

/**
 * The frame at `at`, if it is whole, not yet padding, and holds what `erase` accepts; 'cleared'
 * when it holds nothing any more (padding already, or its file deleted); else null.
 */
function checked(
  dir: string,
  at: FrameAt,
  erase: (r: LogRecord) => boolean,
): Padding | 'cleared' | null {
  let fd: number;
  try {
    fd = openSync(join(dir, at.file), 'r');
  } catch {
    return 'cleared'; // deleted by a snapshot since it was indexed: nothing left to erase there
  }
  try {
    const head = Buffer.alloc(FRAME_HEADER);
    if (readSync(fd, head, 0, FRAME_HEADER, at.offset) < FRAME_HEADER || head[0] !== FRAME_MAGIC)
      return null;
    const length = FRAME_HEADER + head.readUInt32LE(1);
    if (at.offset + length > fstatSync(fd).size) return null;
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, at.offset);
    const f = readFrame(buf, 0);
    if (f.kind !== 'frame') return null;
    if (isPadding(f.value)) return 'cleared';
    if (!erase(f.value as LogRecord)) return null;
    return { file: at.file, offset: at.offset, length };
  } finally {
    closeSync(fd);
  }
}

/**
 * Finishes an erasure a crash interrupted: pads again every frame its journal lists (the same
 * bytes, so a frame already padded is unchanged), then removes the journal. Runs before recovery
 * reads the files.
 */
export function redoErasure(dir: string): number {
  const journal = join(dir, ERASE_JOURNAL);
  if (!existsSync(journal)) return 0;
  const list = JSON.parse(readFileSync(journal, 'utf8')) as Padding[];
  for (const p of list) {
    let fd: number;
    try {
      fd = openSync(join(dir, p.file), 'r+');
    } catch {
      continue;
    }
    try {
      writeSync(fd, paddingFrame(p.length), 0, p.length, p.offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  unlinkSync(journal);
  fsyncDir(dir);
  return list.length;
}
