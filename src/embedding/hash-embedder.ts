/**
 * @module embedding/hash-embedder — a deterministic embedder for tests: word and character-trigram
 * features hashed into `dim` buckets with signs, L2-normalised. Texts sharing words land close; it
 * knows nothing of meaning, which is exactly what lets tests prove the real model is in use.
 */
import type { Embedder } from './embedder.ts';

export function createHashEmbedder(dim = 384): Embedder {
  return {
    name: 'hash',
    dim,
    embed: (texts) => Promise.resolve(hashEmbedBatch(texts, dim)),
    close: () => Promise.resolve(),
  };
}

export function hashEmbedBatch(texts: readonly string[], dim: number): Float32Array {
  const out = new Float32Array(texts.length * dim);
  texts.forEach((t, i) => {
    hashEmbedInto(t, out.subarray(i * dim, (i + 1) * dim));
  });
  return out;
}

function hashEmbedInto(text: string, v: Float32Array): void {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const w of words) {
    addFeature(v, `w:${w}`, 1);
    const padded = `^${w}$`;
    for (let i = 0; i + 3 <= padded.length; i++) addFeature(v, `c:${padded.slice(i, i + 3)}`, 0.5);
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  if (norm === 0) {
    v[0] = 1;
    return;
  }
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) * inv;
}

function addFeature(v: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const bucket = (h >>> 1) % v.length;
  const sign = h & 1 ? 1 : -1;
  v[bucket] = (v[bucket] ?? 0) + sign * weight;
}

/** 32-bit FNV-1a with a final avalanche (cheap; no cryptographic strength needed here). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}
