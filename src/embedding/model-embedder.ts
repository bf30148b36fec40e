/** @module embedding/model-embedder — the built-in model (placeholder until the model lands). */
import type { Config } from '../config/index.ts';
import type { Embedder } from './embedder.ts';

export function createModelEmbedder(config: Config): Promise<Embedder> {
  return Promise.reject(
    new Error(`the built-in embedding model is not available in this build (FLASHBULB_MODEL_DIR=${config.modelDir}); set FLASHBULB_EMBEDDER=hash`),
  );
}
