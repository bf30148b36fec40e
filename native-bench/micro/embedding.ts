/**
 * @module native-bench/micro/embedding — the real model (the default, int8 ONNX) called
 * directly (createOnnxEmbedder on this thread) and through the embedding pool (Piscina worker,
 * micro-batching, LRU cache) as the server runs it: single-sentence latency, sentences/s with 1,
 * 8 and 32 concurrent single-text requests, and cache-hit latency.
 *
 *   node --import tsx native-bench/micro/embedding.ts [--quick] [--model-dir DIR] [--threads 1,2] [--workers N (default: the server's)]
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { stringFlag } from '../lib/args.ts';
import { Rng } from '../lib/prng.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { createEmbeddingPool } from '../../src/embedding/pool.ts';
import { embeddingBatchSize } from '../../src/metrics/index.ts';
import { microFlags, numbersFlag, report } from './flags.ts';
import { measure, measureConcurrent, type Measured } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';
import { corpusSentence, shortSentence } from './texts.ts';

const DEFAULT_MODEL = DEFAULTS.FLASHBULB_MODEL_DIR;

function row(
  how: string,
  what: string,
  m: Measured,
  sentencesPerCall: number,
  batch: Cell = '-',
): Cell[] {
  return [how, what, m.p50Ms, m.p99Ms, m.perS * sentencesPerCall, batch, loadCell(m.quiet)];
}

async function direct(
  modelDir: string,
  threads: number,
  timeMs: number,
  rng: Rng,
): Promise<Cell[][]> {
  const model = await createOnnxEmbedder({ modelDir, threads });
  const rows: Cell[][] = [];
  try {
    const how = `direct, ${threads} thr`;
    rows.push(
      row(
        how,
        '1 short sentence',
        await measure('direct short', () => model.embedBatch([shortSentence(rng)]), { timeMs }),
        1,
      ),
    );
    rows.push(
      row(
        how,
        '1 corpus sentence',
        await measure('direct corpus', () => model.embedBatch([corpusSentence(rng)]), { timeMs }),
        1,
      ),
    );
    const batch = (): string[] => Array.from({ length: 32 }, () => shortSentence(rng));
    rows.push(
      row(
        how,
        '32 short in one call',
        await measure('direct batch 32', () => model.embedBatch(batch()), {
          timeMs,
          iterations: 10,
          warmup: 2,
        }),
        32,
        32,
      ),
    );
  } finally {
    await model.close();
  }
  return rows;
}

async function meanBatch(): Promise<number> {
  const values = (await embeddingBatchSize.get()).values;
  const sum = values.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0;
  const count = values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  embeddingBatchSize.reset();
  return count > 0 ? sum / count : Number.NaN;
}

async function pooled(
  modelDir: string,
  workers: number,
  threads: number,
  timeMs: number,
  rng: Rng,
): Promise<Cell[][]> {
  const pool = await createEmbeddingPool({
    modelDir,
    workers,
    threads,
    maxBatch: 32,
    cacheSize: 10_000,
    maxQueued: 8192,
  });
  const rows: Cell[][] = [];
  const how = `pool, ${workers} × ${threads} thr`;
  try {
    for (const concurrency of [1, 8, 32]) {
      const m = await measureConcurrent(
        `pool ${concurrency}`,
        () => pool.embed([shortSentence(rng)]),
        { concurrency, timeMs },
      );
      rows.push(row(how, `${concurrency} concurrent, 1 short each`, m, 1, await meanBatch()));
    }
    const fixed = 'The customer asked about the March invoice again.';
    await pool.embed([fixed]);
    rows.push(
      row(
        how,
        'cache hit',
        await measure('pool cache hit', () => pool.embed([fixed]), {
          timeMs: 500,
          iterations: 1000,
        }),
        1,
      ),
    );
  } finally {
    await pool.close();
  }
  return rows;
}

async function main(): Promise<void> {
  const { quick, values } = microFlags(['model-dir', 'threads', 'workers']);
  const modelDir = stringFlag(values, 'model-dir') ?? DEFAULT_MODEL;
  // 1 is the server's default (FLASHBULB_EMBED_THREADS); 2 is measured beside it.
  const threadCounts = numbersFlag(values, 'threads', [1, 2]);
  const workers =
    numbersFlag(values, 'workers', [Number(DEFAULTS.FLASHBULB_EMBED_WORKERS)])[0] ?? 1;
  const timeMs = quick ? 2000 : 6000;
  const rng = new Rng(11);
  const rows: Cell[][] = [];
  for (const threads of threadCounts) rows.push(...(await direct(modelDir, threads, timeMs, rng)));
  for (const threads of threadCounts)
    rows.push(...(await pooled(modelDir, workers, threads, timeMs, rng)));
  report(
    `Embedding (${modelDir.split('/').pop() ?? ''}; pool: ${workers} worker(s), batches ≤ 32 (1 for a model that runs one text at a time); thr = ONNX intra-op threads)`,
    formatTable(['path', 'case', 'p50 ms', 'p99 ms', 'sentences/s', 'mean batch', 'load'], rows),
    'what one embedding costs, how micro-batching turns concurrent single-text requests into throughput, and what the cache saves.',
    [
      BUSY_NOTE,
      'latency is per call (per request for the pool rows, queueing included); short = 8–12 words, corpus = 40–300 characters',
    ],
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
