/**
 * @module embedding/pool — the embedding pool: a Piscina pool running the model off the router
 * thread, an LRU cache keyed by the text's hash, and dynamic micro-batching: while a batch is
 * being embedded, new texts queue up and go together in the next one (length-sorted inside the
 * model). The queue is bounded; past it, callers get `unavailable` instead of unbounded memory.
 * With `idleMs`, workers start when there is something to embed (the model is loaded first, 0.3–1 s)
 * and a worker that has embedded nothing for `idleMs` exits, and the model's memory with it.
 */
import { createHash } from 'node:crypto';
import { Piscina } from 'piscina';
import { FlashbulbError } from '../errors/codes.ts';
import { embeddingBatchSize, embeddingDuration, embeddingQueue } from '../metrics/index.ts';
import { releaseFreedMemory } from '../threads/release-memory.ts';
import { forkEntry, taskModule } from '../threads/worker-url.ts';
import type { Embedder } from './embedder.ts';
import { Lru } from './lru.ts';

export interface PoolOptions {
  modelDir: string;
  /** Worker threads running the model (onnxruntime is loaded once per thread). */
  workers: number;
  /** ONNX Runtime intra-op threads per worker. */
  threads: number;
  /** Whether idle intra-op threads spin (see OnnxEmbedderOptions.spin); default false. */
  spin?: boolean;
  maxBatch: number;
  cacheSize: number;
  maxQueued: number;
  /** A worker idle this long exits (its model freed) until the next embedding; 0: never. */
  idleMs?: number;
}

interface Waiting {
  text: string;
  key: string;
  settle: Array<{ resolve: (v: Float32Array) => void; reject: (e: Error) => void }>;
}

export async function createEmbeddingPool(opts: PoolOptions): Promise<Embedder> {
  const idleMs = opts.idleMs ?? 0;
  // The model is loaded once at start either way, so a bad model fails the start. With an idle
  // timeout that load happens in a child process that exits at once (embedding/probe-main), and
  // the serving workers start when there is work.
  const piscina = workers(opts, idleMs > 0 ? { min: 0, idleMs } : { min: opts.workers, idleMs: 0 });
  try {
    const info =
      idleMs > 0
        ? await probeModel(opts.modelDir)
        : ((await piscina.run({ info: true })) as ModelInfo);
    return new EmbeddingPool(piscina, info, opts);
  } catch (err) {
    await piscina.destroy();
    throw new Error(
      `cannot load the embedding model from ${opts.modelDir}: ${(err as Error).message}`,
    );
  }
}

interface ModelInfo {
  name: string;
  dim: number;
  /** Texts the model runs together (1 for a dynamically quantised graph: see createOnnxEmbedder). */
  maxBatch: number;
}

/** Loads the model in a child process (embedding/probe-main) and returns what it reported. */
function probeModel(modelDir: string): Promise<ModelInfo> {
  return new Promise((resolve, reject) => {
    const child = forkEntry('embedding/probe-main', [modelDir]);
    let reply: ModelInfo | { error: string } | null = null;
    child.on('message', (m) => (reply = m as ModelInfo | { error: string }));
    child.on('error', reject);
    child.on('exit', (code) => {
      const r = reply as ModelInfo | { error: string } | null;
      if (r !== null && 'error' in r) reject(new Error(r.error));
      else if (r !== null) resolve(r);
      else reject(new Error(`the model check exited with code ${code} and no answer`));
    });
  });
}

/**
 * How long after an idle worker is told to exit the freed memory is handed back: its thread
 * frees the model as it ends, a little after piscina's `workerDestroy`.
 */
const RELEASE_AFTER_EXIT_MS = 1000;

/**
 * Texts a worker holds at once: one running, one waiting in its thread, so it starts the next as
 * soon as the one before is done instead of idling while the result goes to this thread and the
 * next text comes back (the model runs one text at a time, synchronously, so they never overlap).
 */
const TASKS_PER_WORKER = 2;

function workers(opts: PoolOptions, life: { min: number; idleMs: number }): Piscina {
  const task = taskModule('embedding/embed-task');
  const pool = new Piscina({
    filename: task.filename,
    minThreads: life.min,
    maxThreads: opts.workers,
    idleTimeout: life.idleMs > 0 ? life.idleMs : Number.POSITIVE_INFINITY,
    atomics: 'disabled',
    concurrentTasksPerWorker: TASKS_PER_WORKER,
    // Piscina's run and wait histograms: nothing reads them, and they cost the router a few µs a text.
    recordTiming: false,
    workerData: {
      ...task.workerData,
      modelDir: opts.modelDir,
      threads: opts.threads,
      spin: opts.spin ?? false,
    },
  });
  // glibc keeps ~30 MB of what the exited thread freed unless told to give it back.
  if (life.idleMs > 0)
    pool.on('workerDestroy', () => setTimeout(releaseFreedMemory, RELEASE_AFTER_EXIT_MS).unref());
  return pool;
}

class EmbeddingPool implements Embedder {
  readonly name: string;
  readonly dim: number;
  readonly #piscina: Piscina;
  readonly #opts: PoolOptions;
  /** Texts sent to a worker at once: a model that runs one text at a time gets one, so queued texts spread over the workers. */
  readonly #batch: number;
  readonly #cache: Lru<string, Float32Array>;
  readonly #queued = new Map<string, Waiting>();
  #inflight = 0;
  #closing = false;
  /** Settled when no batch is running (what close waits for). */
  readonly #idle: Array<() => void> = [];

  constructor(piscina: Piscina, info: ModelInfo, opts: PoolOptions) {
    this.#piscina = piscina;
    this.name = info.name;
    this.dim = info.dim;
    this.#opts = opts;
    this.#batch = Math.max(1, Math.min(opts.maxBatch, info.maxBatch));
    this.#cache = new Lru(opts.cacheSize);
  }

  async embed(texts: readonly string[]): Promise<Float32Array> {
    const rows = await Promise.all(texts.map((t) => this.#one(t)));
    const out = new Float32Array(texts.length * this.dim);
    rows.forEach((r, i) => {
      out.set(r, i * this.dim);
    });
    return out;
  }

  #one(text: string): Promise<Float32Array> {
    const key = createHash('sha1').update(text).digest('base64');
    const hit = this.#cache.get(key);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve, reject) => {
      if (this.#closing) {
        reject(new FlashbulbError('unavailable', 'the server is shutting down'));
        return;
      }
      const waiting = this.#queued.get(key);
      if (waiting) {
        waiting.settle.push({ resolve, reject });
        return;
      }
      if (this.#queued.size >= this.#opts.maxQueued) {
        reject(new FlashbulbError('unavailable', 'the embedding queue is full; retry shortly'));
        return;
      }
      this.#queued.set(key, { text, key, settle: [{ resolve, reject }] });
      this.#pump();
    });
  }

  #pump(): void {
    this.#drain();
    embeddingQueue.set(this.#queued.size);
  }

  #drain(): void {
    while (this.#inflight < this.#opts.workers * TASKS_PER_WORKER && this.#queued.size > 0) {
      const batch: Waiting[] = [];
      for (const w of this.#queued.values()) {
        batch.push(w);
        if (batch.length === this.#batch) break;
      }
      for (const w of batch) this.#queued.delete(w.key);
      this.#inflight += 1;
      void this.#run(batch).finally(() => {
        this.#inflight -= 1;
        if (this.#inflight === 0) for (const f of this.#idle.splice(0)) f();
        this.#pump();
      });
    }
  }

  async #run(batch: Waiting[]): Promise<void> {
    const start = performance.now();
    try {
      const out = (await this.#piscina.run({ texts: batch.map((w) => w.text) })) as Float32Array;
      embeddingDuration.observe((performance.now() - start) / 1000);
      embeddingBatchSize.observe(batch.length);
      batch.forEach((w, i) => {
        const row = out.slice(i * this.dim, (i + 1) * this.dim);
        this.#cache.set(w.key, row);
        for (const s of w.settle) s.resolve(row);
      });
    } catch (err) {
      const e = new FlashbulbError('unavailable', `embedding failed: ${(err as Error).message}`);
      for (const w of batch) for (const s of w.settle) s.reject(e);
    }
  }

  /**
   * Answers the texts still waiting (`unavailable`), lets the batches already running finish (a
   * worker ended in the middle of a model run aborts the whole process: ONNX Runtime's native
   * error escapes as "terminate called after throwing an instance of 'Napi::Error'"), then
   * ends the workers.
   */
  async close(): Promise<void> {
    this.#closing = true;
    const stopped = new FlashbulbError('unavailable', 'the server is shutting down');
    for (const w of this.#queued.values()) for (const s of w.settle) s.reject(stopped);
    this.#queued.clear();
    embeddingQueue.set(0);
    if (this.#inflight > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    await this.#piscina.destroy();
  }
}
