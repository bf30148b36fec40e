/**
 * @module native-bench/micro/vectors — synthetic 384-d unit vectors, seeded.
 *
 * - random: uniform on the sphere; every point is about equally far from every other, the worst
 *   case for HNSW (no neighbourhood structure to exploit).
 * - clustered: a mixture around `centres` random centres plus one direction all share; each
 *   cluster spreads mostly inside its own low-dimensional subspace (`rank` directions) plus
 *   isotropic noise. Defaults are calibrated against real sentence embeddings (CALIBRATED).
 *   Synthetic all the same: say which kind a figure comes from.
 */
import { Rng } from '../lib/prng.ts';

export type VectorKind = 'clustered' | 'random';

export interface VectorSpec {
  kind: VectorKind;
  dim: number;
  seed: number;
  centres?: number;
  /** Directions a cluster spreads along, and the spread along each. */
  rank?: number;
  spread?: number;
  /** Per-coordinate isotropic noise. */
  noise?: number;
  /** Norm of a direction shared by every clustered vector (real embeddings have one). */
  common?: number;
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

/**
 * Defaults chosen so that, at 20k vectors, the local intrinsic dimension (≈ 18) and the similarity
 * of a random pair (≈ 0.09) match real all-MiniLM-L6-v2 embeddings of English sentences (see the
 * hardness table of vector-search.ts); neighbours come out slightly less similar than real ones.
 */
const CALIBRATED = { centres: 300, rank: 24, spread: 0.19, noise: 0.028, common: 0.45 } as const;

/** An endless, seeded source of vectors of one kind; `next()` returns a fresh unit vector. */
export class VectorSource {
  readonly #rng: Rng;
  readonly #spec: Required<VectorSpec>;
  readonly #centres: Float32Array[];
  readonly #bases: Float32Array[][];
  readonly #common: Float32Array;

  constructor(spec: VectorSpec) {
    this.#spec = { ...CALIBRATED, ...spec };
    this.#rng = new Rng(spec.seed);
    const { dim, centres, rank } = this.#spec;
    const n = spec.kind === 'clustered' ? centres : 0;
    this.#centres = Array.from({ length: n }, () => randomUnit(this.#rng, dim));
    this.#bases = this.#centres.map(() =>
      Array.from({ length: rank }, () => randomUnit(this.#rng, dim)),
    );
    this.#common = randomUnit(this.#rng, dim).map((x) => x * this.#spec.common);
  }

  /** A point of cluster `c` (or of a random cluster). */
  next(c = this.#rng.int(Math.max(1, this.#centres.length))): Float32Array {
    const { dim, kind, spread, noise } = this.#spec;
    if (kind === 'random') return randomUnit(this.#rng, dim);
    const centre = this.#centres[c % this.#centres.length] as Float32Array;
    const v = Float32Array.from(centre, (x, i) => x + (this.#common[i] as number));
    // Spread along the cluster's own directions, plus isotropic noise.
    for (const b of this.#bases[c % this.#bases.length] as Float32Array[]) {
      const g = gaussian(this.#rng) * spread;
      for (let i = 0; i < dim; i++) v[i] = (v[i] as number) + g * (b[i] as number);
    }
    for (let i = 0; i < dim; i++) v[i] = (v[i] as number) + gaussian(this.#rng) * noise;
    return normalise(v);
  }

  get clusters(): number {
    return this.#centres.length;
  }

  many(n: number): Float32Array[] {
    return Array.from({ length: n }, () => this.next());
  }
}
