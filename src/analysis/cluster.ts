/**
 * @module analysis/cluster — groups episode embeddings into themes by average-linkage
 * agglomerative clustering (nearest-neighbour chain, O(n²)) cut at LINK_MIN_SIM: two groups join
 * only while their members are, on average, at least that similar to each other, so separate
 * themes are never merged and unrelated statements stay alone (noise) instead of being pulled into
 * a theme. Groups smaller than MIN_SIZE are ignored. Above MODEL_SAMPLE points the themes are
 * found on a deterministic sample and every other point joins the theme it is most similar to on
 * average, when that similarity reaches LINK_MIN_SIM.
 */
import { dot } from '../recall/vector.ts';

export const MIN_SIZE = 3;
/** Average-linkage cut (cosine): groups less similar than this on average stay apart. */
export const LINK_MIN_SIM = 0.25;
/** Points clustered directly (the similarity matrix is MODEL_SAMPLE² floats). */
const MODEL_SAMPLE = 1500;

export interface Cluster {
  members: number[];
  centroid: Float32Array;
  cohesion: number;
}

export function clusterVectors(vectors: Float32Array, dim: number, seed = 42): Cluster[] {
  const n = dim > 0 ? vectors.length / dim : 0;
  if (n < MIN_SIZE) return [];
  const rows = Array.from({ length: n }, (_, i) => vectors.subarray(i * dim, (i + 1) * dim));
  const all = rows.map((_, i) => i);
  const sample =
    n <= MODEL_SAMPLE
      ? all
      : shuffle(all, mulberry32(seed))
          .slice(0, MODEL_SAMPLE)
          .sort((a, b) => a - b);
  const groups = averageLinkage(
    sample.map((i) => rows[i] as Float32Array),
    LINK_MIN_SIM,
  )
    .map((g) => g.map((j) => sample[j] as number))
    .filter((g) => g.length >= MIN_SIZE);
  if (n > MODEL_SAMPLE && groups.length > 0) {
    const inSample = new Set(sample);
    const sums = groups.map((g) => sumOf(rows, g, dim));
    const sizes = groups.map((g) => g.length);
    for (let i = 0; i < n; i++) {
      if (inSample.has(i)) continue;
      let best = -1;
      let bestSim = LINK_MIN_SIM;
      sums.forEach((s, c) => {
        const sim = dot(rows[i] as Float32Array, s) / (sizes[c] as number);
        if (sim >= bestSim) {
          bestSim = sim;
          best = c;
        }
      });
      if (best >= 0) groups[best]?.push(i);
    }
  }
  return groups
    .map((members) => {
      members.sort((a, b) => a - b);
      const centroid = normalise(sumOf(rows, members, dim));
      const cohesion =
        members.reduce((s, i) => s + dot(rows[i] as Float32Array, centroid), 0) / members.length;
      return { members, centroid, cohesion };
    })
    .sort(
      (a, b) =>
        b.members.length - a.members.length || (a.members[0] as number) - (b.members[0] as number),
    );
}

/**
 * Average-linkage clustering by nearest-neighbour chain: merges mutual nearest groups while their
 * average similarity is at least `cut`; a group whose nearest neighbour is below the cut is final
 * (average linkage is reducible: merging others never brings them closer to it).
 */
export function averageLinkage(rows: readonly Float32Array[], cut: number): number[][] {
  const m = rows.length;
  const sim = new Float32Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      const s = dot(rows[i] as Float32Array, rows[j] as Float32Array);
      sim[i * m + j] = s;
      sim[j * m + i] = s;
    }
  }
  const members: number[][] = rows.map((_, i) => [i]);
  const active = new Uint8Array(m).fill(1);
  let remaining = m;
  const done: number[][] = [];
  const chain: number[] = [];
  while (remaining > 0) {
    if (chain.length === 0) chain.push(active.indexOf(1));
    const a = chain[chain.length - 1] as number;
    const prev = chain.length >= 2 ? (chain[chain.length - 2] as number) : -1;
    let b = -1;
    let bSim = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < m; c++) {
      if (c === a || active[c] === 0) continue;
      const s = sim[a * m + c] as number;
      if (s > bSim || (s === bSim && c === prev)) {
        bSim = s;
        b = c;
      }
    }
    if (b < 0 || bSim < cut) {
      // Nothing is close enough to `a`, now or after any later merge.
      done.push(members[a] as number[]);
      active[a] = 0;
      remaining -= 1;
      chain.pop();
      continue;
    }
    if (b !== prev) {
      chain.push(b);
      continue;
    }
    // a and b are each other's nearest: merge b into a (Lance–Williams update for average linkage).
    chain.pop();
    chain.pop();
    const na = (members[a] as number[]).length;
    const nb = (members[b] as number[]).length;
    for (let c = 0; c < m; c++) {
      if (active[c] === 0 || c === a || c === b) continue;
      const s = (na * (sim[a * m + c] as number) + nb * (sim[b * m + c] as number)) / (na + nb);
      sim[a * m + c] = s;
      sim[c * m + a] = s;
    }
    members[a] = [...(members[a] as number[]), ...(members[b] as number[])];
    active[b] = 0;
    remaining -= 1;
  }
  return done;
}

function sumOf(
  rows: readonly Float32Array[],
  members: readonly number[],
  dim: number,
): Float32Array {
  const out = new Float32Array(dim);
  for (const i of members) {
    const r = rows[i] as Float32Array;
    for (let d = 0; d < dim; d++) out[d] = (out[d] as number) + (r[d] as number);
  }
  return out;
}

function normalise(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let d = 0; d < v.length; d++) v[d] = (v[d] as number) * inv;
  return v;
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
