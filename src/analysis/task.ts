/**
 * @module analysis/task — the CPU-heavy half of reflection, run in a Piscina worker so neither the
 * router nor a shard stalls: cluster the episode vectors, then pick each cluster's central
 * statements and distinguishing terms.
 */
import { clusterVectors } from './cluster.ts';
import { centralStatements, distinguishingTerms } from './summarize.ts';

export interface ReflectTaskInput {
  vectors: Float32Array;
  dim: number;
  texts: string[];
}

export interface ClusterResult {
  members: number[];
  cohesion: number;
  central: number[];
  tags: string[];
}

export default function reflectTask(input: ReflectTaskInput): ClusterResult[] {
  return analyse(input);
}

export function analyse(input: ReflectTaskInput): ClusterResult[] {
  const { vectors, dim, texts } = input;
  const row = (i: number): Float32Array => vectors.subarray(i * dim, (i + 1) * dim);
  return clusterVectors(vectors, dim).map((c) => ({
    members: c.members,
    cohesion: c.cohesion,
    central: centralStatements(c.members, row, c.centroid),
    tags: distinguishingTerms(
      c.members.map((i) => texts[i] ?? ''),
      texts,
    ),
  }));
}
