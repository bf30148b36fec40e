/**
 * @module embedding/rerank-pool — the reranker's pool: a Piscina pool running the cross-encoder off
 * the router thread (its model loaded in every worker at start, so a bad model fails the start), a
 * recall's candidates cut into batches of at most `batch` pairs, at most `workers` batches running
 * and `maxQueued` recalls waiting, and a deadline per recall: past `timeoutMs`, or with the queue
 * full, or when the model fails, the recall is answered without scores (the unreranked order) and
 * its batches not yet started are dropped.
 */
import { Piscina } from 'piscina';
import { rerankDuration, rerankOutcomes } from '../metrics/index.ts';
import { taskModule } from '../threads/worker-url.ts';

export interface RerankPoolOptions {
  modelDir: string;
  workers: number;
  threads: number;
  /** Pairs per task (and per model run). */
  batch: number;
  maxTokens: number;
  /** Recalls waiting or running at once; past it, `score` answers `busy` at once. */
  maxQueued: number;
  timeoutMs: number;
}

/** The scores of one recall's candidates, or why there are none (then: the unreranked order). */
export type RerankResult =
  | { outcome: 'reranked'; scores: Float32Array }
  | { outcome: 'timeout' | 'busy' | 'failed'; message: string };

export interface Reranker {
  /** The model directory's basename, shown in logs. */
  readonly name: string;
  /** One logit per document for `query` (higher: a better answer). */
  score(query: string, docs: readonly string[]): Promise<RerankResult>;
  close(): Promise<void>;
}

interface Request {
  query: string;
  docs: readonly string[];
  scores: Float32Array;
  /** Batches not yet answered. */
  left: number;
  done: boolean;
  settle: (r: RerankResult) => void;
}

interface Batch {
  req: Request;
  from: number;
  to: number;
}

export async function createRerankPool(opts: RerankPoolOptions): Promise<Reranker> {
  const task = taskModule('embedding/rerank-task');
  const piscina = new Piscina({
    filename: task.filename,
    minThreads: opts.workers,
    maxThreads: opts.workers,
    idleTimeout: Number.POSITIVE_INFINITY,
    atomics: 'disabled',
    recordTiming: false,
    workerData: {
      ...task.workerData,
      modelDir: opts.modelDir,
      threads: opts.threads,
      maxBatch: opts.batch,
      maxTokens: opts.maxTokens,
    },
  });
  try {
    // One load per worker: each must hold a working model before the server takes requests.
    const infos = (await Promise.all(
      Array.from({ length: opts.workers }, () => piscina.run({ info: true })),
    )) as Array<{ name: string }>;
    const run = (query: string, docs: string[]): Promise<Float32Array> =>
      piscina.run({ query, docs }) as Promise<Float32Array>;
    return new RerankQueue(run, infos[0]?.name ?? 'reranker', opts, () => piscina.destroy());
  } catch (err) {
    await piscina.destroy();
    throw new Error(
      `cannot load the reranker model from ${opts.modelDir}: ${(err as Error).message}`,
    );
  }
}

/** Runs one batch: the model's logits for `docs` (at most `batch` of them). */
export type BatchRunner = (query: string, docs: string[]) => Promise<Float32Array>;

/** The queue, batches and deadlines over a batch runner (the pool's Piscina; a fake in tests). */
export class RerankQueue implements Reranker {
  readonly name: string;
  readonly #run: BatchRunner;
  readonly #close: () => Promise<void>;
  readonly #opts: Pick<RerankPoolOptions, 'workers' | 'batch' | 'maxQueued' | 'timeoutMs'>;
  readonly #queue: Batch[] = [];
  #requests = 0;
  #running = 0;
  #closing = false;
  /** Settled when no batch is running (what close waits for). */
  #idle: Array<() => void> = [];

  constructor(
    run: BatchRunner,
    name: string,
    opts: Pick<RerankPoolOptions, 'workers' | 'batch' | 'maxQueued' | 'timeoutMs'>,
    close: () => Promise<void> = async () => undefined,
  ) {
    this.#run = run;
    this.name = name;
    this.#opts = opts;
    this.#close = close;
  }

  score(query: string, docs: readonly string[]): Promise<RerankResult> {
    if (docs.length === 0)
      return Promise.resolve({ outcome: 'reranked', scores: new Float32Array() });
    if (this.#closing)
      return Promise.resolve({ outcome: 'failed', message: 'the reranker is shutting down' });
    if (this.#requests >= this.#opts.maxQueued) {
      rerankOutcomes.inc({ outcome: 'busy' });
      return Promise.resolve({
        outcome: 'busy',
        message: `the reranker has ${this.#requests} recalls in hand (FLASHBULB_RERANK_MAX_QUEUED)`,
      });
    }
    const start = performance.now();
    return new Promise((resolve) => {
      this.#requests += 1;
      const timer = setTimeout(
        () =>
          finish({
            outcome: 'timeout',
            message: `the reranker took longer than ${this.#opts.timeoutMs} ms`,
          }),
        this.#opts.timeoutMs,
      );
      const finish = (r: RerankResult): void => {
        if (req.done) return;
        req.done = true;
        clearTimeout(timer);
        this.#requests -= 1;
        rerankOutcomes.inc({ outcome: r.outcome });
        if (r.outcome === 'reranked') rerankDuration.observe((performance.now() - start) / 1000);
        resolve(r);
      };
      const req: Request = {
        query,
        docs,
        scores: new Float32Array(docs.length),
        left: 0,
        done: false,
        settle: finish,
      };
      for (let from = 0; from < docs.length; from += this.#opts.batch) {
        this.#queue.push({ req, from, to: Math.min(docs.length, from + this.#opts.batch) });
        req.left += 1;
      }
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.#opts.workers && this.#queue.length > 0) {
      const b = this.#queue.shift() as Batch;
      if (b.req.done) continue; // its recall timed out or failed: nobody waits for these scores
      this.#running += 1;
      void this.#runBatch(b).finally(() => {
        this.#running -= 1;
        if (this.#running === 0) for (const f of this.#idle.splice(0)) f();
        this.#pump();
      });
    }
  }

  async #runBatch(b: Batch): Promise<void> {
    try {
      const out = await this.#run(b.req.query, b.req.docs.slice(b.from, b.to));
      if (out.length !== b.to - b.from)
        throw new Error(`${out.length} scores for ${b.to - b.from} documents`);
      b.req.scores.set(out, b.from);
      b.req.left -= 1;
      if (b.req.left === 0) b.req.settle({ outcome: 'reranked', scores: b.req.scores });
    } catch (err) {
      b.req.settle({
        outcome: 'failed',
        message: `the reranker failed: ${(err as Error).message}`,
      });
    }
  }

  /**
   * Answers the recalls still waiting (unreranked), lets the batches already running finish (a
   * worker ended in the middle of a model run takes the process down with it), then closes.
   */
  async close(): Promise<void> {
    this.#closing = true;
    for (const b of this.#queue.splice(0))
      b.req.settle({ outcome: 'failed', message: 'the reranker is shutting down' });
    if (this.#running > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    await this.#close();
  }
}
