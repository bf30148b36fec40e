/**
 * @module router/shard-client — the router's handle on the shard workers: starts them, sends
 * typed commands with request ids, caps in-flight requests per shard, times them out, and rebuilds
 * typed errors from the data they send back.
 */
import type { Worker } from 'node:worker_threads';
import { FlashbulbError } from '../errors/codes.ts';
import { fromWireError } from '../errors/wire.ts';
import type {
  ShardEvent,
  ShardInput,
  ShardMethod,
  ShardOutput,
  ShardReply,
  ShardRequest,
  ShardWorkerData,
} from '../shard/protocol.ts';
import type { ShardRouter } from './router.ts';
import { shardFor } from './shard-map.ts';
import { startWorker } from './worker-url.ts';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export interface ShardPoolOptions {
  shards: readonly Omit<ShardWorkerData, never>[];
  maxInflight: number;
  timeoutMs: number;
  onEvent?: (event: ShardEvent) => void;
}

class ShardHandle {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending>();
  ready = false;
  stopped = false;

  constructor(worker: Worker) {
    this.worker = worker;
  }
}

export class ShardPool implements ShardRouter {
  readonly #handles: ShardHandle[];
  readonly #opts: ShardPoolOptions;
  #nextId = 1;

  private constructor(handles: ShardHandle[], opts: ShardPoolOptions) {
    this.#handles = handles;
    this.#opts = opts;
  }

  /** Starts every shard and resolves when all have recovered; rejects with the first fatal error. */
  static async start(opts: ShardPoolOptions): Promise<ShardPool> {
    const handles = opts.shards.map((data) => new ShardHandle(startWorker('shard/worker', { workerData: data })));
    const pool = new ShardPool(handles, opts);
    await Promise.all(handles.map((h, i) => pool.#wire(h, i)));
    return pool;
  }

  get size(): number {
    return this.#handles.length;
  }

  #wire(h: ShardHandle, index: number): Promise<void> {
    return new Promise((resolve, reject) => {
      h.worker.on('message', (msg: ShardReply | ShardEvent) => {
        if (msg.kind === 'reply') return this.#settle(h, msg);
        if (msg.kind === 'ready') {
          h.ready = true;
          resolve();
        } else if (msg.kind === 'fatal' && !h.ready) reject(new Error(`shard ${index}: ${msg.message}`));
        else if (msg.kind === 'stopped') h.stopped = true;
        this.#opts.onEvent?.(msg);
      });
      h.worker.on('error', (err) => {
        if (!h.ready) reject(err);
        this.#failAll(h, `shard ${index} crashed: ${err.message}`);
      });
      h.worker.on('exit', (code) => {
        if (!h.ready) reject(new Error(`shard ${index} exited with code ${code} during start-up`));
        h.ready = false;
        this.#failAll(h, `shard ${index} is not running`);
      });
    });
  }

  #settle(h: ShardHandle, msg: ShardReply): void {
    const p = h.pending.get(msg.id);
    if (!p) return;
    h.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(fromWireError(msg));
  }

  #failAll(h: ShardHandle, message: string): void {
    for (const [id, p] of h.pending) {
      clearTimeout(p.timer);
      p.reject(new FlashbulbError('unavailable', message));
      h.pending.delete(id);
    }
  }

  /** Sends a command to the shard that owns `ws`. */
  call<M extends ShardMethod>(ws: string, method: M, input: ShardInput<M>, transfer: ArrayBuffer[] = []): Promise<ShardOutput<M>> {
    return this.callShard(shardFor(ws, this.#handles.length), ws, method, input, transfer);
  }

  callShard<M extends ShardMethod>(
    shard: number,
    ws: string,
    method: M,
    input: ShardInput<M>,
    transfer: ArrayBuffer[] = [],
  ): Promise<ShardOutput<M>> {
    const h = this.#handles[shard];
    if (!h?.ready) return Promise.reject(new FlashbulbError('unavailable', `shard ${shard} is not available`));
    if (h.pending.size >= this.#opts.maxInflight) {
      return Promise.reject(new FlashbulbError('unavailable', `shard ${shard} is overloaded; retry shortly`));
    }
    const id = this.#nextId++;
    const req: ShardRequest<M> = { kind: 'request', id, method, ws, input };
    return new Promise<ShardOutput<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        h.pending.delete(id);
        reject(new FlashbulbError('unavailable', `shard ${shard} did not answer ${method} in ${this.#opts.timeoutMs} ms`));
      }, this.#opts.timeoutMs);
      h.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      h.worker.postMessage(req, transfer);
    });
  }

  /** Runs `method` on every shard (for workspace-independent stats). */
  broadcast<M extends ShardMethod>(method: M, input: ShardInput<M>): Promise<ShardOutput<M>[]> {
    return Promise.all(this.#handles.map((_, i) => this.callShard(i, '', method, input)));
  }

  inflight(): number {
    return this.#handles.reduce((n, h) => n + h.pending.size, 0);
  }

  /** Asks every shard to drain, snapshot and stop; resolves when all have exited. */
  async shutdown(): Promise<void> {
    await Promise.all(
      this.#handles.map(
        (h) =>
          new Promise<void>((resolve) => {
            if (!h.ready) return resolve();
            h.worker.once('exit', () => resolve());
            h.worker.postMessage({ kind: 'shutdown' });
          }),
      ),
    );
  }
}
