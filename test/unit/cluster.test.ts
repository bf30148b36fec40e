/**
 * reflect/cluster (DESIGN.md 9): episodes are grouped into themes by embedding. Synthetic unit
 * vectors with planted themes (member = theme direction + independent noise, cosine ≈ 0.4 inside a
 * theme — about what the default model, centred, gives sentences on one topic — and ≈ 0 across themes) plus
 * unrelated "noise" vectors. A theme must come out as one cluster, never merged with another
 * theme, never split, and never padded with noise; noise alone forms no theme.
 */
import { describe, expect, it } from 'vitest';
import { clusterVectors, MIN_SIZE, mulberry32 } from '../../src/analysis/cluster.ts';

const DIM = 128;

function gaussian(rng: () => number): number {
  let u = 0;
  while (u === 0) u = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

function randomUnit(rng: () => number): Float32Array {
  const v = Float32Array.from({ length: DIM }, () => gaussian(rng));
  return normalise(v);
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  const inv = 1 / Math.sqrt(n);
  return v.map((x) => x * inv);
}

interface Planted {
  vectors: Float32Array;
  labels: string[];
}

/**
 * `themes[i]` members around theme i (weight `w` on the theme direction: expected cosine inside a
 * theme w²/(1+w²)), then `noise` unrelated vectors, shuffled deterministically.
 */
function plant(themes: number[], noise: number, seed: number, w = 0.82): Planted {
  const rng = mulberry32(seed);
  const items: Array<{ v: Float32Array; label: string }> = [];
  themes.forEach((count, t) => {
    const centre = randomUnit(rng);
    for (let i = 0; i < count; i++) {
      const e = randomUnit(rng);
      items.push({
        v: normalise(centre.map((c, d) => w * c + (e[d] as number))),
        label: `theme${t}`,
      });
    }
  });
  for (let i = 0; i < noise; i++) items.push({ v: randomUnit(rng), label: 'noise' });
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
  }
  const vectors = new Float32Array(items.length * DIM);
  items.forEach((it, i) => {
    vectors.set(it.v, i * DIM);
  });
  return { vectors, labels: items.map((it) => it.label) };
}

function describeClusters(clusters: ReturnType<typeof clusterVectors>, labels: string[]): string {
  return clusters.map((c) => c.members.map((i) => labels[i]).join(',')).join(' | ');
}

describe('clusterVectors', () => {
  it(`needs at least ${MIN_SIZE} points`, () => {
    const { vectors } = plant([2], 0, 1);
    expect(clusterVectors(vectors, DIM)).toEqual([]);
    expect(clusterVectors(new Float32Array(0), DIM)).toEqual([]);
  });

  it('finds each planted theme once: 4 themes × 8 members + 6 noise vectors, over several seeds', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { vectors, labels } = plant([8, 8, 8, 8], 6, seed);
      const clusters = clusterVectors(vectors, DIM);
      const shape = describeClusters(clusters, labels);
      expect(clusters, `seed ${seed}: ${shape}`).toHaveLength(4);
      const seen = new Set<string>();
      for (const c of clusters) {
        const themes = new Set(c.members.map((i) => labels[i]));
        // All members from one theme: no noise, no member of another theme.
        expect(themes.size, `seed ${seed}: mixed cluster in ${shape}`).toBe(1);
        const theme = [...themes][0] as string;
        expect(theme, `seed ${seed}: a cluster of noise in ${shape}`).not.toBe('noise');
        expect(seen.has(theme), `seed ${seed}: ${theme} split in ${shape}`).toBe(false);
        seen.add(theme);
        // …and (almost) the whole theme.
        expect(c.members.length, `seed ${seed}: ${shape}`).toBeGreaterThanOrEqual(7);
      }
    }
  });

  it('reports members, a unit centroid and cohesion (mean member–centroid cosine); larger clusters first', () => {
    const { vectors, labels } = plant([12, 6], 0, 7);
    const clusters = clusterVectors(vectors, DIM);
    expect(clusters.length, describeClusters(clusters, labels)).toBe(2);
    expect(clusters[0]?.members.length).toBeGreaterThanOrEqual(clusters[1]?.members.length ?? 0);
    for (const c of clusters) {
      expect(c.centroid).toHaveLength(DIM);
      let norm = 0;
      for (const x of c.centroid) norm += x * x;
      expect(Math.sqrt(norm)).toBeCloseTo(1, 4);
      let mean = 0;
      for (const i of c.members) {
        let d = 0;
        for (let k = 0; k < DIM; k++)
          d += (vectors[i * DIM + k] as number) * (c.centroid[k] as number);
        mean += d / c.members.length;
      }
      expect(c.cohesion).toBeCloseTo(mean, 4);
      expect(c.cohesion).toBeGreaterThan(0.5);
      expect(c.cohesion).toBeLessThanOrEqual(1);
      expect(new Set(c.members).size).toBe(c.members.length);
    }
  });

  it('keeps one cohesive theme whole instead of splitting it', () => {
    const { vectors, labels } = plant([10], 0, 11);
    const clusters = clusterVectors(vectors, DIM);
    expect(describeClusters(clusters, labels)).toBe(labels.map(() => 'theme0').join(','));
  });

  it('finds no theme among unrelated vectors', () => {
    for (const seed of [21, 22, 23]) {
      const { vectors, labels } = plant([], 12, seed);
      const clusters = clusterVectors(vectors, DIM);
      expect(clusters, `seed ${seed}: ${describeClusters(clusters, labels)}`).toEqual([]);
    }
  });

  it('is deterministic', () => {
    const { vectors } = plant([8, 8, 8], 4, 31);
    const a = clusterVectors(vectors, DIM).map((c) => [...c.members].sort((x, y) => x - y));
    const b = clusterVectors(vectors, DIM).map((c) => [...c.members].sort((x, y) => x - y));
    expect(b).toEqual(a);
  });
});
