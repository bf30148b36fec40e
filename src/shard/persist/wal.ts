/**
 * @module shard/persist/wal — the append-only log of one shard, in numbered segments.
 * Appends are acknowledged after fdatasync (or after the OS write with durability 'os'); appends
 * that arrive while a sync is in flight share the next one (group commit).
 */
import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  rmSync,
  write,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeFrame } from './frames.ts';
import { fsyncDir, fsyncDirAsync } from '../../files/durable.ts';
import { removeFiles, seqName } from './fsutil.ts';
import type { LogRecord } from '../store/records.ts';

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);

export interface WalOptions {
  dir: string;
  seq: number;
  durability: 'fsync' | 'os';
  /** Called after each group commit with its duration and record count, for metrics. */
  onSync?: (ms: number, records: number) => void;
  /** Called for each frame once it is written: the segment's file name, the frame's offset, its record. */
  onFrame?: (file: string, offset: number, record: LogRecord) => void;
  /**
   * Called once, before any waiter hears of it, when a write or sync fails: from then on the log
   * refuses every append (what it holds on disk stays as it was, a torn tail at most).
   */
  onFail?: (err: Error) => void;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Wal {
  readonly #dir: string;
  readonly #durability: 'fsync' | 'os';
  readonly #onSync: ((ms: number, records: number) => void) | undefined;
  readonly #onFrame: WalOptions['onFrame'];
  readonly #onFail: WalOptions['onFail'];
  #fd: number;
  #seq: number;
  #pending: Buffer[] = [];
  /** The records of `#pending`'s frames, kept only when someone asked for `onFrame`. */
  #pendingRecords: LogRecord[] = [];
  #waiters: Waiter[] = [];
  #flushing: Promise<void> | null = null;
  #rotating = false;
  #failed: Error | null = null;
  #segmentBytes = 0;
  /** Frames appended, and frames written (or refused by a failure), since the log was opened. */
  #queued = 0;
  #settled = 0;
  /** `settled()` callers: each waits until `#settled` reaches its target. */
  #settledWaiters: { target: number; resolve: () => void }[] = [];

  constructor(opts: WalOptions) {
    this.#dir = opts.dir;
    this.#durability = opts.durability;
    this.#onSync = opts.onSync;
    this.#onFrame = opts.onFrame;
    this.#onFail = opts.onFail;
    this.#seq = opts.seq;
    this.#fd = openSync(join(this.#dir, seqName('wal', this.#seq, 'log')), 'a');
    this.#segmentBytes = fstatSync(this.#fd).size;
    fsyncDir(this.#dir);
  }

  get seq(): number {
    return this.#seq;
  }

  /** Bytes in the current segment: what it held when opened, and every batch written since. */
  get segmentBytes(): number {
    return this.#segmentBytes;
  }

  get failed(): Error | null {
    return this.#failed;
  }

  /** Appends records; resolves once they are durable. */
  append(records: readonly LogRecord[]): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (records.length === 0) return Promise.resolve();
    for (const r of records) this.#pending.push(encodeFrame(r));
    this.#queued += records.length;
    if (this.#onFrame) this.#pendingRecords.push(...records);
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    this.#kick();
    return done;
  }

  #kick(): void {
    if (this.#flushing || this.#rotating || this.#pending.length === 0) return;
    this.#flushing = this.#flushLoop().finally(() => {
      this.#flushing = null;
      this.#kick();
    });
  }

  async #flushLoop(): Promise<void> {
    while (this.#pending.length > 0 && !this.#rotating) {
      const batch = Buffer.concat(this.#pending);
      const count = this.#pending.length;
      const waiters = this.#waiters;
      const frames = this.#pending;
      const written = this.#pendingRecords;
      this.#pending = [];
      this.#pendingRecords = [];
      this.#waiters = [];
      const start = performance.now();
      try {
        await writeAll(this.#fd, batch);
        if (this.#durability === 'fsync') await datasyncAsync(this.#fd);
        this.#noteFrames(frames, written);
        this.#segmentBytes += batch.length;
        this.#onSync?.(performance.now() - start, count);
        for (const w of waiters) w.resolve();
        this.#noteSettled(this.#settled + count);
      } catch (err) {
        this.#failed = new Error(`log write failed: ${(err as Error).message}`);
        this.#dropFrom(this.#segmentBytes);
        this.#onFail?.(this.#failed);
        for (const w of [...waiters, ...this.#waiters]) w.reject(this.#failed);
        this.#waiters = [];
        this.#pending = [];
        this.#pendingRecords = [];
        this.#noteSettled(this.#queued);
        return;
      }
    }
  }

  /**
   * Cuts the segment back to `bytes`, the end of the last batch written: a batch the disk took part
   * of (a full disk takes what fits) would otherwise leave whole frames of writes that were refused
   * (some of a multi-record write, perhaps), which recovery would keep. Best effort: when even this
   * fails the disk is failing, and recovery truncates only a torn last frame.
   */
  #dropFrom(bytes: number): void {
    try {
      if (!fstatSync(this.#fd).isFile()) return; // a device, in tests: nothing to cut
      ftruncateSync(this.#fd, bytes);
      fdatasyncSync(this.#fd);
    } catch (err) {
      console.error(
        `log: could not cut the failed batch off ${seqName('wal', this.#seq, 'log')} at ${bytes} bytes: ${(err as Error).message}`,
      );
    }
  }

  /** Resolves once every append made so far has been written, or refused (check `failed`); later appends are not waited for. */
  settled(): Promise<void> {
    if (this.#settled >= this.#queued) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.push({ target: this.#queued, resolve }));
  }

  #noteSettled(settled: number): void {
    this.#settled = settled;
    if (this.#settledWaiters.length === 0) return;
    const due = this.#settledWaiters.filter((w) => w.target <= settled);
    this.#settledWaiters = this.#settledWaiters.filter((w) => w.target > settled);
    for (const w of due) w.resolve();
  }

  #noteFrames(frames: readonly Buffer[], records: readonly LogRecord[]): void {
    if (!this.#onFrame) return;
    const file = seqName('wal', this.#seq, 'log');
    let offset = this.#segmentBytes;
    frames.forEach((frame, i) => {
      this.#onFrame?.(file, offset, records[i] as LogRecord);
      offset += frame.length;
    });
  }

  /** Waits for in-flight appends, then starts a new segment; returns its number. */
  async rotate(): Promise<number> {
    this.#rotating = true;
    try {
      while (this.#flushing) await this.#flushing;
      // The log moves on only once the new segment is durably there; until then (a full disk, no
      // inodes left) appends go on landing in the current one, under its own number.
      const seq = this.#seq + 1;
      const path = join(this.#dir, seqName('wal', seq, 'log'));
      const fd = openSync(path, 'a');
      try {
        await fsyncDirAsync(this.#dir);
      } catch (err) {
        closeSync(fd);
        rmSync(path, { force: true });
        throw err;
      }
      const old = this.#fd;
      this.#fd = fd;
      this.#seq = seq;
      this.#segmentBytes = 0;
      closeSync(old);
      return seq;
    } finally {
      this.#rotating = false;
      this.#kick();
    }
  }

  /** Waits until everything appended so far is durable. */
  async drain(): Promise<void> {
    while (this.#flushing || this.#pending.length > 0) {
      this.#kick();
      if (this.#flushing) await this.#flushing;
      else break;
    }
  }

  async close(): Promise<void> {
    await this.drain();
    closeSync(this.#fd);
  }

  /** Deletes segments numbered below `seq` (they are covered by a durable snapshot). */
  async deleteBefore(seq: number, existing: readonly number[]): Promise<void> {
    await removeFiles(
      this.#dir,
      existing.filter((s) => s < seq).map((s) => seqName('wal', s, 'log')),
    );
    await fsyncDirAsync(this.#dir);
  }
}

async function writeAll(fd: number, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await writeAsync(fd, buf, off, buf.length - off);
    off += bytesWritten;
  }
}
