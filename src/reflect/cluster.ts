/**
 * @module reflect/cluster — groups episode embeddings into themes. k-means (k-means++ seeding,
 * deterministic PRNG) for k = 2…K_MAX; k is chosen by the mean silhouette (on a sample when there
 * are many points); a single theme is kept when no split is better than one cohesive group.
 * Members far from their centroid are left out as noise, and clusters smaller than MIN_SIZE are
 * ignored.
 */
import { dot } from '../recall/vector.ts';

export const MIN_SIZE = 3;
const K_MAX = 12;
const ITERATIONS = 20;
const SILHOUETTE_SAMPLE = 400;
/** Points used to choose k. */
const MODEL_SAMPLE = 1500;
/** A member must be at least this similar to its centroid (cosine) to belong to the theme. */
const MEMBER_MIN_SIM = 0.3;
/** One group is kept as a single theme when its members are this cohesive on average. */
const SINGLE_COHESION = 0.45;

export interface Cluster {
  members: number[];
  centroid: Float32Array;
  cohesion: number;
}

export function clusterVectors(vectors: Float32Array, dim: number, seed = 42): Cluster[] {
  const n = vectors.length / dim;
  if (n < MIN_SIZE) return [];
  const rows = Array.from({ length: n }, (_, i) => vectors.subarray(i * dim, (i + 1) * dim));
  const rng = mulberry32(seed);
  // k is chosen on a sample; the final grouping runs on every point.
  const sample = n <= MODEL_SAMPLE ? rows : shuffle(rows, rng).slice(0, MODEL_SAMPLE);
  let best: { k: number; score: number } | null = null;
  const kMax = Math.min(K_MAX, Math.floor(sample.length / MIN_SIZE));
  for (let k = 2; k <= kMax; k++) {
    const score = silhouette(sample, kmeans(sample, dim, k, rng), k, rng);
    if (!best || score > best.score) best = { k, score };
  }
  const one = finish(rows, dim, new Int32Array(n), 1);
  if (!best || (best.score < 0.1 && (one[0]?.cohesion ?? 0) >= SINGLE_COHESION)) return one;
  return finish(rows, dim, kmeans(rows, dim, best.k, rng), best.k);
}

function finish(rows: Float32Array[], dim: number, assign: Int32Array, k: number): Cluster[] {
  const out: Cluster[] = [];
  for (let c = 0; c < k; c++) {
    let members = [...assign.keys()].filter((i) => assign[i] === c);
    let centroid = mean(rows, members, dim);
    members = members.filter((i) => dot(rows[i] as Float32Array, centroid) >= MEMBER_MIN_SIM);
    if (members.length < MIN_SIZE) continue;
    centroid = mean(rows, members, dim);
    const cohesion = members.reduce((s, i) => s + dot(rows[i] as Float32Array, centroid), 0) / members.length;
    out.push({ members, centroid, cohesion });
  }
  return out.sort((a, b) => b.members.length - a.members.length);
}

function kmeans(rows: Float32Array[], dim: number, k: number, rng: () => number): Int32Array {
  let centroids = seedCentroids(rows, k, rng);
  const assign = new Int32Array(rows.length).fill(-1);
  for (let it = 0; it < ITERATIONS; it++) {
    let changed = false;
    rows.forEach((r, i) => {
      const c = nearest(r, centroids);
      if (c !== assign[i]) {
        assign[i] = c;
        changed = true;
      }
    });
    if (!changed) break;
    centroids = centroids.map((old, c) => {
      const members = [...assign.keys()].filter((i) => assign[i] === c);
      return members.length === 0 ? old : mean(rows, members, dim);
    });
  }
  return assign;
}

function seedCentroids(rows: Float32Array[], k: number, rng: () => number): Float32Array[] {
  const centroids = [rows[Math.floor(rng() * rows.length)] as Float32Array];
  while (centroids.length < k) {
    const d2 = rows.map((r) => {
      const sim = Math.max(...centroids.map((c) => dot(r, c)));
      return Math.max(0, 1 - sim) ** 2;
    });
    const total = d2.reduce((a, b) => a + b, 0);
    let pick = rng() * total;
    let idx = 0;
    while (idx < rows.length - 1 && pick > (d2[idx] as number)) pick -= d2[idx++] as number;
    centroids.push(rows[idx] as Float32Array);
  }
  return centroids;
}

function nearest(r: Float32Array, centroids: Float32Array[]): number {
  let best = 0;
  let bestSim = Number.NEGATIVE_INFINITY;
  centroids.forEach((c, i) => {
    const s = dot(r, c);
    if (s > bestSim) {
      bestSim = s;
      best = i;
    }
  });
  return best;
}

/** Mean silhouette with cosine distance, over a sample of points. */
function silhouette(rows: Float32Array[], assign: Int32Array, k: number, rng: () => number): number {
  const idx = rows.map((_, i) => i);
  const sample = idx.length <= SILHOUETTE_SAMPLE ? idx : shuffle(idx, rng).slice(0, SILHOUETTE_SAMPLE);
  let total = 0;
  for (const i of sample) {
    const sums = new Float64Array(k);
    const counts = new Float64Array(k);
    for (const j of sample) {
      if (i === j) continue;
      const c = assign[j] as number;
      sums[c] = (sums[c] ?? 0) + (1 - dot(rows[i] as Float32Array, rows[j] as Float32Array));
      counts[c] = (counts[c] ?? 0) + 1;
    }
    const own = assign[i] as number;
    const a = (counts[own] ?? 0) > 0 ? (sums[own] as number) / (counts[own] as number) : 0;
    let b = Number.POSITIVE_INFINITY;
    for (let c = 0; c < k; c++) if (c !== own && (counts[c] ?? 0) > 0) b = Math.min(b, (sums[c] as number) / (counts[c] as number));
    if (Number.isFinite(b) && Math.max(a, b) > 0) total += (b - a) / Math.max(a, b);
  }
  return total / sample.length;
}

function mean(rows: Float32Array[], members: number[], dim: number): Float32Array {
  const out = new Float32Array(dim);
  for (const i of members) {
    const r = rows[i] as Float32Array;
    for (let d = 0; d < dim; d++) out[d] = (out[d] as number) + (r[d] as number);
  }
  let norm = 0;
  for (const x of out) norm += x * x;
  const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let d = 0; d < dim; d++) out[d] = (out[d] as number) * inv;
  return out;
}

function shuffle<T>(arr: T[], rng: () => number): T[] {
  const a = [...arr];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

/** Small deterministic PRNG (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
