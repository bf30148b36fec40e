/**
 * @module shard/persist/graph-bytes — the bytes of a saved HNSW graph file (hnswlib's format).
 * Points are padded in place: their vector zeroed and their deleted mark set, so an erased vector
 * leaves the file while the graph stays whole (the points still link their neighbours; hnswlib
 * never returns a deleted point). A graph saved at shutdown has its deleted points (forgotten,
 * re-embedded or superseded memories, which hnswlib keeps for navigation) padded so; an erasure
 * pads the points of the vectors it erases. Each pass syncs the file and returns its length and
 * CRC-32, which the manifest records, so a torn or damaged file is never adopted.
 */
import { createReadStream } from 'node:fs';
import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

/** hnswlib's header: six size_t, an int, a uint32, three size_t, a double, a size_t. */
const HEADER_BYTES = 96;
/** hnswlib's mark of a deleted point, in the third byte of its level-0 link list header. */
const DELETE_MARK = 0x01;
/** Bytes read at a time. */
const CHUNK = 8 * 1024 * 1024;

/** What the manifest records of a graph file: its length and CRC-32. */
export interface GraphFileCheck {
  bytes: number;
  crc: number;
}

/** Which points to pad: by label, and whether hnswlib has marked the point deleted. */
export type PadPick = (label: number, deleted: boolean) => boolean;

/** Where a graph file's points lie: `count` elements of `per` bytes after the header. */
interface Layout {
  count: number;
  per: number;
  level0: number;
  label: number;
  data: number;
  dataBytes: number;
}

function layoutOf(head: Buffer, got: number, dim: number): Layout {
  if (got < HEADER_BYTES) throw new Error('graph file too short');
  const word = (at: number): number => Number(head.readBigUInt64LE(at));
  const l = {
    level0: word(0),
    count: word(16),
    per: word(24),
    label: word(32),
    data: word(40),
    dataBytes: dim * 4,
  };
  if (l.per <= 0 || l.data + l.dataBytes > l.per || l.label + 8 > l.per || l.level0 + 3 > l.per)
    throw new Error('graph file header does not describe its points');
  return l;
}

/** Pads the picked points among `n` whole elements in `buf`; true when any byte changed. */
function padElements(buf: Buffer, n: number, l: Layout, pick: PadPick): boolean {
  let dirty = false;
  for (let i = 0; i < n; i++) {
    const el = i * l.per;
    const mark = el + l.level0 + 2;
    const deleted = ((buf[mark] as number) & DELETE_MARK) !== 0;
    if (!pick(Number(buf.readBigUInt64LE(el + l.label)), deleted)) continue;
    buf.fill(0, el + l.data, el + l.data + l.dataBytes);
    buf[mark] = (buf[mark] as number) | DELETE_MARK;
    dirty = true;
  }
  return dirty;
}

/** Elements per chunk, and the chunk's buffer. */
function chunking(l: Layout): { perChunk: number; buf: Buffer } {
  const perChunk = Math.max(1, Math.floor(CHUNK / l.per));
  return { perChunk, buf: Buffer.alloc(Math.max(perChunk * l.per, CHUNK)) };
}

/** Pads the picked points of a graph file in place, syncs it; returns its length and CRC-32. */
export function padGraphFileSync(file: string, dim: number, pick: PadPick): GraphFileCheck {
  const fd = openSync(file, 'r+');
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const l = layoutOf(head, readSync(fd, head, 0, HEADER_BYTES, 0), dim);
    const { perChunk, buf } = chunking(l);
    let crc = crc32(head);
    let pos = HEADER_BYTES;
    for (let first = 0; first < l.count; first += perChunk) {
      const len = Math.min(perChunk, l.count - first) * l.per;
      if (readSync(fd, buf, 0, len, pos) < len)
        throw new Error('graph file ends inside its points');
      if (padElements(buf, len / l.per, l, pick))
        for (let off = 0; off < len; ) off += writeSync(fd, buf, off, len - off, pos + off);
      crc = crc32(buf.subarray(0, len), crc);
      pos += len;
    }
    for (
      let n = readSync(fd, buf, 0, buf.length, pos);
      n > 0;
      n = readSync(fd, buf, 0, buf.length, pos)
    ) {
      crc = crc32(buf.subarray(0, n), crc);
      pos += n;
    }
    fsyncSync(fd);
    return { bytes: fstatSync(fd).size, crc };
  } finally {
    closeSync(fd);
  }
}

/** {@link padGraphFileSync} with the file read and written on libuv's thread pool (an erasure while serving). */
export async function padGraphFile(
  file: string,
  dim: number,
  pick: PadPick,
): Promise<GraphFileCheck> {
  const fh = await open(file, 'r+');
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const l = layoutOf(head, (await fh.read(head, 0, HEADER_BYTES, 0)).bytesRead, dim);
    const { perChunk, buf } = chunking(l);
    let crc = crc32(head);
    let pos = HEADER_BYTES;
    for (let first = 0; first < l.count; first += perChunk) {
      const len = Math.min(perChunk, l.count - first) * l.per;
      if ((await fh.read(buf, 0, len, pos)).bytesRead < len)
        throw new Error('graph file ends inside its points');
      if (padElements(buf, len / l.per, l, pick)) await fh.write(buf, 0, len, pos);
      crc = crc32(buf.subarray(0, len), crc);
      pos += len;
    }
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      crc = crc32(buf.subarray(0, bytesRead), crc);
      pos += bytesRead;
    }
    await fh.sync();
    return { bytes: (await fh.stat()).size, crc };
  } finally {
    await fh.close();
  }
}

/** Whether `file` has the length and CRC-32 its manifest recorded (read a chunk at a time). */
export function checkGraphFileSync(file: string, check: GraphFileCheck): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    if (fstatSync(fd).size !== check.bytes) return false;
    const buf = Buffer.allocUnsafe(CHUNK);
    let crc = 0;
    for (
      let pos = 0, n = readSync(fd, buf, 0, CHUNK, 0);
      n > 0;
      n = readSync(fd, buf, 0, CHUNK, pos)
    ) {
      crc = crc32(buf.subarray(0, n), crc);
      pos += n;
    }
    return crc === check.crc;
  } finally {
    closeSync(fd);
  }
}

/** {@link checkGraphFileSync} with the file read on libuv's thread pool. */
export async function checkGraphFile(file: string, check: GraphFileCheck): Promise<boolean> {
  let crc = 0;
  let bytes = 0;
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: CHUNK })) {
      crc = crc32(chunk as Buffer, crc);
      bytes += (chunk as Buffer).length;
    }
  } catch {
    return false;
  }
  return bytes === check.bytes && crc === check.crc;
}
