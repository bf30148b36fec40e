/**
 * @module native-bench/micro/vectors — synthetic 384-d unit vectors, seeded.
 *
 * - random: uniform on the sphere; every point is about equally far from every other, the worst
 *   case for HNSW (no neighbourhood structure to exploit).
 * - clustered: a mixture around `centres` random centres; each cluster spreads mostly inside its
 *   own low-dimensional subspace (`rank` directions) plus a little isotropic noise, so cosine to
 *   the centre is about 0.7 and intrinsic dimension is low, as with sentence embeddings of many
 *   topics. Synthetic all the same: say which kind a figure comes from.
 */
import { Rng } from '../lib/prng.ts';

export type VectorKind = 'clustered' | 'random';

export interface VectorSpec {
  kind: VectorKind;
  dim: number;
  seed: number;
  centres?: number;
  rank?: number;
}

export function gaussian(rng: Rng): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

export function normalise(v: Float32Array): Float32Array {
  let s = 0;
  for (const x of v) s += x * x;
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
  return v;
}

function randomUnit(rng: Rng, dim: number): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = gaussian(rng);
  return normalise(v);
}

/** An endless, seeded source of vectors of one kind; `next()` returns a fresh unit vector. */
export class VectorSource {
  readonly #rng: Rng;
  readonly #spec: Required<VectorSpec>;
  readonly #centres: Float32Array[];
  readonly #bases: Float32Array[][];

  constructor(spec: VectorSpec) {
    this.#spec = { centres: 300, rank: 12, ...spec };
    this.#rng = new Rng(spec.seed);
    const { dim, centres, rank } = this.#spec;
    const n = spec.kind === 'clustered' ? centres : 0;
    this.#centres = Array.from({ length: n }, () => randomUnit(this.#rng, dim));
    this.#bases = this.#centres.map(() => Array.from({ length: rank }, () => randomUnit(this.#rng, dim)));
  }

  /** A point of cluster `c` (or of a random cluster). */
  next(c = this.#rng.int(Math.max(1, this.#centres.length))): Float32Array {
    const { dim, kind } = this.#spec;
    if (kind === 'random') return randomUnit(this.#rng, dim);
    const centre = this.#centres[c % this.#centres.length] as Float32Array;
    const v = Float32Array.from(centre);
    // Spread along the cluster's own directions (~0.9 in norm) plus small isotropic noise (~0.5).
    for (const b of this.#bases[c % this.#bases.length] as Float32Array[]) {
      const g = gaussian(this.#rng) * 0.26;
      for (let i = 0; i < dim; i++) v[i] = (v[i] as number) + g * (b[i] as number);
    }
    for (let i = 0; i < dim; i++) v[i] = (v[i] as number) + gaussian(this.#rng) * 0.025;
    return normalise(v);
  }

  get clusters(): number {
    return this.#centres.length;
  }

  many(n: number): Float32Array[] {
    return Array.from({ length: n }, () => this.next());
  }
}
