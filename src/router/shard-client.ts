/**
 * @module router/shard-client — the router's handle on the shard workers: starts them, sends
 * typed commands with request ids, caps in-flight requests per shard, times them out, and rebuilds
 * typed errors from the data they send back.
 */
import { backupDataDir, type ShardBackup } from '../data-dir.ts';
import { FlashbulbError } from '../errors/codes.ts';
import { fromWireError } from '../errors/wire.ts';
import { unbatch } from '../protocol/batch-post.ts';
import type {
  ShardEvent,
  ShardInput,
  ShardMethod,
  ShardOutput,
  ShardReply,
  ShardRequest,
  ShardWorkerData,
} from '../protocol/shard.ts';
import type { CallOptions, ShardRouter } from './router.ts';
import { shardFor } from './shard-map.ts';
import {
  crashReason,
  secondsToRestart,
  ShardHandle,
  type Down,
  type WorkerRun,
} from './shard-handle.ts';
import { tracer, type Took } from '../tracing/index.ts';
import { SHUTDOWN_DEADLINE_MS, startShardWorker, stopRun } from './shard-worker.ts';

/** A shard's backup writes its whole state: far longer than any request may take. */
const SHARD_BACKUP_TIMEOUT_MS = 30 * 60_000;

export interface ShardPoolOptions {
  /** The data directory the shards' folders are in (backup copies its description and key file). */
  dataDir: string;
  shards: readonly Omit<ShardWorkerData, never>[];
  maxInflight: number;
  /** In-flight requests one workspace may hold on its shard (default: maxInflight). */
  maxInflightPerWorkspace?: number;
  timeoutMs: number;
  onEvent?: (event: ShardEvent) => void;
  /**
   * A shard whose log failed is restarted from its files this long after (default 2 s), then after
   * twice as long each time that fails, up to 60 s (or this, when longer): once the disk has room
   * again it serves without a restart of the server.
   */
  restartDelayMs?: number;
  /** A shard was restarted from its files after its log failed or it crashed (what it held in memory is gone: open subscriptions, for one). */
  onRestarted?: (shard: number) => void;
  /** A shard's worker ended on its own (an uncaught error, its heap full); it is restarted from its files. */
  onCrashed?: (shard: number, why: string, restartInMs: number) => void;
  /** Caps each shard's JavaScript heap (V8's old generation), in MB; absent: V8's own limit. */
  heapMb?: number;
  /** The worker's entry, relative to src/ (default `shard/worker`; tests start one they can make crash). */
  workerEntry?: string;
  /** Where a shard's lifecycle logs its moves (a restart beginning; router/shard-handle); default stderr. */
  log?: (line: string) => void;
}

/** A shard that served this long since its restart before it went down again starts over at the first delay. */
const RESTART_RESET_MS = 10 * 60_000;

export class ShardPool implements ShardRouter {
  readonly #handles: ShardHandle[];
  readonly #opts: ShardPoolOptions;
  #nextId = 1;
  #stopping = false;
  /** Restarts waiting for their time, and those under way (shutdown waits for them). */
  readonly #restartTimers = new Set<NodeJS.Timeout>();
  readonly #restarting = new Set<Promise<void>>();

  private constructor(handles: ShardHandle[], opts: ShardPoolOptions) {
    this.#handles = handles;
    this.#opts = opts;
  }

  /** Starts every shard and resolves when all have recovered; rejects with the first fatal error. */
  static async start(opts: ShardPoolOptions): Promise<ShardPool> {
    const log = opts.log ?? ((line: string) => console.error(line));
    const handles = opts.shards.map(
      (data, i) => new ShardHandle(i, startShardWorker(data, opts), log),
    );
    const pool = new ShardPool(handles, opts);
    await Promise.all(handles.map((h, i) => pool.#wire(h, i)));
    return pool;
  }

  get size(): number {
    return this.#handles.length;
  }

  /** Listens to the handle's worker now; resolves once it has recovered, rejects when it cannot. */
  #wire(h: ShardHandle, index: number): Promise<void> {
    const run = h.run;
    const { worker } = run;
    return new Promise((resolve, reject) => {
      worker.on('message', (data: ShardReply | ShardEvent | ShardReply[]) => {
        h.lastHeardAt = performance.now();
        if (Array.isArray(data))
          return void unbatch(data).forEach((r) => {
            this.#settle(h, r);
          });
        const msg = data;
        if (msg.kind === 'reply') return this.#settle(h, msg);
        if (msg.kind === 'ready') {
          h.ready();
          resolve();
        } else if (msg.kind === 'fatal' && h.recovering)
          reject(new Error(`shard ${index}: ${msg.message}`));
        else if (msg.kind === 'storage-failed')
          this.#wentDown(h, index, { cause: 'storage', why: msg.message });
        else if (msg.kind === 'stopped' && msg.error !== undefined) run.stopError = msg.error;
        this.#opts.onEvent?.(msg);
      });
      // A message this thread cannot deserialise names no request; the shard's own guards make
      // this unreachable, so it is only logged (the request it answered times out).
      worker.on('messageerror', (err) =>
        console.error(`shard ${index}: undecodable message:`, err),
      );
      worker.on('error', (err) => {
        run.crashError = crashReason(err, this.#opts.heapMb);
        if (h.recovering) reject(new Error(run.crashError));
      });
      worker.on('exit', (code) => this.#exited(h, run, index, code, reject));
    });
  }

  #exited(
    h: ShardHandle,
    run: WorkerRun,
    index: number,
    code: number,
    reject: (err: Error) => void,
  ): void {
    run.exited = true;
    if (run.stopping !== null || this.#stopping) {
      reject(new Error(`shard ${index} was stopped while it recovered`));
      return this.#failAll(h, `shard ${index} is not running`);
    }
    if (h.recovering)
      return reject(
        new Error(run.crashError ?? `shard ${index} exited with code ${code} during start-up`),
      );
    // It ended on its own: what it had acknowledged is in its log, and it is started again on its files.
    const why = run.crashError ?? `its worker exited with code ${code}`;
    this.#wentDown(h, index, { cause: 'crash', why });
    const message = `shard ${index} crashed (${why}) with this request in flight: a write may or may not have been applied`;
    this.#failAll(h, message, secondsToRestart(h, performance.now()));
  }

  /** Its log failed or its worker crashed: a restart is scheduled (nothing when it is down already, or stopping). */
  #wentDown(h: ShardHandle, index: number, down: Down): void {
    if (!h.wentDown(down)) return;
    if (performance.now() - h.run.startedAt > RESTART_RESET_MS) h.restarts = 0;
    const delay = this.#scheduleRestart(h, index);
    if (down.cause === 'crash') this.#opts.onCrashed?.(index, down.why, delay);
  }

  /** Restarts shard `index` after the wait for its `restarts`-th restart in a row; returns the wait. */
  #scheduleRestart(h: ShardHandle, index: number): number {
    const first = this.#opts.restartDelayMs ?? 2_000;
    const delay = Math.min(first * 2 ** Math.min(h.restarts, 16), Math.max(first, 60_000));
    h.restartAt = performance.now() + delay;
    if (this.#stopping) return delay;
    const timer = setTimeout(() => {
      this.#restartTimers.delete(timer);
      const run = this.#restart(h, index).finally(() => this.#restarting.delete(run));
      this.#restarting.add(run);
    }, delay);
    timer.unref();
    this.#restartTimers.add(timer);
    return delay;
  }

  /**
   * Stops a shard whose log failed (it writes no final snapshot), or one that crashed, and starts
   * it again on its files, as a restart of the server would: the acknowledged writes come back,
   * one the log refused does not. When the new one fails too (the disk is still full, its heap
   * fills again while it recovers), it is tried again later.
   */
  async #restart(h: ShardHandle, index: number): Promise<void> {
    const data = this.#opts.shards[index];
    const down = h.down;
    if (this.#stopping || !data || down === null || !h.restarting()) return;
    await this.#stopWorker(h, { deadlineMs: SHUTDOWN_DEADLINE_MS, recovering: false });
    if (this.#stopping) return;
    h.restarts += 1;
    h.attach(startShardWorker(data, this.#opts));
    this.#opts.onRestarted?.(index);
    try {
      await this.#wire(h, index);
    } catch (err) {
      if (this.#stopping) return; // stopped while it recovered
      const after = down.cause === 'storage' ? 'the log failure' : 'the crash';
      console.error(`shard ${index}: restart after ${after} failed: ${(err as Error).message}`);
      if (
        h.wentDown({
          cause: down.cause,
          why: `${down.why}; restart failed: ${(err as Error).message}`,
        })
      )
        this.#scheduleRestart(h, index);
    }
  }

  #settle(h: ShardHandle, msg: ShardReply): void {
    h.lastReplyAt = performance.now();
    const p = h.take(msg.id);
    if (!p) return;
    if (msg.ok && msg.took) p.took?.(msg.took);
    if (msg.ok && msg.bytes !== undefined) p.bytes?.(msg.bytes);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(fromWireError(msg));
  }

  #failAll(h: ShardHandle, message: string, retryAfterS?: number): void {
    const opts = retryAfterS === undefined ? {} : { retryAfterS };
    for (const id of [...h.pending.keys()])
      h.take(id)?.reject(new FlashbulbError('unavailable', message, opts));
  }

  /** Sends a command to the shard that owns `ws`. */
  call<M extends ShardMethod>(
    ws: string,
    method: M,
    input: ShardInput<M>,
    transfer: ArrayBuffer[] = [],
    opts: CallOptions = {},
  ): Promise<ShardOutput<M>> {
    return this.callShard(shardFor(ws, this.#handles.length), ws, method, input, transfer, opts);
  }

  /** A consistent copy of the data directory into `to`, each shard copying itself while it serves. */
  backup(to: string): Promise<ShardBackup[]> {
    return backupDataDir(this.#opts.dataDir, to, {
      shards: this.#handles.length,
      copyShard: (shard, dir) =>
        this.callShard(shard, '', 'backup', { dir }, [], { timeoutMs: SHARD_BACKUP_TIMEOUT_MS }),
    });
  }

  callShard<M extends ShardMethod>(
    shard: number,
    ws: string,
    method: M,
    input: ShardInput<M>,
    transfer: ArrayBuffer[] = [],
    opts: { timeoutMs?: number } & CallOptions = {},
  ): Promise<ShardOutput<M>> {
    const t = tracer();
    if (!t.enabled) return this.#callShard(shard, ws, method, input, transfer, opts);
    const attributes = { 'flashbulb.shard': shard, 'flashbulb.workspace': ws };
    return t.span(
      `shard ${method}`,
      () =>
        this.#callShard(
          shard,
          ws,
          method,
          input,
          transfer,
          opts,
          t.recorder(`shard ${method} (in the shard)`, attributes),
        ),
      { attributes },
    );
  }

  #callShard<M extends ShardMethod>(
    shard: number,
    ws: string,
    method: M,
    input: ShardInput<M>,
    transfer: ArrayBuffer[] = [],
    opts: { timeoutMs?: number } & CallOptions,
    took?: (took: Took) => void,
  ): Promise<ShardOutput<M>> {
    const timeoutMs = opts.timeoutMs ?? this.#opts.timeoutMs;
    const h = this.#handles[shard];
    if (!h)
      return Promise.reject(new FlashbulbError('unavailable', `shard ${shard} is not available`));
    const refused = h.refusal(ws, {
      maxInflight: this.#opts.maxInflight,
      perWorkspace: this.#opts.maxInflightPerWorkspace ?? this.#opts.maxInflight,
    });
    if (refused) return Promise.reject(refused);
    const id = this.#nextId++;
    const req: ShardRequest<M> = {
      kind: 'request',
      id,
      method,
      ws,
      input,
      ...(took ? { trace: true as const } : {}),
      ...(opts.maxReplyBytes === undefined ? {} : { maxReplyBytes: opts.maxReplyBytes }),
      ...(opts.parkBelow === undefined ? {} : { parkBelow: opts.parkBelow }),
      ...(opts.claim === undefined ? {} : { claim: opts.claim }),
    };
    return new Promise<ShardOutput<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        h.take(id);
        reject(
          new FlashbulbError(
            'unavailable',
            `shard ${shard} did not answer ${method} in ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      h.add(id, {
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
        ws,
        sentAt: performance.now(),
        ...(took ? { took } : {}),
        ...(opts.replyBytes ? { bytes: opts.replyBytes } : {}),
      });
      h.run.requests.post(req, transfer, (err) => {
        h.take(id);
        reject(
          new FlashbulbError(
            'internal_error',
            `the ${method} request could not be sent to shard ${shard}: ${err.message}`,
          ),
        );
      });
    });
  }

  /** Runs `method` on every shard (for workspace-independent stats). */
  broadcast<M extends ShardMethod>(method: M, input: ShardInput<M>): Promise<ShardOutput<M>[]> {
    return Promise.all(this.#handles.map((_, i) => this.callShard(i, '', method, input)));
  }

  /** Shards that cannot answer now, with the reason (empty when all can). */
  problems(): string[] {
    const now = performance.now();
    return this.#handles.flatMap((h, i) => {
      const problem = h.problem(now, this.#opts.maxInflight);
      return problem === null ? [] : [`shard ${i} ${problem}`];
    });
  }

  inflight(): number {
    return this.#handles.reduce((n, h) => n + h.pending.size, 0);
  }

  /**
   * Asks every shard to drain, snapshot and stop; resolves when all have exited. Rejects, naming
   * the shards, when a final snapshot failed or a shard did not exit within `deadlineMs` (it is
   * then terminated); the log still holds every acknowledged write either way.
   */
  async shutdown(deadlineMs = SHUTDOWN_DEADLINE_MS): Promise<void> {
    this.#stopping = true;
    for (const t of this.#restartTimers) clearTimeout(t);
    const failures = await Promise.all(
      this.#handles.map((h, i) =>
        this.#stop(h, deadlineMs).then((problem) =>
          problem === null ? null : `shard ${i}: ${problem}`,
        ),
      ),
    );
    // A restart under way stops once what it waits on has (it starts nothing new while stopping).
    await Promise.all(this.#restarting);
    const failed = failures.filter((f): f is string => f !== null);
    if (failed.length > 0)
      throw new Error(`the final snapshot was not written (${failed.join('; ')})`);
  }

  /** Stops the shard for good (the pool's shutdown). */
  async #stop(h: ShardHandle, deadlineMs: number): Promise<string | null> {
    const recovering = h.recovering;
    h.stopping();
    const problem = await this.#stopWorker(h, { deadlineMs, recovering });
    h.stopped();
    return problem;
  }

  /**
   * Stops the handle's worker now (asked once): resolves when it has exited, to why its final
   * snapshot failed. One still `recovering` has served nothing and is terminated.
   */
  #stopWorker(
    h: ShardHandle,
    o: { deadlineMs: number; recovering: boolean },
  ): Promise<string | null> {
    const run = h.run;
    run.stopping ??= stopRun(h, run, o);
    return run.stopping;
  }
}
