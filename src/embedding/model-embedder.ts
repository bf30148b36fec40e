/** @module embedding/model-embedder — the built-in model behind the embedding pool. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.ts';
import type { Embedder } from './embedder.ts';
import { createEmbeddingPool } from './pool.ts';

export function createModelEmbedder(config: Config): Promise<Embedder> {
  if (!existsSync(join(config.modelDir, 'model.onnx'))) {
    return Promise.reject(
      new Error(
        `no embedding model in ${config.modelDir}: run \`node scripts/fetch-model.mjs\` (npm ci does it), ` +
          'point FLASHBULB_MODEL_DIR at an existing copy, or set FLASHBULB_EMBEDDER=hash for tests',
      ),
    );
  }
  return createEmbeddingPool({
    modelDir: config.modelDir,
    workers: config.embedWorkers,
    threads: config.embedThreads,
    spin: config.embedSpin,
    maxBatch: 32,
    cacheSize: config.embedCacheSize,
    maxQueued: 8192,
    idleMs: config.embedIdleS * 1000,
  });
}
