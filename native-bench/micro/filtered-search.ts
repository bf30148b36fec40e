/**
 * @module native-bench/micro/filtered-search — similarity search with a metadata filter applied
 * inside the HNSW search (hnswlib's filter callback, as shard/ops/recall-source.ts passes it),
 * at several selectivities, against an exact filtered scan of the same vectors: latency,
 * recall@10 and whether top_k came back whenever that many matched.
 *
 *   node --import tsx native-bench/micro/filtered-search.ts [--n 20000] [--time-ms 2000]
 */
import { parseArgs } from 'node:util';
import { numberFlag } from '../lib/args.ts';
import { formatMarkdown, type Cell } from '../lib/table.ts';
import { VectorIndex } from '../../src/shard/index/vector-index.ts';
import { measure, timed } from './measure.ts';
import { loadCell } from './quiet.ts';
import { VectorSource } from './vectors.ts';

const { values } = parseArgs({ options: { n: { type: 'string' }, 'time-ms': { type: 'string' } } });
const N = numberFlag(values, 'n', 20_000);
const TIME_MS = numberFlag(values, 'time-ms', 2000);
const K = 10;
const EF = 50;
const SELECTIVITIES = [1, 0.5, 0.1, 0.01, 0.001];

const source = new VectorSource({ kind: 'clustered', dim: 384, seed: 11 });
const vectors = source.many(N);
const queries = source.many(100);
const index = new VectorIndex();
vectors.forEach((v, i) => {
  index.upsert(`m${i}`, v);
});
const exactIndex = new VectorIndex();
vectors.forEach((v, i) => {
  exactIndex.upsert(`m${i}`, v);
});
const { ms: buildMs } = await timed(() => {
  while (index.indexSome(60_000)) {
    /* build the graph */
  }
});
console.log(`${N} clustered 384-d vectors; HNSW built in ${(buildMs / 1000).toFixed(1)} s`);

/** A deterministic pseudo-random subset, independent of the clusters. */
function accepts(selectivity: number): (id: string) => boolean {
  const every = Math.round(1 / selectivity);
  return (id) => {
    const n = Number(id.slice(1));
    return Math.imul(n, 2654435761) >>> 0 < 4294967296 / every;
  };
}

const rows: Cell[][] = [];
for (const s of SELECTIVITIES) {
  const filter = s === 1 ? undefined : accepts(s);
  const matching = vectors.filter((_, i) => (filter ? filter(`m${i}`) : true)).length;
  let qi = 0;
  const q = (): Float32Array => queries[qi++ % queries.length] as Float32Array;
  // exactIndex has no graph, so it answers by an exact (filtered) scan: the truth.
  let hit = 0;
  let full = 0;
  for (const query of queries) {
    const want = new Set(
      exactIndex.search(query, { k: K, ef: K, ...(filter ? { filter } : {}) }).map((x) => x.id),
    );
    const got = index.search(query, { k: K, ef: EF, ...(filter ? { filter } : {}) });
    hit += got.filter((x) => want.has(x.id)).length;
    if (got.length === Math.min(K, matching)) full += 1;
  }
  const hnsw = await measure(
    `hnsw filter ${s}`,
    () => void index.search(q(), { k: K, ef: EF, ...(filter ? { filter } : {}) }),
    { timeMs: TIME_MS, iterations: 100 },
  );
  const exact = await measure(
    `exact filter ${s}`,
    () => void exactIndex.search(q(), { k: K, ef: K, ...(filter ? { filter } : {}) }),
    { timeMs: TIME_MS, iterations: 20, warmup: 3 },
  );
  rows.push([
    s,
    matching,
    hnsw.p50Ms,
    hnsw.p99Ms,
    hit / (K * queries.length),
    `${full}/${queries.length}`,
    exact.p50Ms,
    exact.p99Ms,
    loadCell(hnsw.quiet),
  ]);
}
console.log(
  formatMarkdown(
    [
      'selectivity',
      'matching',
      'HNSW p50 ms',
      'HNSW p99 ms',
      'recall@10',
      'top_k returned',
      'exact p50 ms',
      'exact p99 ms',
      'load',
    ],
    rows,
  ),
);
