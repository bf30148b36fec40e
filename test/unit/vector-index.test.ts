/**
 * VectorIndex (src/shard/index/vector-index.ts): exact scan up to EXACT_MAX vectors, HNSW above it
 * with pending vectors searched exactly until the background indexer moves them into the graph;
 * removal; adopting a graph saved with a snapshot and reconciling it with the vectors present.
 * Reference results are computed here by brute force, independently of src/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import hnswlib from 'hnswlib-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hnsw } from '../../src/shard/index/hnsw.ts';
import { EXACT_MAX, VectorIndex, type Neighbour } from '../../src/shard/index/vector-index.ts';

/** Deterministic PRNG (mulberry32) and Gaussian samples, so every run sees the same vectors. */
function rng(seed: number): { uniform: () => number; gauss: () => number } {
  let a = seed >>> 0;
  const uniform = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gauss = (): number =>
    Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
  return { uniform, gauss };
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

function randomUnit(r: ReturnType<typeof rng>, dim: number): Float32Array {
  return unit(Float32Array.from({ length: dim }, r.gauss));
}

/** A unit vector close to `v` (cosine ≈ 1 − small). */
function near(r: ReturnType<typeof rng>, v: Float32Array, noise = 0.01): Float32Array {
  return unit(Float32Array.from(v, (x) => x + noise * r.gauss()));
}

function dotp(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

function bruteForce(
  vectors: ReadonlyMap<string, Float32Array>,
  q: Float32Array,
  k: number,
): Neighbour[] {
  return [...vectors]
    .map(([id, v]) => ({ id, sim: dotp(q, v) }))
    .sort((a, b) => b.sim - a.sim)
    .slice(0, k);
}

function drain(index: VectorIndex): void {
  for (let guard = 0; index.indexSome(50); guard++)
    if (guard > 10_000) throw new Error('indexSome never finished');
}

function build(
  n: number,
  dim: number,
  seed: number,
  prefix = 'v',
): { index: VectorIndex; vectors: Map<string, Float32Array>; r: ReturnType<typeof rng> } {
  const r = rng(seed);
  const index = new VectorIndex();
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < n; i++) {
    const v = randomUnit(r, dim);
    vectors.set(`${prefix}${i}`, v);
    index.upsert(`${prefix}${i}`, v);
  }
  return { index, vectors, r };
}

function ids(ns: readonly Neighbour[]): string[] {
  return ns.map((n) => n.id);
}

function expectSortedDesc(ns: readonly Neighbour[]): void {
  for (let i = 1; i < ns.length; i++)
    expect((ns[i - 1] as Neighbour).sim).toBeGreaterThanOrEqual((ns[i] as Neighbour).sim);
}

describe('VectorIndex at or below EXACT_MAX: exact scan, no graph', () => {
  const dim = 48;
  const { index, vectors, r } = build(EXACT_MAX, dim, 11);

  it('never builds a graph and needs no indexing', () => {
    expect(index.size).toBe(EXACT_MAX);
    expect(index.needsIndexing).toBe(false);
    expect(index.indexSome(100)).toBe(false);
    expect(index.hasGraph).toBe(false);
    expect(index.exportGraph()).toBeNull();
  });

  it('returns exactly the brute-force top k (ids, order and similarities), whatever ef says', () => {
    for (let q = 0; q < 25; q++) {
      const query = randomUnit(r, dim);
      const want = bruteForce(vectors, query, 10);
      for (const ef of [1, 10, 50]) {
        const got = index.search(query, { k: 10, ef });
        expect(ids(got)).toEqual(ids(want));
        got.forEach((g, i) => {
          expect(g.sim).toBeCloseTo((want[i] as Neighbour).sim, 5);
        });
      }
    }
  });

  it('k larger than the index returns everything, best first; k 0 returns nothing', () => {
    const small = build(7, dim, 12);
    const query = randomUnit(small.r, dim);
    const got = small.index.search(query, { k: 100, ef: 10 });
    expect(got).toHaveLength(7);
    expect(ids(got)).toEqual(ids(bruteForce(small.vectors, query, 7)));
    expectSortedDesc(got);
    expect(small.index.search(query, { k: 0, ef: 10 })).toEqual([]);
  });

  it('`only` restricts the scan to the given ids, `filter` to ids passing the predicate', () => {
    const query = randomUnit(r, dim);
    const only = ['v3', 'v500', 'v1000', 'no-such-id'];
    const got = index.search(query, { k: 10, ef: 10, only });
    expect(new Set(ids(got))).toEqual(new Set(['v3', 'v500', 'v1000']));
    expectSortedDesc(got);
    const odd = index.search(query, {
      k: 5,
      ef: 10,
      filter: (id) => Number(id.slice(1)) % 2 === 1,
    });
    const oddVectors = new Map([...vectors].filter(([id]) => Number(id.slice(1)) % 2 === 1));
    expect(ids(odd)).toEqual(ids(bruteForce(oddVectors, query, 5)));
  });

  it('remove() takes a vector out of every later search', () => {
    const small = build(50, dim, 13);
    const target = small.vectors.get('v7') as Float32Array;
    expect(small.index.search(target, { k: 1, ef: 10 })[0]?.id).toBe('v7');
    small.index.remove('v7');
    small.vectors.delete('v7');
    expect(small.index.size).toBe(49);
    const got = small.index.search(target, { k: 49, ef: 10 });
    expect(ids(got)).not.toContain('v7');
    expect(ids(got)).toEqual(ids(bruteForce(small.vectors, target, 49)));
  });

  it('upsert() of an existing id replaces its vector', () => {
    const small = build(20, dim, 14);
    const fresh = randomUnit(small.r, dim);
    small.index.upsert('v4', fresh);
    expect(small.index.size).toBe(20);
    const [top] = small.index.search(fresh, { k: 1, ef: 10 });
    expect(top?.id).toBe('v4');
    expect(top?.sim).toBeCloseTo(1, 5);
  });
});

describe('VectorIndex below EXACT_MAX under churn (the native copy made at the first search from 256 vectors, then kept up to date)', () => {
  it('matches brute force after every add, replacement and removal, through the copy growing and being dropped past EXACT_MAX', () => {
    const dim = 24;
    const r = rng(21);
    const index = new VectorIndex();
    const vectors = new Map<string, Float32Array>();
    const check = (): void => {
      const query = randomUnit(r, dim);
      const got = index.search(query, { k: 30, ef: 30 });
      const want = bruteForce(vectors, query, 30);
      expect(ids(got)).toEqual(ids(want));
      got.forEach((g, i) => {
        expect(g.sim).toBeCloseTo((want[i] as Neighbour).sim, 6);
      });
    };
    expect(index.search(randomUnit(r, dim), { k: 5, ef: 5 })).toEqual([]);
    let next = 0;
    for (let step = 0; vectors.size <= EXACT_MAX + 50; step++) {
      const roll = r.uniform();
      const live = [...vectors.keys()];
      if (roll < 0.15 && live.length > 0) {
        const id = live[Math.floor(r.uniform() * live.length)] as string;
        index.remove(id);
        vectors.delete(id);
      } else if (roll < 0.25 && live.length > 0) {
        const id = live[Math.floor(r.uniform() * live.length)] as string;
        const v = randomUnit(r, dim);
        index.upsert(id, v);
        vectors.set(id, v);
      } else {
        const v = randomUnit(r, dim);
        index.upsert(`c${next}`, v);
        vectors.set(`c${next++}`, v);
      }
      // Search often while small (the copy doubles at 64, 128, ...), then now and then.
      if (step < 300 || step % 25 === 0) check();
    }
    expect(index.size).toBeGreaterThan(EXACT_MAX);
    expect(index.hasGraph).toBe(false);
    check();
    // A removed vector searched with itself as the query is gone; a kept one comes back first.
    const [kept] = vectors.keys();
    expect(index.search(vectors.get(kept as string) as Float32Array, { k: 1, ef: 1 })[0]?.id).toBe(
      kept,
    );
  });

  it('a vector of another length is never scanned natively against the wrong query: results stay those of the JS scan', () => {
    const index = new VectorIndex();
    const r = rng(22);
    const vectors = new Map<string, Float32Array>();
    for (let i = 0; i < 10; i++) {
      const v = randomUnit(r, 16);
      vectors.set(`a${i}`, v);
      index.upsert(`a${i}`, v);
    }
    const q16 = randomUnit(r, 16);
    expect(ids(index.search(q16, { k: 3, ef: 3 }))).toEqual(ids(bruteForce(vectors, q16, 3)));
    index.upsert('odd', randomUnit(r, 8));
    expect(index.search(q16, { k: 11, ef: 3 })).toHaveLength(11);
    const q8 = randomUnit(r, 8);
    expect(index.search(q8, { k: 1, ef: 1 })).toHaveLength(1);
  });
});

describe('VectorIndex above EXACT_MAX: HNSW graph', () => {
  const n = 2000;
  const dim = 384;
  let built: ReturnType<typeof build>;

  beforeAll(() => {
    built = build(n, dim, 21);
  });

  it('before any indexing, every vector is found (exact scan), and indexing is due', () => {
    const { index, vectors, r } = built;
    expect(index.hasGraph).toBe(false);
    expect(index.needsIndexing).toBe(true);
    for (let q = 0; q < 5; q++) {
      const query = randomUnit(r, dim);
      expect(ids(index.search(query, { k: 10, ef: 10 }))).toEqual(
        ids(bruteForce(vectors, query, 10)),
      );
    }
  });

  it('draining indexSome builds the graph; then results at high ef are a subset of the exact top k', () => {
    const { index, vectors, r } = built;
    drain(index);
    expect(index.hasGraph).toBe(true);
    expect(index.needsIndexing).toBe(false);
    for (let q = 0; q < 30; q++) {
      const query = randomUnit(r, dim);
      const exact = bruteForce(vectors, query, 10);
      const exactIds = new Set(ids(exact));
      const got = index.search(query, { k: 10, ef: n });
      expect(got).toHaveLength(10);
      expectSortedDesc(got);
      for (const g of got) {
        expect(exactIds.has(g.id), `${g.id} is not in the exact top 10`).toBe(true);
        expect(g.sim).toBeCloseTo(dotp(query, vectors.get(g.id) as Float32Array), 5);
      }
    }
  });

  it('recall@10 against the exact top 10 is at least 0.95 (384-d uniform random vectors, ef 200)', () => {
    const { index, vectors, r } = built;
    let hits = 0;
    const queries = 100;
    for (let q = 0; q < queries; q++) {
      const query = randomUnit(r, dim);
      const exact = new Set(ids(bruteForce(vectors, query, 10)));
      for (const g of index.search(query, { k: 10, ef: 200 })) if (exact.has(g.id)) hits += 1;
    }
    expect(hits / (queries * 10)).toBeGreaterThanOrEqual(0.95);
  });

  it('a vector searched with itself as the query comes back first (the id ↔ label map is right)', () => {
    const { index, vectors } = built;
    for (const id of ['v0', 'v1', 'v999', 'v1024', 'v1999']) {
      const [top] = index.search(vectors.get(id) as Float32Array, { k: 1, ef: 50 });
      expect(top?.id).toBe(id);
      expect(top?.sim).toBeCloseTo(1, 5);
    }
  });

  it('indexSome stops after the insertion during which `stop` says a request is waiting', () => {
    const s = build(EXACT_MAX + 300, 16, 41);
    let asked = 0;
    expect(s.index.indexSome(60_000, () => ++asked === 5)).toBe(true);
    expect(asked).toBe(5);
    expect(s.index.pendingSize).toBe(EXACT_MAX + 300 - 5);
    drain(s.index);
    expect(s.index.pendingSize).toBe(0);
  });

  it('a filter applied inside the graph search finds every one of a few matching ids', () => {
    const { index, r } = built;
    const wanted = new Set(['v17', 'v1017', 'v1917']);
    const got = index.search(randomUnit(r, dim), { k: 10, ef: 50, filter: (id) => wanted.has(id) });
    expect(new Set(ids(got))).toEqual(wanted);
  });

  it('new and changed vectors are found while still pending, and after they are indexed', () => {
    const { index, vectors, r } = built;
    const query = randomUnit(r, dim);
    const fresh = ['p0', 'p1', 'p2'].map((id) => [id, near(r, query)] as const);
    for (const [id, v] of fresh) {
      index.upsert(id, v);
      vectors.set(id, v);
    }
    // v5 moves next to the query; its old position in the graph must not be reported.
    const moved = near(r, query);
    const oldV5 = vectors.get('v5') as Float32Array;
    index.upsert('v5', moved);
    vectors.set('v5', moved);
    expect(index.needsIndexing).toBe(true);
    const check = (): void => {
      const got = index.search(query, { k: 4, ef: 50 });
      expect(new Set(ids(got))).toEqual(new Set(['p0', 'p1', 'p2', 'v5']));
      for (const g of got)
        expect(g.sim).toBeCloseTo(dotp(query, vectors.get(g.id) as Float32Array), 5);
      const [self] = index.search(oldV5, { k: 1, ef: 50 });
      expect(self?.id).not.toBe('v5');
    };
    check();
    drain(index);
    expect(index.needsIndexing).toBe(false);
    check();
  });

  it('removed vectors never come back: indexed ones, pending ones, and at any ef', () => {
    const { index, vectors, r } = built;
    const pending = randomUnit(r, dim);
    index.upsert('gone-pending', pending);
    index.remove('gone-pending');
    index.remove('v10');
    index.remove('v11');
    const v10 = vectors.get('v10') as Float32Array;
    vectors.delete('v10');
    vectors.delete('v11');
    expect(index.size).toBe(vectors.size);
    for (const query of [pending, v10]) {
      for (const ef of [10, 50, 1000]) {
        const got = ids(index.search(query, { k: 10, ef }));
        expect(got).not.toContain('gone-pending');
        expect(got).not.toContain('v10');
        expect(got).not.toContain('v11');
      }
    }
    const got = ids(index.search(v10, { k: 10, ef: n }));
    expect(got).toEqual(ids(bruteForce(vectors, v10, 10)));
  });

  it('a vector added after a removal (its graph label is reused) is indexed and found', () => {
    const { index, vectors, r } = built;
    index.remove('v20');
    vectors.delete('v20');
    const v = randomUnit(r, dim);
    index.upsert('after-remove', v);
    vectors.set('after-remove', v);
    expect(() => drain(index)).not.toThrow();
    expect(index.needsIndexing).toBe(false);
    const [top] = index.search(v, { k: 1, ef: 50 });
    expect(top?.id).toBe('after-remove');
    expect(top?.sim).toBeCloseTo(1, 5);
  });
});

describe('VectorIndex on 32-d data at the default ef_search', () => {
  it('recall@10 against the exact top 10 is at least 0.95 at ef 50', () => {
    const { index, vectors, r } = build(2000, 32, 31);
    drain(index);
    let hits = 0;
    for (let q = 0; q < 100; q++) {
      const query = randomUnit(r, 32);
      const exact = new Set(ids(bruteForce(vectors, query, 10)));
      for (const g of index.search(query, { k: 10, ef: 50 })) if (exact.has(g.id)) hits += 1;
    }
    expect(hits / 1000).toBeGreaterThanOrEqual(0.95);
  });
});

describe('VectorIndex.adoptGraph: a graph saved with a snapshot, then the log replayed on top', () => {
  const dim = 64;
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'flashbulb-vi-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Builds and drains an index of n vectors, saves its graph, and loads it back from the file. */
  function saved(
    n: number,
    seed: number,
    file: string,
    before?: (index: VectorIndex, vectors: Map<string, Float32Array>) => void,
  ) {
    const b = build(n, dim, seed);
    drain(b.index);
    before?.(b.index, b.vectors);
    const exported = b.index.exportGraph();
    expect(exported).not.toBeNull();
    const path = join(dir, file);
    exported?.hnsw.save(path);
    return {
      ...b,
      graph: Hnsw.load(path, dim),
      labels: exported?.labels ?? [],
      nextLabel: exported?.nextLabel ?? 0,
    };
  }

  it('exportGraph labels every live vector exactly once', () => {
    const s = saved(1100, 41, 'a.bin');
    expect(s.labels).toHaveLength(1100);
    expect(new Set(s.labels.map(([id]) => id))).toEqual(new Set(s.vectors.keys()));
    expect(new Set(s.labels.map(([, label]) => label)).size).toBe(1100);
  });

  it('adopting the graph of the very same vectors needs no indexing and finds every vector', () => {
    const s = saved(1100, 42, 'b.bin');
    const restored = new VectorIndex();
    for (const [id, v] of s.vectors) restored.upsert(id, v);
    restored.adoptGraph(s.graph, s.labels, s.nextLabel);
    expect(restored.hasGraph).toBe(true);
    expect(restored.needsIndexing).toBe(false);
    for (const id of ['v0', 'v550', 'v1099']) {
      expect(restored.search(s.vectors.get(id) as Float32Array, { k: 1, ef: 50 })[0]?.id).toBe(id);
    }
    const query = randomUnit(s.r, dim);
    expect(ids(restored.search(query, { k: 10, ef: 1100 }))).toEqual(
      ids(bruteForce(s.vectors, query, 10)),
    );
  });

  it('vectors added after the save are pending (found at once) and get indexed', () => {
    const s = saved(1100, 43, 'c.bin');
    const restored = new VectorIndex();
    for (const [id, v] of s.vectors) restored.upsert(id, v);
    restored.adoptGraph(s.graph, s.labels, s.nextLabel);
    const added = Array.from({ length: 20 }, (_, i) => [`new${i}`, randomUnit(s.r, dim)] as const);
    for (const [id, v] of added) {
      restored.upsert(id, v);
      s.vectors.set(id, v);
    }
    expect(restored.needsIndexing).toBe(true);
    for (const [id, v] of added) expect(restored.search(v, { k: 1, ef: 50 })[0]?.id).toBe(id);
    drain(restored);
    expect(restored.needsIndexing).toBe(false);
    for (const [id, v] of added) expect(restored.search(v, { k: 1, ef: 50 })[0]?.id).toBe(id);
    for (const id of ['v0', 'v1099'])
      expect(restored.search(s.vectors.get(id) as Float32Array, { k: 1, ef: 50 })[0]?.id).toBe(id);
  });

  it('reconciles a graph whose vectors were partly removed and partly added since it was saved', () => {
    const s = saved(1100, 44, 'd.bin');
    // The state after recovery: the snapshot's vectors minus those forgotten, plus new ones,
    // present before the graph is adopted.
    const removed = ['v0', 'v1', 'v700', 'v1099'];
    const restored = new VectorIndex();
    for (const [id, v] of s.vectors) if (!removed.includes(id)) restored.upsert(id, v);
    const added = Array.from({ length: 10 }, (_, i) => [`new${i}`, randomUnit(s.r, dim)] as const);
    for (const [id, v] of added) restored.upsert(id, v);
    const removedVectors = removed.map((id) => s.vectors.get(id) as Float32Array);
    for (const id of removed) s.vectors.delete(id);
    for (const [id, v] of added) s.vectors.set(id, v);

    restored.adoptGraph(s.graph, s.labels, s.nextLabel);
    expect(restored.size).toBe(s.vectors.size);
    expect(restored.needsIndexing).toBe(true);
    const check = (): void => {
      for (const v of removedVectors) {
        const got = ids(restored.search(v, { k: 10, ef: 1100 }));
        for (const id of removed) expect(got).not.toContain(id);
        expect(got).toEqual(ids(bruteForce(s.vectors, v, 10)));
      }
      for (const [id, v] of added) expect(restored.search(v, { k: 1, ef: 50 })[0]?.id).toBe(id);
      for (const id of ['v2', 'v701', 'v1098'])
        expect(restored.search(s.vectors.get(id) as Float32Array, { k: 1, ef: 50 })[0]?.id).toBe(
          id,
        );
    };
    check();
    expect(() => drain(restored)).not.toThrow();
    expect(restored.needsIndexing).toBe(false);
    check();
  });

  it('a graph saved after removals (deleted points still in the file) takes new vectors after adoption', () => {
    // The highest label was removed before the save: the file still holds it, marked deleted.
    const s = saved(1100, 45, 'e.bin', (index, vectors) => {
      index.remove('v1099');
      vectors.delete('v1099');
    });
    expect(s.labels.map(([id]) => id)).not.toContain('v1099');
    const restored = new VectorIndex();
    for (const [id, v] of s.vectors) restored.upsert(id, v);
    restored.adoptGraph(s.graph, s.labels, s.nextLabel);
    const added = Array.from({ length: 5 }, (_, i) => [`late${i}`, randomUnit(s.r, dim)] as const);
    for (const [id, v] of added) restored.upsert(id, v);
    expect(() => drain(restored)).not.toThrow();
    for (const [id, v] of added) expect(restored.search(v, { k: 1, ef: 50 })[0]?.id).toBe(id);
  });

  it('the same holds for a manifest written without a next label (data directories from before it was saved)', () => {
    const s = saved(1100, 46, 'f.bin', (index, vectors) => {
      index.remove('v1099');
      vectors.delete('v1099');
    });
    const restored = new VectorIndex();
    for (const [id, v] of s.vectors) restored.upsert(id, v);
    restored.adoptGraph(s.graph, s.labels);
    const added = Array.from({ length: 5 }, (_, i) => [`late${i}`, randomUnit(s.r, dim)] as const);
    for (const [id, v] of added) restored.upsert(id, v);
    expect(() => drain(restored)).not.toThrow();
    for (const [id, v] of added) expect(restored.search(v, { k: 1, ef: 50 })[0]?.id).toBe(id);
  });

  it('deleted points in a loaded graph are dropped by a rebuild, so churn across restarts does not grow the graph', () => {
    const removed = Array.from({ length: 100 }, (_, i) => `v${i * 10}`);
    const s = saved(1100, 47, 'g.bin', (index, vectors) => {
      for (const id of removed) {
        index.remove(id);
        vectors.delete(id);
      }
    });
    const restored = new VectorIndex();
    for (const [id, v] of s.vectors) restored.upsert(id, v);
    restored.adoptGraph(s.graph, s.labels, s.nextLabel);
    // Churn: 1500 vectors replaced by new ones (more than the 1024 deleted points that start a rebuild).
    const live = new Map([...s.vectors].filter(([id]) => !removed.includes(id)));
    for (let i = 0; i < 1500; i++) {
      const old = `v${(i * 7) % 1100}`;
      if (live.delete(old)) restored.remove(old);
      const v = randomUnit(s.r, dim);
      live.set(`churn${i}`, v);
      restored.upsert(`churn${i}`, v);
      if (i % 100 === 0) drain(restored);
    }
    drain(restored);
    for (const [id, v] of [...live].slice(-20))
      expect(restored.search(v, { k: 1, ef: 50 })[0]?.id).toBe(id);
    const again = join(dir, 'g2.bin');
    restored.exportGraph()?.hnsw.save(again);
    const raw = new hnswlib.HierarchicalNSW('ip', dim);
    raw.readIndexSync(again);
    // Without the rebuild the graph would hold 1100 + 1500 points; at most 1024 deleted ones wait for one.
    expect(raw.getCurrentCount()).toBeLessThanOrEqual(live.size + 1024);
  });
});
