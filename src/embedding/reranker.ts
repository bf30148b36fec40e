/**
 * @module embedding/reranker — starts the optional cross-encoder reranker the configuration asks
 * for (FLASHBULB_RERANK_*), or none: off by default, and then no model file is read. A missing or
 * malformed model fails the start with a message naming the file.
 */
import type { Config } from '../config/index.ts';
import type { Reranker } from './rerank-pool.ts';

export type { Reranker, RerankResult } from './rerank-pool.ts';

export async function createReranker(config: Config): Promise<Reranker | null> {
  const r = config.rerank;
  if (!r.enabled) return null;
  const { createRerankPool } = await import('./rerank-pool.ts');
  try {
    return await createRerankPool({
      modelDir: r.modelDir,
      workers: r.workers,
      threads: r.threads,
      batch: r.batch,
      maxTokens: r.maxTokens,
      maxQueued: r.maxQueued,
      timeoutMs: r.timeoutMs,
    });
  } catch (err) {
    throw new Error(`FLASHBULB_RERANK_MODEL_DIR: ${(err as Error).message}`);
  }
}
