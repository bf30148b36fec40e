/**
 * @module shard/shard — one shard, the single-threaded owner of its workspaces' state, log and snapshots
 * (starting → replaying → ready ⇄ snapshotting → draining → stopped), its background work (indexing,
 * expiry, compaction) and backup; which op answers each method is shard/dispatch. */
import { mkdirSync } from 'node:fs';
import { FlashbulbError } from '../errors/codes.ts';
import { IdGenerator } from '../model/ids.ts';
import { isExpired, type MemoryRecord } from '../model/memory.ts';
import { wallClock, type Clock } from '../model/clock.ts';
import { removeFiles, seqName } from './persist/fsutil.ts';
import { encodeRecord, type LiveRecord } from './store/records.ts';
import { listSeqs, recoverShard, type Recovered } from './persist/recovery.ts';
import { writeSnapshot } from './persist/snapshot.ts';
import { writeBackup } from './persist/backup.ts';
import { deleteGraphsBefore, loadGraphs, saveGraphs } from './persist/graph-files.ts';
import { Wal } from './persist/wal.ts';
import { applyLive, type ShardState } from './store/apply.ts';
import type { OpContext } from './ops/context.ts';
import { forgetRecords } from './ops/forget.ts';
import type { BackupResult, ShardEvent, ShardInput, ShardMethod, ShardOutput, ShardStats, ShardWorkerData } from '../protocol/shard.ts';
import { Subscriptions } from './subscriptions.ts';
import { AccessLog } from './access-log.ts';
import { ContradictionChecker } from './contradictions.ts';
import { CommitBarrier, storageFailure } from './commit-barrier.ts';
import type { ExternalLog, ShardBackend } from './external-log.ts';
import { READS_COMMITTED, shardHandlers, type Handler, type Handlers } from './dispatch.ts';
import { ErasureRequests, ErasureTimer, eraseInPlace } from './erasure.ts';
import { ContentIndex } from './persist/content-index.ts';
import { Indexer, PENDING_URGENT } from './indexer.ts';

export class Shard {
  readonly #opts: ShardWorkerData;
  readonly #emit: (e: ShardEvent) => void;
  readonly #subs = new Subscriptions();
  readonly #state: ShardState;
  /** The local log, or null when the log is external (then there are no local snapshots). */
  readonly #wal: Wal | null;
  readonly #log: Pick<ExternalLog, 'failed' | 'append'>;
  readonly #external: ExternalLog | null;
  readonly #ids = new IdGenerator();
  readonly #ctx: OpContext;
  readonly #clock: Clock;
  readonly #handlers: Handlers;
  readonly recovered: Recovered;
  #snapshotting: Promise<void> | null = null;
  #snapshotAgain = false;
  #lastSnapshotAt = Date.now();
  #dirtySinceSnapshot = false;
  /** Forgotten content must leave every file (shard/erasure): when, what, and where it lies on disk. */
  readonly #erasure: ErasureTimer;
  readonly #erasureRequests = new ErasureRequests();
  readonly #content = new ContentIndex();
  /** Whether #content covers every file (not when a crash left files a snapshot should have deleted). */
  #contentCovered = false;
  #tick: NodeJS.Timeout;
  #inflight = 0;
  readonly #barrier = new CommitBarrier();
  #draining = false;
  readonly #accesses = new AccessLog();
  readonly #checker: ContradictionChecker;
  readonly #indexer: Indexer;
  readonly syncMs: number[] = [];
  readonly snapshotMs: number[] = [];
  /** Memories forgotten on expiry since the last `takeExpired()` (for metrics). */
  #expired = 0;
  /** Set by the worker: true when a request is waiting (served once the caller yields), so long work makes way at once. */
  requestWaiting: () => boolean = () => false;

  /** `clock`: "now" for expiry, time scopes, windows and timestamps, contradiction edges and candidates included (snapshots and erasure keep real time). */
  constructor(opts: ShardWorkerData, emit: (e: ShardEvent) => void = () => {}, backend?: ShardBackend, clock: Clock = wallClock) {
    this.#opts = opts;
    this.#clock = clock;
    this.#erasure = new ErasureTimer(opts.eraseWithinS, () => {
      void this.#erase().catch((err: unknown) => console.error(`shard ${opts.shard}: erasure failed:`, err));
    });
    this.#emit = emit;
    if (backend) {
      this.recovered = backend.recovered;
      this.#wal = null;
      this.#log = backend.log;
      this.#external = backend.log;
    } else {
      mkdirSync(opts.dir, { recursive: true });
      const onFrame = this.#content.add.bind(this.#content);
      this.recovered = recoverShard(opts.dir, { afterSnapshot: (state, walSeq) => loadGraphs(opts.dir, walSeq, state), onFrame });
      this.#contentCovered = !this.recovered.staleFiles;
      const onFail = (err: Error): void => this.#storageFailed(err);
      this.#wal = new Wal({ dir: opts.dir, seq: this.recovered.nextWalSeq, durability: opts.durability, onSync: (ms) => this.syncMs.push(ms), onFrame, onFail });
      this.#log = this.#wal;
      this.#external = null;
    }
    this.#state = this.recovered.state;
    this.#indexer = new Indexer(this.#state, { stopped: () => this.#draining, busy: () => this.#inflight > 0, requestWaiting: () => this.requestWaiting() });
    for (const ws of this.#state.workspaces.values()) for (const id of ws.memories.keys()) this.#ids.observe(id);
    this.#checker = new ContradictionChecker(this.#state, {
      commit: (records) => this.#commit(records),
      stopping: () => this.#draining || this.#log.failed !== null,
      wait: () => this.#indexer.backlog() >= PENDING_URGENT,
      clock,
      requestWaiting: () => this.requestWaiting(),
    });
    this.#ctx = {
      state: this.#state,
      ids: this.#ids,
      nowUs: () => clock.nowUs(),
      commit: (records, opts) => this.#commit(records, opts),
      requestErasure: (records) => this.#requestErasure(records),
      touch: (ws, memories) => this.#accesses.touch(ws, memories, clock.nowUs()),
    };
    this.#handlers = shardHandlers({
      subs: this.#subs,
      emit: (e) => this.#emit(e),
      dropWorkspace: (ws) => this.#dropWorkspace(ws),
      stats: () => this.stats(),
      backup: (dir) => this.backup(dir),
      snapshot: () => this.snapshot(),
    });
    // Expired before the crash (or while the server was down): forgotten before the first request.
    this.#expireDue(null);
    this.#tick = setInterval(() => {
      this.#expireDue(null);
      this.#flushAccess();
      this.#maybeSnapshot();
    }, 1000);
    this.#indexer.schedule();
    // A crash can leave replayed log (perhaps holding forgotten content) or files a snapshot
    // should have deleted: compact soon, so erasure holds across crashes too.
    if (this.recovered.replayedRecords > 0 || this.recovered.staleFiles) this.#requestErasure('all');
  }

  /** Background work waiting: memories to check for contradictions, vectors to index. */
  backlogs(): { checks: number; index: number } {
    return { checks: this.#checker.backlog, index: this.#indexer.pending() };
  }

  /** Contradictions found since the last call (for metrics). */
  takeContradictions(): { found: number; skipped: number } {
    return this.#checker.take();
  }

  get memoryCount(): number {
    return this.#state.memoryCount();
  }

  async handle<M extends ShardMethod>(method: M, ws: string, input: ShardInput<M>): Promise<ShardOutput<M>> {
    if (this.#draining) throw new FlashbulbError('unavailable', 'shard is shutting down');
    if (this.#log.failed) throw storageFailure(this.#log.failed);
    const handler = this.#handlers[method] as Handler<M> | undefined;
    if (!handler) throw new FlashbulbError('internal_error', `unknown shard method ${String(method)}`);
    this.#inflight += 1;
    try {
      // Expired memories leave the state before any operation reads it, so no read, recall,
      // prime, graph walk or subscription match can return one.
      this.#expireDue(ws);
      if (READS_COMMITTED[method]) await this.#barrier.settled(ws, this.#log);
      return await handler(this.#ctx, ws, input);
    } catch (err) {
      // The write whose append failed (and any waiting behind it) hears why, as every later request does.
      const failed = this.#log.failed as Error | null; // set meanwhile, though it was not on entry
      if (failed && !(err instanceof FlashbulbError)) throw storageFailure(failed);
      throw err;
    } finally {
      this.#inflight -= 1;
    }
  }

  /** Memories forgotten on expiry since the last call (for metrics). */
  takeExpired(): number {
    const n = this.#expired;
    this.#expired = 0;
    return n;
  }

  /**
   * Forgets the memories of `ws` (null: of every workspace) whose expiry has come, with forget's
   * cascade, tombstones and erasure. The records apply to the state at once; the log append
   * completes in the background (a crash before it lands is covered by the sweep at start-up).
   */
  #expireDue(ws: string | null): void {
    if (this.#log.failed) return; // nothing more can be written (#storageFailed)
    const now = this.#clock.nowUs();
    const workspaces = ws === null ? [...this.#state.workspaces.values()] : [this.#state.workspaces.get(ws)];
    for (const w of workspaces) {
      if (!w || w.expiring.next === null || w.expiring.next > now) continue;
      const due = w.takeExpired(now);
      if (due.length === 0) continue;
      const { records, all } = forgetRecords(w, due, { expired: true }, now);
      this.#expired += all;
      this.#commit(records).catch((err: unknown) => console.error(`shard ${this.#opts.shard}: expiry failed:`, err));
      this.#requestErasure(records);
    }
  }

  stats(): ShardStats {
    let edgesCount = 0;
    for (const w of this.#state.workspaces.values()) edgesCount += w.graph.edgeCount;
    return { memories: this.memoryCount, workspaces: this.#state.workspaces.size, edges: edgesCount, walSeq: this.#wal?.seq ?? 0 };
  }

  async #commit(records: LiveRecord[], opts: { quiet?: boolean } = {}): Promise<void> {
    for (const r of records) applyLive(this.#state, r);
    this.#dirtySinceSnapshot = true;
    this.#indexer.schedule();
    const appended = this.#log.append(records.map(encodeRecord));
    this.#barrier.track(records.map((r) => r.ws), appended);
    await appended;
    if (opts.quiet) return;
    this.#notifySubscribers(records);
    if (this.#opts.contradictions) this.#checker.enqueue(records);
  }

  /** Durable new or changed memories are offered to the workspace's open subscriptions. */
  #notifySubscribers(records: readonly LiveRecord[]): void {
    if (!this.#subs.active) return;
    const byWs = new Map<string, MemoryRecord[]>();
    for (const r of records) {
      if ((r.t !== 'put' && r.t !== 'unsource') || r.m.supersededBy !== null) continue;
      const m = this.#state.workspaces.get(r.ws)?.memories.get(r.m.id);
      if (m && !isExpired(m, this.#clock.nowUs())) byWs.set(r.ws, [...(byWs.get(r.ws) ?? []), m]);
    }
    for (const [ws, memories] of byWs) {
      const w = this.#state.workspaces.get(ws);
      const pushes = w ? this.#subs.matchWrites(w, memories, this.#clock.nowUs()) : [];
      if (pushes.length > 0) this.#emit({ kind: 'push', ws, pushes });
    }
  }

  #flushAccess(): void {
    const records = this.#accesses.drain(this.#state);
    if (records.length === 0) return;
    this.#dirtySinceSnapshot = true;
    this.#log.append(records).catch((err: unknown) => console.error(`shard ${this.#opts.shard}: access log failed:`, err));
  }

  async #dropWorkspace(ws: string): Promise<{ memories: number }> {
    const memories = this.#state.workspaces.get(ws)?.memories.size ?? 0;
    await this.#commit([{ t: 'drop', ws }]);
    this.#requestErasure('all');
    return { memories };
  }

  #requestErasure(records: readonly LiveRecord[] | 'all'): void {
    this.#erasureRequests.add(records);
    this.#erasure.request();
  }

  /** Erases what was forgotten since the last erasure: in place when every file is indexed, else by a whole snapshot; not once shutting down (the final snapshot erases). */
  async #erase(): Promise<void> {
    const plan = this.#erasureRequests.take();
    const wal = this.#wal;
    if (this.#draining) return; // the final snapshot erases
    if (plan.full || !wal || !this.#contentCovered) return this.snapshot();
    const where = { dir: this.#opts.dir, wal, state: this.#state, content: this.#content };
    await this.#exclusive(async () => (this.#draining ? 0 : eraseInPlace(where, plan))).catch((err: unknown) => {
      console.error(`shard ${this.#opts.shard}: erasure in place failed, rewriting the store instead:`, err);
      this.#requestErasure('all');
    });
  }

  /**
   * The local log failed (a full disk, an I/O error): the shard now refuses every request (`handle`)
   * and writes no snapshot, since its memory may hold writes the log never took. What is on disk,
   * every acknowledged write, is what a restart recovers: the router restarts the shard
   * (router/shard-client), which it tells here, as readiness does.
   */
  #storageFailed(err: Error): void {
    console.error(`shard ${this.#opts.shard}: ${err.message}. The shard refuses every request and writes no snapshot; every acknowledged write is on disk. It is restarted from its files every few seconds until its log works again (free the disk).`);
    this.#emit({ kind: 'storage-failed', shard: this.#opts.shard, message: err.message });
  }

  #maybeSnapshot(): void {
    if (this.#snapshotting || !this.#dirtySinceSnapshot || this.#wal?.failed) return;
    const due = Date.now() - this.#lastSnapshotAt >= this.#opts.snapshotIntervalS * 1000;
    if (due || (this.#wal?.segmentBytes ?? 0) >= this.#opts.snapshotWalBytes) this.#snapshotInBackground('snapshot');
  }

  /** A snapshot nobody awaits: its failure is logged (an unhandled rejection would end the process). */
  #snapshotInBackground(what: string): void {
    void this.snapshot().catch((err: unknown) => console.error(`shard ${this.#opts.shard}: ${what} failed:`, err));
  }
  /** Rotates the log, writes a snapshot, then deletes the files it covers. */
  snapshot(opts: { final?: boolean } = {}): Promise<void> {
    const wal = this.#wal;
    const external = this.#external;
    if (!wal && !external?.snapshot) return Promise.resolve(); // an external log without snapshots keeps its whole history
    if (wal?.failed) return Promise.reject(new FlashbulbError('unavailable', `no snapshot: ${wal.failed.message} (memory may hold writes the log never took)`));
    if (this.#snapshotting) {
      this.#snapshotAgain = true;
      return this.#snapshotting;
    }
    return this.#hold(wal ? this.#runSnapshot(wal, opts.final ?? false) : this.#runExternalSnapshot(external));
  }

  async #runExternalSnapshot(external: ExternalLog | null): Promise<void> {
    const start = performance.now();
    this.#dirtySinceSnapshot = false;
    this.#lastSnapshotAt = Date.now();
    await external?.snapshot?.(this.#state);
    this.#erasure.lastSnapshotMs = performance.now() - start;
    this.snapshotMs.push(this.#erasure.lastSnapshotMs);
  }

  async #runSnapshot(wal: Wal, final: boolean): Promise<void> {
    const start = performance.now();
    this.#dirtySinceSnapshot = false;
    this.#lastSnapshotAt = Date.now();
    const walSeq = await wal.rotate();
    const name = seqName('snap', walSeq, 'snap');
    const requestWaiting = (): boolean => this.requestWaiting();
    await writeSnapshot(this.#opts.dir, { shard: this.#opts.shard, walSeq, state: this.#state, onFrame: (offset, r) => this.#content.add(name, offset, r), requestWaiting }).catch((err: unknown) => {
      this.#content.dropFile(name);
      throw err;
    });
    await wal.settled();
    if (wal.failed) {
      // The log failed while the snapshot was written: it may hold writes the log never took. The
      // files before it stay, and they hold every acknowledged write.
      this.#content.dropFile(name);
      await removeFiles(this.#opts.dir, [name]);
      throw new Error(`snapshot ${name} discarded: ${wal.failed.message}`);
    }
    // Graphs are saved only when nothing can change under them (the final snapshot).
    if (final) saveGraphs(this.#opts.dir, walSeq, this.#state);
    // Off the shard's thread (see removeFiles); snapshots, backups and erasures wait for the whole
    // of this one (#hold), so none reads a file while it is being deleted.
    await deleteGraphsBefore(this.#opts.dir, walSeq);
    await wal.deleteBefore(walSeq, listSeqs(this.#opts.dir, 'wal', 'log'));
    await removeFiles(this.#opts.dir, listSeqs(this.#opts.dir, 'snap', 'snap').filter((seq) => seq < walSeq).map((seq) => seqName('snap', seq, 'snap')));
    this.#content.dropBefore(walSeq);
    this.#contentCovered = true;
    this.#erasure.lastSnapshotMs = performance.now() - start;
    this.snapshotMs.push(this.#erasure.lastSnapshotMs);
  }

  /** Writes a consistent copy of the shard into `dir` while it keeps serving (persist/backup). */
  backup(dir: string): Promise<BackupResult> {
    const wal = this.#wal;
    if (wal === null) return Promise.reject(new FlashbulbError('invalid_input', 'this shard logs to JetStream (cluster mode); there is no local log to back up'));
    return this.#exclusive(() => writeBackup(dir, { from: this.#opts.dir, shard: this.#opts.shard, wal, state: this.#state })).catch((err: unknown) => {
      throw err instanceof FlashbulbError ? err : new FlashbulbError('unavailable', `shard ${this.#opts.shard}: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /** Runs `job` in turn with snapshots, backups and erasures (each may delete or rewrite the files another reads). */
  async #exclusive<T>(job: () => Promise<T>): Promise<T> {
    while (this.#snapshotting) await this.#snapshotting;
    return this.#hold(job());
  }

  /** Marks `run` as the snapshot, backup or erasure in progress; a snapshot asked for meanwhile follows it. */
  #hold<T>(run: Promise<T>): Promise<T> {
    this.#snapshotting = run.then(() => {}, () => {}).finally(() => {
      this.#snapshotting = null;
      if (this.#snapshotAgain && !this.#draining) {
        this.#snapshotAgain = false;
        this.#snapshotInBackground('snapshot (again)');
      }
    });
    return run;
  }

  /** Stops taking requests, waits for in-flight ones, writes a final snapshot and closes the log. */
  async shutdown(): Promise<void> {
    this.#draining = true;
    clearInterval(this.#tick);
    this.#erasure.cancel();
    while (this.#inflight > 0) await new Promise((r) => setTimeout(r, 5));
    while (this.#snapshotting) await this.#snapshotting;
    this.#flushAccess();
    if (!this.#wal) return;
    await this.#wal.drain();
    if (this.#wal.failed) {
      await this.#wal.close();
      throw new Error(`no final snapshot, since its log failed (${this.#wal.failed.message}); the log holds every acknowledged write`);
    }
    await this.snapshot({ final: true });
    await this.#wal.close();
  }
}
