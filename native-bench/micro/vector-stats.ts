/**
 * @module native-bench/micro/vector-stats — how hard a set of vectors is for an approximate
 * index, from each query's exact neighbours: the similarity of the 1st and 10th neighbour, of a
 * random pair, and the local intrinsic dimensionality (maximum-likelihood estimate over the 20
 * nearest, on Euclidean distances of unit vectors). Higher LID and a smaller gap between
 * neighbours and random points make HNSW work harder for the same recall.
 */
import { dot } from '../../src/recall/vector.ts';

export interface Hardness {
  nn1: number;
  nn10: number;
  randomPair: number;
  lid: number;
}

/** `neighbours[q]`: similarities of query q's exact top 20, best first. */
export function hardness(
  neighbours: readonly (readonly number[])[],
  sample: readonly Float32Array[],
): Hardness {
  const mean = (xs: readonly number[]): number =>
    xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const dist = (sim: number): number => Math.sqrt(Math.max(1e-12, 2 - 2 * sim));
  const lids = neighbours.map((sims) => {
    const d = sims.map(dist);
    const far = d[d.length - 1] as number;
    const s = mean(d.slice(0, -1).map((x) => Math.log(x / far)));
    return s < 0 ? -1 / s : Number.NaN;
  });
  const pairs: number[] = [];
  for (let i = 0; i + 1 < sample.length; i += 2)
    pairs.push(dot(sample[i] as Float32Array, sample[i + 1] as Float32Array));
  return {
    nn1: mean(neighbours.map((s) => s[0] ?? 0)),
    nn10: mean(neighbours.map((s) => s[9] ?? 0)),
    randomPair: mean(pairs),
    lid: mean(lids.filter((x) => Number.isFinite(x))),
  };
}
