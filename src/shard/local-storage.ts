/**
 * @module shard/local-storage — a shard's storage in its own directory: recovery from the newest
 * snapshot and the log after it, the write-ahead log (shard/persist/wal), snapshots that rotate
 * the log and delete the files they cover, saved HNSW graphs, the index of where content lies
 * (persist/content-index) for erasure in place, and the online backup.
 */
import { mkdirSync } from 'node:fs';
import type { BackupResult, ShardWorkerData } from '../protocol/shard.ts';
import { eraseInPlace, type ErasurePlan } from './erasure.ts';
import { writeBackup } from './persist/backup.ts';
import { ContentIndex } from './persist/content-index.ts';
import { removeFiles, seqName } from './persist/fsutil.ts';
import {
  adoptGraphs,
  deleteGraphsBefore,
  loadGraphs,
  saveGraphs,
  startGraphLoads,
  type GraphLoads,
} from './persist/graph-files.ts';
import { listSeqs, recoverShard, recoverShardAsync, type Recovered } from './persist/recovery.ts';
import { writeSnapshot } from './persist/snapshot.ts';
import { Wal } from './persist/wal.ts';
import type { ShardStorage, SnapshotOptions } from './storage.ts';
import type { ShardState } from './store/apply.ts';
import type { LogRecord } from './store/records.ts';

export interface LocalStorageHooks {
  /** Each group commit's duration, for the log-sync metric. */
  onSync: (ms: number) => void;
  /** The log failed (a full disk, an I/O error): called once, before any waiter hears of it. */
  onFail: (err: Error) => void;
}

export class LocalStorage implements ShardStorage {
  readonly recovered: Recovered;
  readonly #dir: string;
  readonly #shard: number;
  readonly #wal: Wal;
  /** Where every record's content lies in the files (shard/erasure pads those frames). */
  readonly #content: ContentIndex;
  /** Whether #content covers every file (not when a crash left files a snapshot should have deleted). */
  #contentCovered: boolean;

  /**
   * Recovers the shard's directory (created when missing) and opens the log after it; the saved
   * graphs are read on this thread ({@link open} reads them beside the snapshot instead).
   */
  constructor(
    opts: Pick<ShardWorkerData, 'dir' | 'shard' | 'durability'>,
    hooks: LocalStorageHooks,
    from?: { recovered: Recovered; content: ContentIndex },
  ) {
    this.#dir = opts.dir;
    this.#shard = opts.shard;
    this.#content = from?.content ?? new ContentIndex();
    const onFrame = this.#content.add.bind(this.#content);
    if (from) this.recovered = from.recovered;
    else {
      mkdirSync(opts.dir, { recursive: true });
      const afterSnapshot = (state: ShardState, walSeq: number): number =>
        loadGraphs(opts.dir, walSeq, state);
      this.recovered = recoverShard(opts.dir, { afterSnapshot, onFrame });
    }
    this.#contentCovered = !this.recovered.staleFiles;
    const { onSync, onFail } = hooks;
    const seq = this.recovered.nextWalSeq;
    this.#wal = new Wal({
      dir: opts.dir,
      seq,
      durability: opts.durability,
      onSync,
      onFrame,
      onFail,
    });
  }

  /**
   * The constructor's recovery with the newest snapshot's HNSW graphs read on libuv's thread pool
   * while this thread decodes the snapshot (graph-files startGraphLoads): at a million memories
   * the graph file is 1.7 GB, ~3.5 s of CPU that no longer comes before ready. The graphs are
   * adopted where the constructor adopts them, after the snapshot and before the log.
   */
  static async open(
    opts: Pick<ShardWorkerData, 'dir' | 'shard' | 'durability'>,
    hooks: LocalStorageHooks,
  ): Promise<LocalStorage> {
    mkdirSync(opts.dir, { recursive: true });
    const content = new ContentIndex();
    let loads: GraphLoads | null = null;
    const recovered = await recoverShardAsync(opts.dir, {
      onFrame: content.add.bind(content),
      beforeSnapshot: (walSeq) => {
        if (walSeq !== null) loads = startGraphLoads(opts.dir, walSeq);
      },
      afterSnapshot: async (state, walSeq) => {
        const started = loads as GraphLoads | null;
        if (started?.walSeq === walSeq) await adoptGraphs(started, state);
        else loadGraphs(opts.dir, walSeq, state);
      },
    });
    return new LocalStorage(opts, hooks, { recovered, content });
  }

  get failed(): Error | null {
    return this.#wal.failed;
  }

  get seq(): number {
    return this.#wal.seq;
  }

  get logBytes(): number {
    return this.#wal.segmentBytes;
  }

  append(records: readonly LogRecord[]): Promise<void> {
    return this.#wal.append(records);
  }

  /** Rotates the log, writes a snapshot, then deletes the files it covers. */
  async snapshot(state: ShardState, opts: SnapshotOptions): Promise<void> {
    const wal = this.#wal;
    const dir = this.#dir;
    const walSeq = await wal.rotate();
    const name = seqName('snap', walSeq, 'snap');
    const onFrame = (offset: number, r: LogRecord): void => this.#content.add(name, offset, r);
    const { requestWaiting } = opts;
    await writeSnapshot(dir, { shard: this.#shard, walSeq, state, onFrame, requestWaiting }).catch(
      (err: unknown) => {
        this.#content.dropFile(name);
        throw err;
      },
    );
    await wal.settled();
    if (wal.failed) {
      // The log failed while the snapshot was written: it may hold writes the log never took. The
      // files before it stay, and they hold every acknowledged write.
      this.#content.dropFile(name);
      await removeFiles(dir, [name]);
      throw new Error(`snapshot ${name} discarded: ${wal.failed.message}`);
    }
    // Graphs are saved only when nothing can change under them (the final snapshot).
    if (opts.final) saveGraphs(dir, walSeq, state);
    // Off the shard's thread (see removeFiles); snapshots, backups and erasures run one at a
    // time (the shard's #hold), so none reads a file while it is being deleted.
    await deleteGraphsBefore(dir, walSeq);
    await wal.deleteBefore(walSeq, listSeqs(dir, 'wal', 'log'));
    const older = listSeqs(dir, 'snap', 'snap').filter((seq) => seq < walSeq);
    await removeFiles(
      dir,
      older.map((seq) => seqName('snap', seq, 'snap')),
    );
    this.#content.dropBefore(walSeq);
    this.#contentCovered = true;
  }

  backup(dir: string, state: ShardState): Promise<BackupResult> {
    return writeBackup(dir, { from: this.#dir, shard: this.#shard, wal: this.#wal, state });
  }

  canEraseInPlace(): boolean {
    return this.#contentCovered;
  }

  eraseInPlace(state: ShardState, plan: ErasurePlan): Promise<number> {
    return eraseInPlace({ dir: this.#dir, wal: this.#wal, state, content: this.#content }, plan);
  }

  async close(state: ShardState, requestWaiting: () => boolean): Promise<void> {
    await this.#wal.drain();
    if (this.#wal.failed) {
      await this.#wal.close();
      const why = this.#wal.failed.message;
      throw new Error(
        `no final snapshot, since its log failed (${why}); the log holds every acknowledged write`,
      );
    }
    await this.snapshot(state, { final: true, requestWaiting });
    await this.#wal.close();
  }
}
