/**
 * The relevance the hash embedder gives two texts (the dot product of their unit vectors), so a
 * test can compute which memories a cue or a fed chunk should match.
 */
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';

export function hashCosine(a: string, b: string, dim = 384): number {
  const v = hashEmbedBatch([a, b], dim);
  let dot = 0;
  for (let i = 0; i < dim; i++) dot += (v[i] ?? 0) * (v[dim + i] ?? 0);
  return dot;
}
