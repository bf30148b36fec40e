/**
 * @module shard/persist/recovery — rebuilds a shard from its newest snapshot plus log replay.
 * A torn frame at the very end of the last segment is truncated away; damage anywhere else stops
 * start-up with an error naming the file and offset, and `flashbulb repair` (persist/salvage).
 */
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { applyRecord, pruneDanglingEdges, ShardState } from '../store/apply.ts';
import { FRAME_HEADER, FRAME_MAGIC, isPadding, readFrame, type FrameRead } from './frames.ts';
import { redoErasure } from './erase.ts';
import { parseSeq } from './fsutil.ts';
import type { LogRecord, SnapshotHeader } from '../store/records.ts';

export class CorruptionError extends Error {
  override name = 'CorruptionError';
}

export interface Recovered {
  state: ShardState;
  /** Number for the next log segment. */
  nextWalSeq: number;
  walSegments: number[];
  snapshots: number[];
  replayedRecords: number;
  truncatedTail: { file: string; offset: number; reason: string } | null;
  /** Files a finished snapshot should have deleted (a crash came in between). */
  staleFiles: boolean;
  /** Milliseconds of each step: the snapshot read and applied, afterSnapshot (its graphs), the log, the edge check. */
  phasesMs: { snapshot: number; graphs: number; log: number; edges: number };
}

export function listSeqs(dir: string, prefix: string, ext: string): number[] {
  const seqs: number[] = [];
  for (const name of readdirSync(dir)) {
    const seq = parseSeq(name, prefix, ext);
    if (seq !== null) seqs.push(seq);
  }
  return seqs.sort((a, b) => a - b);
}

export interface RecoverOptions {
  /**
   * Runs before any frame is read, once the files are tidied, with the newest snapshot's log
   * sequence (null when there is none): the shard starts reading that snapshot's graphs here, on
   * another thread, while this one decodes the snapshot.
   */
  beforeSnapshot?: (walSeq: number | null) => void;
  /** Runs after the snapshot is loaded and before the log is replayed on top of it. */
  afterSnapshot?: (state: ShardState, walSeq: number) => void;
  /** Called for every record read, with its file's name and offset (the shard indexes where content lies). */
  onFrame?: (file: string, offset: number, record: LogRecord) => void;
}

/**
 * What comes before any frame of a shard's files is read (by recovery, or by repair): temporary
 * files of an interrupted snapshot are removed, and an erasure in place that a crash interrupted
 * is finished.
 */
export function tidyShardFiles(dir: string): void {
  for (const name of readdirSync(dir)) if (name.endsWith('.tmp')) unlinkSync(join(dir, name));
  redoErasure(dir);
}

export function recoverShard(dir: string, opts: RecoverOptions = {}): Recovered {
  const steps = recoverySteps(dir, opts);
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    opts.afterSnapshot?.(step.value.state, step.value.walSeq);
  }
}

/**
 * {@link recoverShard} with an `afterSnapshot` that may wait (for graphs read on another thread);
 * nothing else runs on this thread's loop meanwhile but what that wait itself needs.
 */
export async function recoverShardAsync(
  dir: string,
  opts: Omit<RecoverOptions, 'afterSnapshot'> & {
    afterSnapshot?: (state: ShardState, walSeq: number) => void | Promise<void>;
  },
): Promise<Recovered> {
  const steps = recoverySteps(dir, opts);
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    await opts.afterSnapshot?.(step.value.state, step.value.walSeq);
  }
}

/** Recovery's steps: yields once, when the snapshot is applied (afterSnapshot runs then). */
function* recoverySteps(
  dir: string,
  opts: Omit<RecoverOptions, 'afterSnapshot'>,
): Generator<{ state: ShardState; walSeq: number }, Recovered, void> {
  tidyShardFiles(dir);
  const state = new ShardState();
  // The lexical index is built after start-up, by the shard's background indexer (or on first use).
  beginRecovery(state);
  const snapshots = listSeqs(dir, 'snap', 'snap');
  const walSegments = listSeqs(dir, 'wal', 'log');
  const newest = snapshots[snapshots.length - 1];
  opts.beforeSnapshot?.(newest ?? null);
  let fromSeq = 0;
  let replayed = 0;
  let truncatedTail: Recovered['truncatedTail'] = null;
  const phasesMs = { snapshot: 0, graphs: 0, log: 0, edges: 0 };
  let t = performance.now();
  const lap = (phase: keyof typeof phasesMs): void => {
    const now = performance.now();
    phasesMs[phase] = now - t;
    t = now;
  };
  try {
    if (newest !== undefined)
      fromSeq = loadSnapshot(dir, snapName(newest), state, opts.onFrame).walSeq;
    lap('snapshot');
    yield { state, walSeq: fromSeq };
    lap('graphs');
    const toReplay = walSegments.filter((s) => s >= fromSeq);
    toReplay.forEach((seq, i) => {
      const file = join(dir, walName(seq));
      const onFrame = opts.onFrame;
      const result = replaySegment(
        file,
        state,
        i === toReplay.length - 1,
        onFrame && ((offset, r) => onFrame(walName(seq), offset, r)),
      );
      replayed += result.records;
      if (result.torn) truncatedTail = result.torn;
    });
    lap('log');
  } catch (err) {
    if (!(err instanceof CorruptionError)) throw err;
    throw new CorruptionError(
      `${err.message}; refusing to start. With the server stopped, run \`flashbulb repair --data-dir ${join(dir, '..')}\`: it keeps every whole ` +
        'record, drops the damaged bytes (saving the original beside it as <file>.damaged) and says what was lost; or restore a backup',
    );
  }
  endRecovery(state);
  lap('edges');
  const lastSeq = Math.max(fromSeq, ...walSegments, 0);
  const staleFiles = walSegments.some((s) => s < fromSeq) || snapshots.length > 1;
  return {
    state,
    nextWalSeq: lastSeq + 1,
    walSegments,
    snapshots,
    replayedRecords: replayed,
    truncatedTail,
    staleFiles,
    phasesMs,
  };
}

function snapName(seq: number): string {
  return `snap-${String(seq).padStart(8, '0')}.snap`;
}

function walName(seq: number): string {
  return `wal-${String(seq).padStart(8, '0')}.log`;
}

function loadSnapshot(
  dir: string,
  name: string,
  state: ShardState,
  onFrame: RecoverOptions['onFrame'],
): SnapshotHeader {
  const file = join(dir, name);
  return applySnapshot(
    fileFrames(file),
    state,
    file,
    onFrame && ((offset, r) => onFrame(name, offset, r)),
  ).header;
}

/**
 * Applies a snapshot's frames to `state`: a header, the records, a footer that counts them. The
 * one snapshot decoder, for a local restart (frames from a file) and a cluster takeover (frames
 * from an object read over NATS, `bufferFrames`). `where` names the snapshot in errors.
 */
export function applySnapshot(
  frames: Iterable<{ f: FrameRead; offset: number }>,
  state: ShardState,
  where: string,
  onFrame?: (offset: number, record: LogRecord) => void,
): { header: SnapshotHeader; records: number } {
  const it = frames[Symbol.iterator]();
  const first = it.next().value;
  if (first?.f.kind !== 'frame' || !isHeader(first.f.value))
    throw new CorruptionError(`${where} at offset 0: not a snapshot header`);
  let records = 0;
  for (let next = it.next(); !next.done; next = it.next()) {
    const { f, offset } = next.value;
    if (f.kind !== 'frame') {
      throw new CorruptionError(
        `${where} at offset ${offset}: ${f.kind === 'end' ? 'snapshot has no footer' : f.reason}`,
      );
    }
    const value = f.value as LogRecord | { t: 'end'; records: number };
    if (value.t === 'end') {
      if (value.records !== records)
        throw new CorruptionError(
          `${where}: footer counts ${value.records} records, found ${records}`,
        );
      return { header: first.f.value, records };
    }
    // Erased in place (shard/persist/erase): still counted by the footer, holds nothing.
    if (!isPadding(value)) {
      onFrame?.(offset, value);
      applyRecord(state, value);
    }
    records += 1;
  }
  throw new CorruptionError(`${where}: snapshot has no footer`);
}

/** The frames of a snapshot held in memory, until the first that is not a frame. */
export function* bufferFrames(buf: Buffer): Generator<{ f: FrameRead; offset: number }> {
  for (let offset = 0; ; ) {
    const f = readFrame(buf, offset);
    yield { f, offset };
    if (f.kind !== 'frame') return;
    offset = f.next;
  }
}

/**
 * Recovery mode, for a local restart and a cluster takeover alike: while a snapshot and the log
 * after it are applied, vectors are packed into shared slabs and lexical indexing is deferred to
 * the shard's background indexer; at the end, edges whose ends are gone are dropped.
 */
export function beginRecovery(state: ShardState): void {
  state.recovering(true);
}

export function endRecovery(state: ShardState): void {
  pruneDanglingEdges(state);
  state.recovering(false);
}

/** Bytes read from a snapshot at a time. */
const READ_CHUNK = 16 * 1024 * 1024;
/** Frames longer than this are not read ahead for (readFrame reports them as implausible). */
const MAX_READ_AHEAD = 256 * 1024 * 1024;

/**
 * The frames of a file, read a chunk at a time: a large shard's snapshot passes the 2 GiB that one
 * readFileSync can return, and holding the whole file would double recovery's peak memory. Each
 * frame is read from a window that holds all of it, or everything up to the end of the file, so
 * readFrame's verdicts are those it gives on the whole file; offsets are file offsets. Stops after
 * the first result that is not a frame.
 *
 * One buffer is reused for the whole file (the unread rest moves to its front before each read):
 * a fresh 16 MiB buffer per chunk left freed chunks in the allocator's heap, part of recovery's RSS
 * afterwards. So a decoded frame's binary fields (views into that buffer) are only valid until the
 * next frame is asked for: the caller applies each frame, which copies its vector, before that.
 */
function* fileFrames(file: string): Generator<{ f: FrameRead; offset: number }> {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    let store = Buffer.allocUnsafe(Math.min(size, READ_CHUNK));
    let buf = store.subarray(0, 0); // the bytes read so far that are still held, at the start of store
    let base = 0; // file offset of buf[0]
    let pos = 0; // read position in buf
    let filePos = 0; // bytes of the file read so far
    const want = (n: number): void => {
      if (buf.length - pos >= n || filePos >= size) return;
      const keep = buf.length - pos;
      const more = Math.min(size - filePos, Math.max(READ_CHUNK, n - keep));
      if (keep + more > store.length) {
        const bigger = Buffer.allocUnsafe(keep + more);
        buf.copy(bigger, 0, pos);
        store = bigger;
      } else store.copyWithin(0, pos, buf.length); // buf is store's first bytes; copyWithin allows the overlap
      let got = 0;
      while (got < more) {
        const r = readSync(fd, store, keep + got, more - got, filePos);
        if (r === 0) break;
        got += r;
        filePos += r;
      }
      base += pos;
      buf = store.subarray(0, keep + got);
      pos = 0;
    };
    for (;;) {
      want(FRAME_HEADER);
      if (buf.length - pos >= FRAME_HEADER && buf[pos] === FRAME_MAGIC) {
        const len = buf.readUInt32LE(pos + 1);
        if (len <= MAX_READ_AHEAD) want(FRAME_HEADER + len);
      }
      const f = readFrame(buf, pos);
      yield { f, offset: base + pos };
      if (f.kind !== 'frame') return;
      pos = f.next;
    }
  } finally {
    closeSync(fd);
  }
}

export function isHeader(v: unknown): v is SnapshotHeader {
  return typeof v === 'object' && v !== null && (v as { t?: unknown }).t === 'snap';
}

function replaySegment(
  file: string,
  state: ShardState,
  isLast: boolean,
  onFrame?: (offset: number, record: LogRecord) => void,
): { records: number; torn: Recovered['truncatedTail'] } {
  const buf = readFileSync(file);
  let offset = 0;
  let records = 0;
  for (;;) {
    const f = readFrame(buf, offset);
    if (f.kind === 'end') return { records, torn: null };
    if (f.kind === 'frame') {
      if (!isPadding(f.value)) {
        onFrame?.(offset, f.value as LogRecord);
        applyRecord(state, f.value as LogRecord);
        records += 1;
      }
      offset = f.next;
      continue;
    }
    if (f.kind === 'torn' && isLast) {
      truncate(file, offset);
      return { records, torn: { file, offset, reason: f.reason } };
    }
    throw new CorruptionError(`${file} at offset ${offset}: ${f.reason}`);
  }
}

function truncate(file: string, length: number): void {
  const fd = openSync(file, 'r+');
  try {
    ftruncateSync(fd, length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
