/** @module embedding — picks the embedder the configuration asks for. */
import type { Config } from '../config/index.ts';
import type { Embedder } from './embedder.ts';
import { createHashEmbedder } from './hash-embedder.ts';

export type { Embedder } from './embedder.ts';

export async function createEmbedder(config: Config): Promise<Embedder> {
  if (config.embedder === 'hash') return createHashEmbedder();
  const { createModelEmbedder } = await import('./model-embedder.ts');
  return createModelEmbedder(config);
}
