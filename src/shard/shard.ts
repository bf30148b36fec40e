/**
 * @module shard/shard — one shard, the single-threaded owner of its workspaces' state: requests
 * (shard/dispatch says which op answers each method), commits to its storage (shard/storage),
 * expiry, access counters, pushes to subscriptions and the background work (indexing,
 * contradiction checks, compaction), through its lifecycle (shard/phases: serving, memory full,
 * log failed, draining, stopped).
 */
import { FlashbulbError } from '../errors/codes.ts';
import { IdGenerator } from '../model/ids.ts';
import { wallClock, type Clock } from '../model/clock.ts';
import { Lifecycle } from '../model/lifecycle.ts';
import { encodeRecord, type LiveRecord } from './store/records.ts';
import { applyLive, type ShardState } from './store/apply.ts';
import type { OpContext } from './ops/context.ts';
import { Expiry } from './expiry.ts';
import type {
  BackupResult,
  ShardEvent,
  ShardInput,
  ShardMetrics,
  ShardMethod,
  ShardOutput,
  ShardStats,
  ShardWorkerData,
} from '../protocol/shard.ts';
import { Subscriptions } from './subscriptions.ts';
import { AccessLog } from './access-log.ts';
import { ContradictionChecker } from './contradictions.ts';
import { CommitBarrier, logFailedWhy, storageFailure } from './commit-barrier.ts';
import { Compaction } from './compaction.ts';
import { READS_COMMITTED, shardHandlers, type Handler, type Handlers } from './dispatch.ts';
import { Indexer, PENDING_URGENT } from './indexer.ts';
import { LocalStorage, type LocalStorageHooks } from './local-storage.ts';
import { SHARD_ROUTINE, SHARD_TRANSITIONS, type ShardPhase } from './phases.ts';
import type { RecoveredState, ShardStorage } from './storage.ts';

export class Shard {
  readonly #opts: ShardWorkerData;
  readonly #emit: (e: ShardEvent) => void;
  readonly #subs = new Subscriptions();
  readonly #state: ShardState;
  /** The log and snapshots: the shard's own files (shard/local-storage), or a JetStream stream. */
  readonly #storage: ShardStorage;
  readonly #phase: Lifecycle<ShardPhase>;
  readonly #compaction: Compaction;
  readonly #ids = new IdGenerator();
  readonly #ctx: OpContext;
  readonly #clock: Clock;
  readonly #handlers: Handlers;
  readonly recovered: RecoveredState;
  #tick: NodeJS.Timeout;
  #stopping: Promise<void> | null = null;
  #inflight = 0;
  readonly #barrier = new CommitBarrier();
  readonly #accesses = new AccessLog();
  readonly #checker: ContradictionChecker;
  readonly #indexer: Indexer;
  readonly syncMs: number[] = [];
  readonly #expiry: Expiry;
  /** Set by the worker: true when a request is waiting (served once the caller yields), so long work makes way at once. */
  requestWaiting: () => boolean = () => false;

  /** What the shard's own files tell it: each group commit's duration, the log's failure. */
  readonly #storageHooks: LocalStorageHooks = {
    onSync: (ms) => this.syncMs.push(ms),
    onFail: (err) => this.#storageFailed(err),
  };

  /** A shard on its own files, its saved graphs read on another thread (LocalStorage.open). */
  static async open(opts: ShardWorkerData, emit: (e: ShardEvent) => void): Promise<Shard> {
    let hooks: LocalStorageHooks | null = null; // the shard's, once it exists
    const storage = await LocalStorage.open(opts, {
      onSync: (ms) => hooks?.onSync(ms),
      onFail: (err) => hooks?.onFail(err),
    });
    const shard = new Shard(opts, emit, storage);
    hooks = shard.#storageHooks;
    return shard;
  }

  /**
   * `storage`: the shard's own files in `opts.dir` by default (cluster mode passes a stream's).
   * `clock`: "now" for expiry, time scopes, windows and timestamps, contradiction edges and
   * candidates included (snapshots and erasure keep real time).
   */
  constructor(
    opts: ShardWorkerData,
    emit: (e: ShardEvent) => void = () => {},
    storage?: ShardStorage,
    clock: Clock = wallClock,
  ) {
    this.#opts = opts;
    this.#clock = clock;
    this.#emit = emit;
    this.#phase = new Lifecycle(SHARD_TRANSITIONS, {
      name: `shard ${opts.shard}`,
      initial: 'recovering',
      log: (line) => console.error(line),
      routine: SHARD_ROUTINE,
    });
    this.#storage = storage ?? new LocalStorage(opts, this.#storageHooks);
    this.recovered = this.#storage.recovered;
    this.#state = this.recovered.state;
    const requestWaiting = (): boolean => this.requestWaiting();
    const stopping = (): boolean => this.#phase.is('draining', 'stopped');
    this.#compaction = new Compaction({
      opts,
      storage: this.#storage,
      state: this.#state,
      stopping,
      requestWaiting,
    });
    this.#indexer = new Indexer(this.#state, {
      stopped: stopping,
      busy: () => this.#inflight > 0,
      requestWaiting,
    });
    for (const ws of this.#state.workspaces.values())
      for (const id of ws.memories.keys()) this.#ids.observe(id);
    this.#checker = new ContradictionChecker(this.#state, {
      commit: (records) => this.#commit(records),
      stopping: () => stopping() || this.#storage.failed !== null,
      wait: () => this.#indexer.backlog() >= PENDING_URGENT,
      clock,
      requestWaiting,
    });
    this.#ctx = {
      state: this.#state,
      ids: this.#ids,
      nowUs: () => clock.nowUs(),
      commit: (records, opts) => this.#commit(records, opts),
      requestErasure: (records) => this.#compaction.requestErasure(records),
      touch: (ws, memories) => this.#accesses.touch(ws, memories, clock.nowUs()),
    };
    this.#expiry = new Expiry({
      state: this.#state,
      clock,
      commit: (records) => this.#commit(records),
      requestErasure: (records) => this.#compaction.requestErasure(records),
      failed: () => this.#storage.failed !== null,
      shard: opts.shard,
    });
    this.#handlers = shardHandlers({
      subs: this.#subs,
      emit: (e) => this.#emit(e),
      stats: () => this.stats(),
      backup: (dir) => this.backup(dir),
      snapshot: () => this.snapshot(),
    });
    this.#phase.transition('serving');
    // Expired before the crash (or while the server was down): forgotten before the first request.
    this.#expiry.due(null);
    this.#tick = setInterval(() => {
      this.#expiry.due(null);
      this.#flushAccess();
      this.#compaction.tick();
    }, 1000);
    this.#indexer.schedule();
    // A crash can leave replayed log (perhaps holding forgotten content) or files a snapshot
    // should have deleted: compact soon, so erasure holds across crashes too.
    const { replayedRecords, staleFiles, erasureDue } = this.recovered;
    if (replayedRecords > 0 || staleFiles || erasureDue === true)
      this.#compaction.requestErasure('all');
  }

  /** Where the shard is in its lifecycle (shard/phases). */
  get phase(): ShardPhase {
    return this.#phase.state;
  }

  /** The worker's heap watch started (true) or stopped refusing writes that grow the store. */
  memoryFull(full: boolean): void {
    this.#phase.transition(full ? 'memory-full' : 'serving');
  }

  /** Background work waiting: memories to check for contradictions, vectors to index. */
  backlogs(): { checks: number; index: number } {
    return { checks: this.#checker.backlog, index: this.#indexer.pending() };
  }

  get memoryCount(): number {
    return this.#state.memoryCount();
  }

  async handle<M extends ShardMethod>(
    method: M,
    ws: string,
    input: ShardInput<M>,
  ): Promise<ShardOutput<M>> {
    if (this.#phase.is('draining', 'stopped'))
      throw new FlashbulbError('unavailable', 'shard is shutting down');
    if (this.#storage.failed) throw storageFailure(this.#storage.failed);
    const handler = this.#handlers[method] as Handler<M> | undefined;
    if (!handler)
      throw new FlashbulbError('internal_error', `unknown shard method ${String(method)}`);
    this.#inflight += 1;
    try {
      // Expired memories leave the state before any operation reads it, so no read, recall,
      // prime, graph walk or subscription match can return one.
      this.#expiry.due(ws);
      if (READS_COMMITTED[method]) await this.#barrier.settled(ws, this.#storage);
      return await handler(this.#ctx, ws, input);
    } catch (err) {
      // The write whose append failed (and any waiting behind it) hears why, as every later request does.
      const failed = this.#storage.failed as Error | null; // set meanwhile, though it was not on entry
      if (failed && !(err instanceof FlashbulbError)) throw storageFailure(failed);
      throw err;
    } finally {
      this.#inflight -= 1;
    }
  }

  /** What the metrics take each second: the store's size, durations and counts since the last call. */
  takeMetrics(): ShardMetrics {
    const { found, skipped } = this.#checker.take();
    return {
      memories: this.memoryCount,
      syncMs: this.syncMs.splice(0),
      snapshotMs: this.#compaction.snapshotMs.splice(0),
      expired: this.#expiry.take(),
      contradictions: found,
      checksSkipped: skipped,
      checkBacklog: this.#checker.backlog,
      indexBacklog: this.#indexer.pending(),
    };
  }

  stats(): ShardStats {
    return {
      memories: this.memoryCount,
      workspaces: this.#state.workspaces.size,
      edges: this.#state.edgeCount(),
      walSeq: this.#storage.seq ?? 0,
    };
  }

  async #commit(records: LiveRecord[], opts: { quiet?: boolean } = {}): Promise<void> {
    for (const r of records) applyLive(this.#state, r);
    this.#compaction.changed();
    this.#indexer.schedule();
    const appended = this.#storage.append(records.map(encodeRecord));
    this.#barrier.track(
      records.map((r) => r.ws),
      appended,
    );
    await appended;
    if (opts.quiet) return;
    for (const { ws, pushes } of this.#subs.offerWrites(this.#state, records, this.#clock.nowUs()))
      this.#emit({ kind: 'push', ws, pushes });
    if (this.#opts.contradictions) this.#checker.enqueue(records);
  }

  #flushAccess(): void {
    const records = this.#accesses.drain(this.#state);
    if (records.length === 0) return;
    this.#compaction.changed();
    this.#storage
      .append(records)
      .catch((err: unknown) => console.error(`shard ${this.#opts.shard}: access log failed:`, err));
  }

  /** The local log failed: the shard refuses every request until restarted (commit-barrier). */
  #storageFailed(err: Error): void {
    const why = logFailedWhy(err);
    if (!this.#phase.transition('log-failed', why))
      console.error(`shard ${this.#opts.shard}: ${why}`);
    this.#emit({ kind: 'storage-failed', shard: this.#opts.shard, message: err.message });
  }

  /** Stores a snapshot and drops the log it covers (shard/compaction: one job at a time). */
  snapshot(): Promise<void> {
    return this.#compaction.snapshot();
  }

  /** Writes a consistent copy of the shard into `dir` while it keeps serving (persist/backup). */
  backup(dir: string): Promise<BackupResult> {
    return this.#compaction.backup(dir);
  }

  /** Stops taking requests, waits for in-flight ones, writes a final snapshot and closes the log. */
  shutdown(): Promise<void> {
    this.#stopping ??= this.#drain();
    return this.#stopping;
  }

  async #drain(): Promise<void> {
    this.#phase.transition('draining');
    clearInterval(this.#tick);
    while (this.#inflight > 0) await new Promise((r) => setTimeout(r, 5));
    await this.#compaction.stop();
    this.#flushAccess();
    try {
      await this.#storage.close(this.#state, () => this.requestWaiting());
    } finally {
      this.#phase.transition('stopped');
    }
  }
}
