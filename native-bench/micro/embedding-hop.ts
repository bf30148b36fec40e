/**
 * @module native-bench/micro/embedding-hop — what the embedding pool's worker hop adds to one
 * embedding: the same model called in this thread and through the pool (a Piscina worker, no
 * cache), one short sentence at a time, alternating between the two so that a disturbance on the
 * machine falls on both; p50 of each.
 *
 *   node --import tsx native-bench/micro/embedding-hop.ts [--rounds 300] [--threads 2] [--model-dir DIR]
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { createEmbeddingPool } from '../../src/embedding/pool.ts';

const DEFAULT_MODEL = DEFAULTS.FLASHBULB_MODEL_DIR;
const WARMUP = 20;

function p50(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      rounds: { type: 'string' },
      threads: { type: 'string' },
      'model-dir': { type: 'string' },
    },
  });
  const rounds = numberFlag(values, 'rounds', 300);
  const threads = numberFlag(values, 'threads', 2);
  const modelDir = stringFlag(values, 'model-dir') ?? DEFAULT_MODEL;
  const direct = await createOnnxEmbedder({ modelDir, threads });
  const pool = await createEmbeddingPool({
    modelDir,
    workers: 1,
    threads,
    maxBatch: 32,
    cacheSize: 0,
    maxQueued: 64,
  });
  const directMs: number[] = [];
  const poolMs: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      const text = `The customer asked about the March invoice today (ticket ${i}).`;
      const d = await timed(() => direct.embedBatch([`${text} a`]));
      await new Promise((resolve) => setTimeout(resolve, 2));
      const p = await timed(() => pool.embed([`${text} b`]));
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (i >= WARMUP) {
        directMs.push(d);
        poolMs.push(p);
      }
    }
  } finally {
    await direct.close();
    await pool.close();
  }
  console.log(
    `${rounds - WARMUP} rounds, ${threads} ONNX threads: direct p50 ${p50(directMs).toFixed(2)} ms, through the pool p50 ${p50(poolMs).toFixed(2)} ms`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
