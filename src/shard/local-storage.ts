/**
 * @module shard/local-storage — a shard's storage in its own directory: recovery from the newest
 * snapshot and the log after it, the write-ahead log (shard/persist/wal), snapshots that rotate
 * the log and delete the files they cover, saved HNSW graphs (the newest kept across later
 * snapshots, its erased vectors padded in place by an erasure), the index of where content lies
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
  eraseFromKept,
  loadGraphFiles,
  pruneGraphs,
  saveGraphs,
  startGraphLoads,
  type GraphLoads,
  type KeptGraphs,
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
  readonly recovered: Recovered & { erasureDue: boolean };
  readonly #dir: string;
  readonly #shard: number;
  readonly #wal: Wal;
  /** Where every record's content lies in the files (shard/erasure pads those frames). */
  readonly #content: ContentIndex;
  /** Whether #content covers every file (not when a crash left files a snapshot should have deleted). */
  #contentCovered: boolean;
  /** The graph files on disk that a restart adopts, and the vectors they hold; null when none. */
  #kept: KeptGraphs | null;

  /**
   * Recovers the shard's directory (created when missing) and opens the log after it; the saved
   * graphs are read on this thread ({@link open} reads them beside the snapshot instead).
   */
  constructor(
    opts: Pick<ShardWorkerData, 'dir' | 'shard' | 'durability'>,
    hooks: LocalStorageHooks,
    from?: { recovered: Recovered; content: ContentIndex; kept: KeptGraphs | null },
  ) {
    this.#dir = opts.dir;
    this.#shard = opts.shard;
    this.#content = from?.content ?? new ContentIndex();
    const onFrame = this.#content.add.bind(this.#content);
    let recovered: Recovered;
    let kept: KeptGraphs | null = null;
    if (from) [recovered, kept] = [from.recovered, from.kept];
    else {
      mkdirSync(opts.dir, { recursive: true });
      const afterSnapshot = (state: ShardState, walSeq: number): void => {
        kept = loadGraphFiles(opts.dir, walSeq, state);
      };
      recovered = recoverShard(opts.dir, { afterSnapshot, onFrame });
    }
    this.#kept = kept as KeptGraphs | null;
    // The kept graph holds vectors of memories forgotten before a crash: erase them soon.
    this.recovered = { ...recovered, erasureDue: this.#kept?.holdsGone === true };
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
    let kept: KeptGraphs | null = null;
    const recovered = await recoverShardAsync(opts.dir, {
      onFrame: content.add.bind(content),
      beforeSnapshot: (walSeq) => {
        if (walSeq !== null) loads = startGraphLoads(opts.dir, walSeq);
      },
      afterSnapshot: async (state, walSeq) => {
        const started = loads as GraphLoads | null; // set by beforeSnapshot, which runs first
        if (started?.walSeq === walSeq) kept = await adoptGraphs(started, state);
        else kept = loadGraphFiles(opts.dir, walSeq, state);
      },
    });
    return new LocalStorage(opts, hooks, { recovered, content, kept });
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
    // Graphs are saved only when nothing can change under them (the final snapshot); any other
    // snapshot keeps the graph saved last, which a restart adopts and reconciles with it.
    if (opts.final) this.#kept = saveGraphs(dir, walSeq, state);
    // Off the shard's thread (see removeFiles); snapshots, backups and erasures run one at a
    // time (the shard's #hold), so none reads a file while it is being deleted.
    await pruneGraphs(dir, this.#kept?.walSeq ?? null);
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

  /**
   * Pads, in the kept graph files, the vectors the plan erases (every vector the state no longer
   * has as saved, for a whole-store erasure), so the graph stays adoptable (persist/graph-files
   * eraseFromKept). When that fails, the graph files are deleted instead: a restart rebuilds.
   */
  async eraseGraphs(state: ShardState, plan: ErasurePlan): Promise<void> {
    const kept = this.#kept;
    if (!kept) return;
    const erased = plan.full ? null : new Set([...plan.erase.keys(), ...plan.rewritten.keys()]);
    try {
      await eraseFromKept(this.#dir, kept, state, erased);
    } catch (err) {
      console.error(`shard ${this.#shard}: padding the saved graph failed, deleting it:`, err);
      this.#kept = null;
      await pruneGraphs(this.#dir, null);
    }
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
