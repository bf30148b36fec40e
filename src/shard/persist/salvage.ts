/**
 * @module shard/persist/salvage — `flashbulb repair`: gives a shard whose newest snapshot or log is
 * damaged in the middle (recovery refuses to start on it, naming the file and offset) back every
 * frame that is still whole. Each damaged file is rewritten with its whole frames only: a damaged
 * stretch is dropped up to the next offset where a complete, checksummed frame starts (the chance
 * that damage forms one by accident is one in 2^32), a snapshot gets a new footer counting what it
 * kept (and a new header when its own is lost; its walSeq is its name), and the original is kept
 * beside it as `<name>.damaged` (`.damaged-2`… after another repair) for inspection, with nothing else changed. Records in the dropped
 * bytes are lost; the rest of the shard is intact, and the report says what was dropped where.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from '../../files/durable.ts';
import type { SnapshotHeader } from '../store/records.ts';
import { encodeFrame, FRAME_MAGIC, readFrame } from './frames.ts';
import { seqName } from './fsutil.ts';
import { manifestName } from './graph-files.ts';
import { isHeader, listSeqs, tidyShardFiles } from './recovery.ts';

/** A stretch of a file that held no whole frame. */
export interface Dropped {
  offset: number;
  bytes: number;
  reason: string;
}

export interface SalvagedFile {
  file: string;
  /** Whole frames kept (a snapshot's header and footer not counted). */
  kept: number;
  dropped: Dropped[];
  /** Where the original now is. */
  original: string;
}

/** Repairs the shard in `dir` (no server may be running on it); returns each file it rewrote. */
export function salvageShard(dir: string, shard: number): SalvagedFile[] {
  tidyShardFiles(dir); // as recovery does first: an interrupted erasure finishes on the file as it was
  const out: SalvagedFile[] = [];
  const snaps = listSeqs(dir, 'snap', 'snap');
  const newest = snaps[snaps.length - 1];
  if (newest !== undefined) {
    const fixed = salvageSnapshot(dir, newest, shard);
    if (fixed) out.push(fixed);
  }
  const logs = listSeqs(dir, 'wal', 'log').filter((s) => s >= (newest ?? 0));
  logs.forEach((seq, i) => {
    // A torn tail of the last segment is an interrupted append: recovery truncates that itself.
    const fixed = salvageLog(join(dir, seqName('wal', seq, 'log')), i === logs.length - 1);
    if (fixed) out.push(fixed);
  });
  return out;
}

interface Scan {
  /** [start, end) of each whole frame, in order. */
  frames: Array<[number, number]>;
  values: unknown[];
  dropped: Dropped[];
  /** Where the last whole frame ends, when nothing whole follows it (a torn or damaged tail). */
  tail: Dropped | null;
}

function scan(buf: Buffer): Scan {
  const s: Scan = { frames: [], values: [], dropped: [], tail: null };
  for (let offset = 0; ; ) {
    const f = readFrame(buf, offset);
    if (f.kind === 'end') return s;
    if (f.kind === 'frame') {
      s.frames.push([offset, f.next]);
      s.values.push(f.value);
      offset = f.next;
      continue;
    }
    const next = nextWholeFrame(buf, offset + 1);
    if (next === null) {
      s.tail = { offset, bytes: buf.length - offset, reason: f.reason };
      return s;
    }
    s.dropped.push({ offset, bytes: next - offset, reason: f.reason });
    offset = next;
  }
}

function nextWholeFrame(buf: Buffer, from: number): number | null {
  for (let p = buf.indexOf(FRAME_MAGIC, from); p >= 0; p = buf.indexOf(FRAME_MAGIC, p + 1)) {
    if (readFrame(buf, p).kind === 'frame') return p;
  }
  return null;
}

function salvageLog(file: string, isLast: boolean): SalvagedFile | null {
  const buf = readWhole(file);
  const s = scan(buf);
  const dropped = isLast || s.tail === null ? s.dropped : [...s.dropped, s.tail];
  if (dropped.length === 0) return null;
  // The last segment's torn tail stays for recovery to truncate (and to report as such).
  const keep = s.frames.map(([a, b]) => buf.subarray(a, b));
  if (isLast && s.tail) keep.push(buf.subarray(s.tail.offset));
  return replace(file, keep, { kept: s.frames.length, dropped });
}

function salvageSnapshot(dir: string, seq: number, shard: number): SalvagedFile | null {
  const file = join(dir, seqName('snap', seq, 'snap'));
  const buf = readWhole(file);
  const s = scan(buf);
  const dropped = s.tail ? [...s.dropped, s.tail] : s.dropped;
  const isFooter = (v: unknown): boolean => (v as { t?: unknown } | null)?.t === 'end';
  const headed = s.frames[0]?.[0] === 0 && isHeader(s.values[0]);
  const footed = s.values.length > 0 && isFooter(s.values[s.values.length - 1]);
  const records = s.frames.length - (headed ? 1 : 0) - (footed ? 1 : 0);
  const counted = footed ? (s.values[s.values.length - 1] as { records: number }).records : -1;
  if (dropped.length === 0 && headed && footed && counted === records) return null;
  const header: SnapshotHeader = headed
    ? (s.values[0] as SnapshotHeader)
    : { t: 'snap', format: 1, shard, walSeq: seq, createdAt: Date.now() };
  const body = s.frames
    .slice(headed ? 1 : 0, footed ? -1 : undefined)
    .map(([a, b]) => buf.subarray(a, b));
  const reasons = [...dropped];
  if (dropped.length === 0 && !footed)
    reasons.push({ offset: buf.length, bytes: 0, reason: 'snapshot has no footer' });
  const fixed = replace(
    file,
    [encodeFrame(header), ...body, encodeFrame({ t: 'end', records: body.length })],
    { kept: body.length, dropped: reasons },
  );
  // HNSW graphs saved with this snapshot may name memories it no longer holds: rebuilt on start.
  // A graph kept from an earlier snapshot stays: a start reconciles it with the records kept
  // (persist/graph-files, by its fingerprints) and erases the dropped ones' vectors from it.
  const manifest = join(dir, manifestName(seq));
  if (existsSync(manifest)) unlinkSync(manifest);
  return fixed;
}

function readWhole(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read ${file} to repair it: ${(err as Error).message}`);
  }
}

/** Writes `parts` as `file`, keeping the original as `<file>.damaged`. */
function replace(
  file: string,
  parts: Buffer[],
  result: Omit<SalvagedFile, 'file' | 'original'>,
): SalvagedFile {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (const p of parts) writeSync(fd, p);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  let original = `${file}.damaged`;
  for (let n = 2; existsSync(original); n++) original = `${file}.damaged-${n}`; // an earlier repair's stays
  renameSync(file, original);
  renameSync(tmp, file);
  fsyncDir(join(file, '..'));
  return { file, original, ...result };
}
