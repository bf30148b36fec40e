/**
 * @module native-bench/micro/vector-search — the shard's vector index (VectorIndex over hnswlib,
 * M 16, ef_construction 200) against an exact scan of the same vectors: build time, search
 * p50/p99 at ef 50/100/200 with embedding excluded, recall@10 against the exact top 10.
 *
 *   node --import tsx native-bench/micro/vector-search.ts [--quick] [--sizes 10000,100000]
 *        [--kinds clustered,random] [--queries 200]
 *
 * Sizes whose build would take too long here are not run; the table gives the measured build rate
 * and an extrapolation for 1M, marked as such. Pass `--sizes 1000000` to measure it anyway.
 */
import { listFlag, numberFlag } from '../lib/args.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { VectorIndex } from '../../src/shard/index/vector-index.ts';
import { microFlags, numbersFlag, report } from './flags.ts';
import { measure, timed } from './measure.ts';
import { BUSY_NOTE, loadCell, waitForQuiet } from './quiet.ts';
import { VectorSource, type VectorKind } from './vectors.ts';

const DIM = 384;
const K = 10;
const EFS = [50, 100, 200];

interface BuildRow {
  kind: VectorKind;
  n: number;
  buildS: number;
  perS: number;
  rssMb: number;
  load: string;
}

async function runSize(kind: VectorKind, n: number, queryCount: number, timeMs: number): Promise<{ build: BuildRow; rows: Cell[][] }> {
  const source = new VectorSource({ kind, dim: DIM, seed: 7 });
  const index = new VectorIndex();
  for (let i = 0; i < n; i++) index.upsert(`m${i}`, source.next());
  const queries = source.many(queryCount);
  let qi = 0;
  const nextQuery = (): Float32Array => queries[qi++ % queries.length] as Float32Array;
  // Before the graph exists, VectorIndex answers by an exact scan: that is the baseline and the truth.
  const truth = queries.map((q) => new Set(index.search(q, { k: K, ef: K }).map((h) => h.id)));
  const exact = await measure(`exact ${kind} ${n}`, () => void index.search(nextQuery(), { k: K, ef: K }), { timeMs, iterations: 20, warmup: 3 });
  const rows: Cell[][] = [[kind, n, 'exact scan', exact.p50Ms, exact.p99Ms, 1, loadCell(exact.quiet)]];
  const quiet = await waitForQuiet(`build ${kind} ${n}`);
  const rss0 = process.memoryUsage().rss;
  const { ms } = await timed(() => {
    while (index.indexSome(60_000)) {
      /* the shard's background indexer, without its 4 ms slicing */
    }
  });
  const build: BuildRow = { kind, n, buildS: ms / 1000, perS: (n * 1000) / ms, rssMb: (process.memoryUsage().rss - rss0) / 2 ** 20, load: loadCell(quiet) };
  for (const ef of EFS) {
    const found = queries.map((q) => index.search(q, { k: K, ef }));
    const recall = found.reduce((s, hits, i) => s + hits.filter((h) => truth[i]?.has(h.id)).length, 0) / (K * queries.length);
    const m = await measure(`hnsw ${kind} ${n} ef ${ef}`, () => void index.search(nextQuery(), { k: K, ef }), { timeMs, iterations: 200 });
    rows.push([kind, n, `hnsw ef ${ef}`, m.p50Ms, m.p99Ms, recall, loadCell(m.quiet)]);
  }
  return { build, rows };
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
  const { quick, values } = microFlags(['sizes', 'kinds', 'queries']);
  const sizes = numbersFlag(values, 'sizes', quick ? [10_000] : [10_000, 100_000]);
  const kinds = listFlag(values, 'kinds', ['clustered', 'random']) as VectorKind[];
  const queryCount = numberFlag(values, 'queries', quick ? 100 : 200);
  const timeMs = quick ? 1000 : 3000;
  const rows: Cell[][] = [];
  const builds: BuildRow[] = [];
  for (const kind of kinds) {
    for (const n of sizes) {
      const r = await runSize(kind, n, queryCount, timeMs);
      rows.push(...r.rows);
      builds.push(r.build);
      console.log(`  done: ${kind} ${n}`);
    }
  }
  const notes = [BUSY_NOTE, `k = ${K}; queries are fresh points from the same distribution; recall@10 against the exact top 10`];
  for (const kind of kinds) {
    const line = extrapolate(builds.filter((b) => b.kind === kind), 1_000_000);
    if (line) notes.push(line);
  }
  report(
    'Vector search (embedding excluded)',
    formatTable(['vectors', 'n', 'method', 'p50 ms', 'p99 ms', 'recall@10', 'load'], rows),
    'how much faster HNSW is than an exact scan at each size, and what recall each ef buys.',
    notes,
  );
  report(
    'HNSW build (VectorIndex.indexSome, one thread)',
    formatTable(['vectors', 'n', 'build s', 'inserts/s', 'RSS +MB', 'load'], builds.map((b) => [b.kind, b.n, b.buildS, b.perS, b.rssMb, b.load])),
    'how fast the background indexer can absorb writes and how long a rebuild without saved graphs takes.',
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
