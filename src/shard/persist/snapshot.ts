/**
 * @module shard/persist/snapshot — writes a shard snapshot as a compacted log: a header frame,
 * one frame per memory, edge and tombstone, and a footer. The snapshot is fuzzy (state may change
 * while it is written, in slices so the shard keeps serving); it is correct because the log
 * segment started just before it is replayed on top, and every record is idempotent.
 */
import { closeSync, fdatasync, openSync, write } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ShardState } from '../store/apply.ts';
import { encodeFrame, encodeFrameInto } from './frames.ts';
import { renameDurablyAsync } from '../../files/durable.ts';
import { seqName } from './fsutil.ts';
import { givesWay, nextTurn } from '../../threads/turn.ts';
import {
  toStored,
  type LogRecord,
  type SnapshotFooter,
  type SnapshotHeader,
} from '../store/records.ts';

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);

/** Work done between yields to the shard's event loop, at most. */
const SLICE_MS = 4;
/** Records encoded between two looks for a request waiting on the shard (a look costs ~35 ns). */
const LOOK_EVERY = 4;
/** The chunk frames are encoded into; written out and synced when full. */
const CHUNK_BYTES = 4 * 1024 * 1024;

export async function writeSnapshot(
  dir: string,
  opts: {
    shard: number;
    walSeq: number;
    state: ShardState;
    onFrame?: (offset: number, record: LogRecord) => void;
    /** True when a request is waiting on the shard: the slice then ends at once. */
    requestWaiting?: () => boolean;
  },
): Promise<{ path: string; name: string; records: number; bytes: number }> {
  const name = seqName('snap', opts.walSeq, 'snap');
  const tmp = join(dir, `${name}.tmp`);
  const fd = openSync(tmp, 'w');
  const out = new SnapshotOut(fd, opts.requestWaiting ?? (() => false));
  try {
    const header: SnapshotHeader = {
      t: 'snap',
      format: 1,
      shard: opts.shard,
      walSeq: opts.walSeq,
      createdAt: Date.now(),
    };
    out.tryPush(header) ?? (await out.pushAfterFlush(header));
    let records = 0;
    for (const record of snapshotRecords(opts.state)) {
      const offset = out.tryPush(record) ?? (await out.pushAfterFlush(record));
      opts.onFrame?.(offset, record);
      records += 1;
      if (out.sliceDone(records)) await out.yield();
    }
    const footer: SnapshotFooter = { t: 'end', records };
    out.tryPush(footer) ?? (await out.pushAfterFlush(footer));
    await out.flush();
    await datasyncAsync(fd);
    closeSync(fd);
    await renameDurablyAsync(tmp, join(dir, name));
    return { path: join(dir, name), name, records, bytes: out.bytes };
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
    // A part-written snapshot would hold its disk space until the next start (a full disk, then
    // the log's failure, follows from a few of them).
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** The records that rebuild `state` (also what cluster snapshots hold). */
export function* snapshotRecords(state: ShardState): Generator<LogRecord> {
  for (const [ws, w] of state.workspaces) {
    for (const m of w.memories.values()) {
      const s = toStored(m);
      const density = w.densities.known(m.id);
      if (typeof density === 'number') s.density = density;
      yield { t: 'put', ws, m: s };
    }
  }
  for (const [ws, w] of state.workspaces) {
    for (const e of w.graph.all()) yield { t: 'edge', ws, e };
    for (const tomb of w.tombstones.values()) yield { t: 'tomb', ws, tomb };
    for (const p of w.pending.values()) yield { t: 'pending', ws, p };
  }
}

/**
 * The file being written: frames are encoded straight into one chunk buffer, written out (and
 * synced) when it is full, so a snapshot allocates no buffer per frame; at 15k memories the
 * per-frame buffers and their concatenation were ~57 MB of garbage per snapshot.
 */
class SnapshotOut {
  readonly #fd: number;
  readonly #requestWaiting: () => boolean;
  readonly #chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  #used = 0;
  #sliceStart = performance.now();
  /** Bytes written to the file. */
  bytes = 0;

  constructor(fd: number, requestWaiting: () => boolean) {
    this.#fd = fd;
    this.#requestWaiting = requestWaiting;
  }

  /** Encodes `value` into the chunk and returns its file offset, or null when the chunk is too full. */
  tryPush(value: unknown): number | null {
    const length = encodeFrameInto(this.#chunk, this.#used, value);
    if (length === 0) return null;
    const offset = this.bytes + this.#used;
    this.#used += length;
    return offset;
  }

  /** Writes the chunk out, then pushes `value` (for when {@link tryPush} found no room); returns the frame's file offset. */
  async pushAfterFlush(value: unknown): Promise<number> {
    await this.flush();
    const retried = this.tryPush(value);
    if (retried !== null) return retried;
    // A frame larger than the chunk is written on its own.
    const at = this.bytes;
    await this.#write(encodeFrame(value));
    return at;
  }

  /**
   * True when the slice is over: SLICE_MS spent, or MIN_SLICE_MS and a request is waiting (served
   * as the slice yields, its reply out before the next slice).
   */
  sliceDone(records: number): boolean {
    return (
      performance.now() - this.#sliceStart >= SLICE_MS ||
      (records % LOOK_EVERY === 0 && givesWay(this.#sliceStart, this.#requestWaiting))
    );
  }

  /** Lets the shard's event loop run a whole turn (threads/turn) before the next slice. */
  async yield(): Promise<void> {
    await nextTurn();
    this.#sliceStart = performance.now();
  }

  async flush(): Promise<void> {
    if (this.#used === 0) return;
    const used = this.#used;
    this.#used = 0;
    await this.#write(this.#chunk.subarray(0, used));
  }

  async #write(buf: Buffer): Promise<void> {
    let off = 0;
    while (off < buf.length)
      off += (await writeAsync(this.#fd, buf, off, buf.length - off)).bytesWritten;
    // Synced as it goes: one sync of the whole file at the end flushed tens of MB at once, and
    // the log's writes (every request waits on them) stalled behind it for up to seconds.
    await datasyncAsync(this.#fd);
    this.bytes += buf.length;
    // The slice is not restarted here: the write ends in the poll phase, and a fresh slice now
    // followed by the one after the next yield (setImmediate runs in the same turn) held the
    // thread for two slices at once (8 ms stalls).
  }
}
