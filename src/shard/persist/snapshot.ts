/**
 * @module shard/persist/snapshot — writes a shard snapshot as a compacted log: a header frame,
 * one frame per memory, edge and tombstone, and a footer. The snapshot is fuzzy (state may change
 * while it is written, in slices so the shard keeps serving); it is correct because the log
 * segment started just before it is replayed on top, and every record is idempotent.
 */
import { closeSync, fdatasync, openSync, write } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ShardState } from '../store/apply.ts';
import { encodeFrame } from './frames.ts';
import { renameDurably } from '../../files/durable.ts';
import { seqName } from './fsutil.ts';
import { toStored, type LogRecord, type SnapshotFooter, type SnapshotHeader } from '../store/records.ts';

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);

/** Work done between yields to the shard's event loop. */
const SLICE_MS = 4;
const FLUSH_BYTES = 4 * 1024 * 1024;

export async function writeSnapshot(
  dir: string,
  opts: { shard: number; walSeq: number; state: ShardState; onFrame?: (offset: number, record: LogRecord) => void },
): Promise<{ path: string; name: string; records: number; bytes: number }> {
  const name = seqName('snap', opts.walSeq, 'snap');
  const tmp = join(dir, `${name}.tmp`);
  const fd = openSync(tmp, 'w');
  const out = new SnapshotOut(fd);
  try {
    const header: SnapshotHeader = { t: 'snap', format: 1, shard: opts.shard, walSeq: opts.walSeq, createdAt: Date.now() };
    out.push(encodeFrame(header));
    let records = 0;
    for (const record of snapshotRecords(opts.state)) {
      opts.onFrame?.(out.offset, record);
      out.push(encodeFrame(record));
      records += 1;
      await out.maybeYield();
    }
    const footer: SnapshotFooter = { t: 'end', records };
    out.push(encodeFrame(footer));
    await out.flush();
    await datasyncAsync(fd);
    closeSync(fd);
    renameDurably(tmp, join(dir, name));
    return { path: join(dir, name), name, records, bytes: out.bytes };
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
    throw err;
  }
}

/** The records that rebuild `state` (also what cluster snapshots hold). */
export function* snapshotRecords(state: ShardState): Generator<LogRecord> {
  for (const [ws, w] of state.workspaces) {
    for (const m of w.memories.values()) yield { t: 'put', ws, m: toStored(m) };
  }
  for (const [ws, w] of state.workspaces) {
    for (const e of w.graph.all()) yield { t: 'edge', ws, e };
    for (const tomb of w.tombstones.values()) yield { t: 'tomb', ws, tomb };
    for (const p of w.pending.values()) yield { t: 'pending', ws, p };
  }
}

class SnapshotOut {
  readonly #fd: number;
  #chunks: Buffer[] = [];
  #chunkBytes = 0;
  #sliceStart = performance.now();
  bytes = 0;

  constructor(fd: number) {
    this.#fd = fd;
  }

  /** File offset of the next frame pushed. */
  get offset(): number {
    return this.bytes + this.#chunkBytes;
  }

  push(frame: Buffer): void {
    this.#chunks.push(frame);
    this.#chunkBytes += frame.length;
  }

  async maybeYield(): Promise<void> {
    if (this.#chunkBytes >= FLUSH_BYTES) await this.flush();
    if (performance.now() - this.#sliceStart < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#sliceStart = performance.now();
  }

  async flush(): Promise<void> {
    if (this.#chunkBytes === 0) return;
    const buf = Buffer.concat(this.#chunks);
    this.#chunks = [];
    this.#chunkBytes = 0;
    let off = 0;
    while (off < buf.length) off += (await writeAsync(this.#fd, buf, off, buf.length - off)).bytesWritten;
    // Synced as it goes: one sync of the whole file at the end flushed tens of MB at once, and
    // the log's writes (every request waits on them) stalled behind it for up to seconds.
    await datasyncAsync(this.#fd);
    this.bytes += buf.length;
    this.#sliceStart = performance.now();
  }
}
