/**
 * @module shard/compaction — the storage work a shard runs beside serving, one job at a time
 * (each may delete or rewrite the files another reads): snapshots, due on the interval or when
 * the log has grown past its limit, and run again when one is asked for while another runs;
 * backups; and erasure, which pads forgotten content in place when every file is indexed and
 * otherwise rewrites the store by a snapshot, within the erasure window (shard/erasure).
 */
import { FlashbulbError } from '../errors/codes.ts';
import type { BackupResult, ShardWorkerData } from '../protocol/shard.ts';
import { ErasureRequests, ErasureTimer } from './erasure.ts';
import type { ShardStorage } from './storage.ts';
import type { ShardState } from './store/apply.ts';
import type { LiveRecord } from './store/records.ts';

export interface CompactionOptions {
  opts: Pick<ShardWorkerData, 'shard' | 'snapshotIntervalS' | 'snapshotWalBytes' | 'eraseWithinS'>;
  storage: ShardStorage;
  state: ShardState;
  /** True once the shard is shutting down: nothing new starts (its final snapshot erases). */
  stopping: () => boolean;
  /** True when a request is waiting on the shard: a snapshot ends its slice at once. */
  requestWaiting: () => boolean;
}

export class Compaction {
  readonly #o: CompactionOptions;
  readonly #shard: number;
  /** The snapshot, backup or erasure in progress. */
  #running: Promise<void> | null = null;
  #snapshotAgain = false;
  #lastSnapshotAt = Date.now();
  #dirty = false;
  /** Forgotten content must leave every file (shard/erasure): when, and what. */
  readonly #erasure: ErasureTimer;
  readonly #erasureRequests = new ErasureRequests();
  /** Each snapshot's duration, until the metrics take them. */
  readonly snapshotMs: number[] = [];

  constructor(o: CompactionOptions) {
    this.#o = o;
    this.#shard = o.opts.shard;
    this.#erasure = new ErasureTimer(o.opts.eraseWithinS, () => {
      void this.#erase().catch((err: unknown) =>
        console.error(`shard ${this.#shard}: erasure failed:`, err),
      );
    });
  }

  /** The state changed since the last snapshot. */
  changed(): void {
    this.#dirty = true;
  }

  /** Once a second: a snapshot when one is due. */
  tick(): void {
    if (this.#running || !this.#dirty || this.#o.storage.failed) return;
    const due = Date.now() - this.#lastSnapshotAt >= this.#o.opts.snapshotIntervalS * 1000;
    const grown = (this.#o.storage.logBytes ?? 0) >= this.#o.opts.snapshotWalBytes;
    if (due || grown) this.#snapshotInBackground('snapshot');
  }

  /** Asks that what `records` forgot (`all`: everything forgotten) leave storage within the window. */
  requestErasure(records: readonly LiveRecord[] | 'all'): void {
    this.#erasureRequests.add(records);
    this.#erasure.request();
  }

  /** Stores a snapshot (storage/snapshot) and drops the log it covers; one at a time. */
  snapshot(): Promise<void> {
    const storage = this.#o.storage;
    if (!storage.snapshot) return Promise.resolve(); // a log without snapshots keeps its whole history
    if (storage.failed) {
      const why = `no snapshot: ${storage.failed.message} (memory may hold writes the log never took)`;
      return Promise.reject(new FlashbulbError('unavailable', why));
    }
    if (this.#running) {
      this.#snapshotAgain = true;
      return this.#running;
    }
    return this.#hold(this.#runSnapshot(storage));
  }

  /** Writes a consistent copy of the shard into `dir` while it keeps serving (persist/backup). */
  backup(dir: string): Promise<BackupResult> {
    const backup = this.#o.storage.backup?.bind(this.#o.storage);
    if (!backup) {
      const why = 'this shard logs to JetStream (cluster mode); there is no local log to back up';
      return Promise.reject(new FlashbulbError('invalid_input', why));
    }
    return this.#exclusive(() => backup(dir, this.#o.state)).catch((err: unknown) => {
      if (err instanceof FlashbulbError) throw err;
      const why = err instanceof Error ? err.message : String(err);
      throw new FlashbulbError('unavailable', `shard ${this.#shard}: ${why}`);
    });
  }

  /** Stops starting work (shutdown): no erasure is due any more; resolves once none runs. */
  async stop(): Promise<void> {
    this.#erasure.cancel();
    while (this.#running) await this.#running;
  }

  async #runSnapshot(storage: ShardStorage): Promise<void> {
    const start = performance.now();
    this.#dirty = false;
    this.#lastSnapshotAt = Date.now();
    await storage.snapshot?.(this.#o.state, {
      final: false,
      requestWaiting: this.#o.requestWaiting,
    });
    this.#erasure.lastSnapshotMs = performance.now() - start;
    this.snapshotMs.push(this.#erasure.lastSnapshotMs);
  }

  /** A snapshot nobody awaits: its failure is logged (an unhandled rejection would end the process). */
  #snapshotInBackground(what: string): void {
    void this.snapshot().catch((err: unknown) =>
      console.error(`shard ${this.#shard}: ${what} failed:`, err),
    );
  }

  /**
   * Erases what was forgotten since the last erasure: in place when every file is indexed, else by
   * a whole snapshot; not once shutting down (the final snapshot erases).
   */
  async #erase(): Promise<void> {
    const plan = this.#erasureRequests.take();
    const { storage, state } = this.#o;
    const erase = storage.eraseInPlace?.bind(storage);
    if (this.#o.stopping()) return;
    // The saved graph's erased vectors first (padded in place, or the graph deleted).
    const eraseGraphs = storage.eraseGraphs?.bind(storage);
    if (eraseGraphs)
      await this.#exclusive(() => eraseGraphs(state, plan)).catch((err: unknown) => {
        console.error(`shard ${this.#shard}: erasing from the saved graph failed:`, err);
        this.requestErasure('all'); // its snapshot deletes the graph files no longer kept
      });
    if (plan.full || !erase || !storage.canEraseInPlace?.()) return this.snapshot();
    await this.#exclusive(async () => (this.#o.stopping() ? 0 : erase(state, plan))).catch(
      (err: unknown) => {
        console.error(
          `shard ${this.#shard}: erasure in place failed, rewriting the store instead:`,
          err,
        );
        this.requestErasure('all');
      },
    );
  }

  /** Runs `job` in turn with snapshots, backups and erasures. */
  async #exclusive<T>(job: () => Promise<T>): Promise<T> {
    while (this.#running) await this.#running;
    return this.#hold(job());
  }

  /** Marks `run` as the job in progress; a snapshot asked for meanwhile follows it. */
  #hold<T>(run: Promise<T>): Promise<T> {
    const settled = run.then(
      () => {},
      () => {},
    );
    this.#running = settled.finally(() => {
      this.#running = null;
      if (this.#snapshotAgain && !this.#o.stopping()) {
        this.#snapshotAgain = false;
        this.#snapshotInBackground('snapshot (again)');
      }
    });
    return run;
  }
}
