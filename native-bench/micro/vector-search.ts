/**
 * @module native-bench/micro/vector-search — the shard's vector index (VectorIndex over hnswlib,
 * M 16, ef_construction 100) against an exact scan of the same vectors: build time, search
 * p50/p99 at ef 50/100/200 with embedding excluded, recall@10 against the exact top 10.
 *
 *   node --import tsx native-bench/micro/vector-search.ts [--quick] [--sizes 10000,100000]
 *        [--kinds clustered,random,real] [--queries 200] [--ef-construction 200,100]
 *
 * Vector sets (vectors.ts): clustered and random synthetic ones at each size, and `real`: the
 * default model's embeddings of the English sentences found on this machine (real-vectors.ts;
 * about 20k, embedded once and cached), at that one size. `--ef-construction`: each build beam
 * listed gets its own graph of the same vectors (default: the shard's, EF_CONSTRUCTION).
 *
 * Sizes whose build would take too long here are not run; the table gives the measured build rate
 * and an extrapolation for 1M, marked as such. Pass `--sizes 1000000` to measure it anyway.
 */
import { listFlag, numberFlag } from '../lib/args.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { EF_CONSTRUCTION } from '../../src/shard/index/hnsw.ts';
import { VectorIndex } from '../../src/shard/index/vector-index.ts';
import { microFlags, numbersFlag, report } from './flags.ts';
import { measure, timed } from './measure.ts';
import { BUSY_NOTE, loadCell, waitForQuiet } from './quiet.ts';
import { realVectors } from './real-vectors.ts';
import { hardness } from './vector-stats.ts';
import { VectorSource, type VectorKind } from './vectors.ts';

const DIM = 384;
const K = 10;
const EFS = [50, 100, 200];
/** Real sentences to embed at most (the machine's text yields about 20k). */
const REAL_MAX = 20_000;

interface BuildRow {
  kind: DataKind;
  efc: number;
  n: number;
  buildS: number;
  perS: number;
  rssMb: number;
  load: string;
}

type DataKind = VectorKind | 'real';

interface Dataset {
  vectors: Float32Array[];
  queries: Float32Array[];
}

/** Synthetic sets are generated at size `n`; the real set is what the machine's text yields. */
async function dataset(kind: DataKind, n: number, queryCount: number): Promise<Dataset> {
  if (kind === 'real') {
    const all = await realVectors(REAL_MAX + queryCount);
    return {
      vectors: all.slice(0, all.length - queryCount),
      queries: all.slice(all.length - queryCount),
    };
  }
  const source = new VectorSource({ kind, dim: DIM, seed: 7 });
  return { vectors: source.many(n), queries: source.many(queryCount) };
}

async function runSize(
  kind: DataKind,
  data: Dataset,
  timeMs: number,
  efc: number,
): Promise<{ build: BuildRow; rows: Cell[][]; hard: Cell[] }> {
  const n = data.vectors.length;
  const { queries } = data;
  const index = new VectorIndex({ efConstruction: efc });
  data.vectors.forEach((v, i) => {
    index.upsert(`m${i}`, v);
  });
  let qi = 0;
  const nextQuery = (): Float32Array => queries[qi++ % queries.length] as Float32Array;
  // Before the graph exists, VectorIndex answers by an exact scan: that is the baseline and the truth.
  const exactTop = queries.map((q) => index.search(q, { k: 20, ef: 20 }));
  const truth = exactTop.map((hits) => new Set(hits.slice(0, K).map((h) => h.id)));
  const h = hardness(
    exactTop.map((hits) => hits.map((x) => x.sim)),
    data.vectors.slice(0, 2000),
  );
  const hard: Cell[] = [kind, n, h.nn1, h.nn10, h.randomPair, h.lid];
  const exact = await measure(
    `exact ${kind} ${n}`,
    () => void index.search(nextQuery(), { k: K, ef: K }),
    { timeMs, iterations: 20, warmup: 3 },
  );
  const rows: Cell[][] = [
    [kind, n, efc, 'exact scan', exact.p50Ms, exact.p99Ms, 1, loadCell(exact.quiet)],
  ];
  const quiet = await waitForQuiet(`build ${kind} ${n}`);
  const rss0 = process.memoryUsage().rss;
  const { ms } = await timed(() => {
    while (index.indexSome(60_000)) {
      /* the shard's background indexer, without its 4 ms slicing */
    }
  });
  const build: BuildRow = {
    kind,
    efc,
    n,
    buildS: ms / 1000,
    perS: (n * 1000) / ms,
    rssMb: (process.memoryUsage().rss - rss0) / 2 ** 20,
    load: loadCell(quiet),
  };
  for (const ef of EFS) {
    const found = queries.map((q) => index.search(q, { k: K, ef }));
    const recall =
      found.reduce((s, hits, i) => s + hits.filter((x) => truth[i]?.has(x.id)).length, 0) /
      (K * queries.length);
    const m = await measure(
      `hnsw ${kind} ${n} ef ${ef}`,
      () => void index.search(nextQuery(), { k: K, ef }),
      { timeMs, iterations: 200 },
    );
    rows.push([kind, n, efc, `hnsw ef ${ef}`, m.p50Ms, m.p99Ms, recall, loadCell(m.quiet)]);
  }
  return { build, rows, hard };
}

/** Per-insert cost grows about with log n; extrapolate the 1M build from the two largest sizes. */
function extrapolate(builds: readonly BuildRow[], target: number): string | null {
  const sorted = [...builds].sort((a, b) => a.n - b.n);
  const a = sorted[sorted.length - 2];
  const b = sorted[sorted.length - 1];
  if (!a || !b || b.n >= target) return null;
  const perA = 1 / a.perS;
  const perB = 1 / b.perS;
  const slope = (perB - perA) / Math.log10(b.n / a.n);
  const perT = perB + slope * Math.log10(target / b.n);
  const minutes = (target * ((perB + perT) / 2)) / 60;
  return `${b.kind} ${target.toLocaleString('en')}: NOT MEASURED; extrapolated build ≈ ${minutes.toFixed(0)} min on one core (${(1 / perT).toFixed(0)} inserts/s at the end)`;
}

async function main(): Promise<void> {
  const { quick, values } = microFlags(['sizes', 'kinds', 'queries', 'ef-construction']);
  const efcs = numbersFlag(values, 'ef-construction', [EF_CONSTRUCTION]);
  const sizes = numbersFlag(values, 'sizes', quick ? [10_000] : [10_000, 100_000]);
  const kinds = listFlag(
    values,
    'kinds',
    quick ? ['clustered', 'random'] : ['clustered', 'random', 'real'],
  ) as DataKind[];
  const queryCount = numberFlag(values, 'queries', quick ? 100 : 200);
  const timeMs = quick ? 1000 : 3000;
  const rows: Cell[][] = [];
  const hard: Cell[][] = [];
  const builds: BuildRow[] = [];
  for (const kind of kinds) {
    for (const n of kind === 'real' ? [REAL_MAX] : sizes) {
      const data = await dataset(kind, n, queryCount);
      for (const [i, efc] of efcs.entries()) {
        const r = await runSize(kind, data, timeMs, efc);
        rows.push(...r.rows);
        if (i === 0) hard.push(r.hard);
        builds.push(r.build);
        console.log(`  done: ${kind} ${r.build.n}, ef_construction ${efc}`);
      }
    }
  }
  const notes = [
    BUSY_NOTE,
    `k = ${K}; ${queryCount} queries, fresh points from the same distribution (held-out sentences for real); recall@10 against the exact top 10`,
  ];
  for (const kind of kinds) {
    const line = extrapolate(
      builds.filter((b) => b.kind === kind && b.efc === efcs[0]),
      1_000_000,
    );
    if (line) notes.push(line);
  }
  report(
    'Vector search (embedding excluded)',
    formatTable(
      ['vectors', 'n', 'ef_construction', 'method', 'p50 ms', 'p99 ms', 'recall@10', 'load'],
      rows,
    ),
    'how much faster HNSW is than an exact scan at each size, and what recall each ef buys.',
    notes,
  );
  report(
    'HNSW build (VectorIndex.indexSome, one thread)',
    formatTable(
      ['vectors', 'n', 'ef_construction', 'build s', 'inserts/s', 'RSS +MB', 'load'],
      builds.map((b) => [b.kind, b.n, b.efc, b.buildS, b.perS, b.rssMb, b.load]),
    ),
    'how fast the background indexer can absorb writes and how long a rebuild without saved graphs takes.',
  );
  report(
    'How hard each vector set is (from the exact neighbours of the queries)',
    formatTable(
      ['vectors', 'n', 'sim 1st NN', 'sim 10th NN', 'sim random pair', 'LID (k=20)'],
      hard,
    ),
    'where the synthetic sets sit against real embeddings: a higher local intrinsic dimension (LID) and a smaller gap to random pairs mean harder search.',
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
