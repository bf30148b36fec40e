/**
 * @module native-bench/micro/exact-scan — the exact scan of a workspace too small for a graph
 * (VectorIndex below EXACT_MAX): the native scan an unfiltered search takes against the JS scan
 * (the same search given every id through `only`, which is the code the unfiltered search ran
 * before the native copy), for the hybrid recall's 30 candidates. Each search runs back to back,
 * and again after a sleep, as a one-client server's shard thread runs it: woken from idle.
 *
 *   node --import tsx native-bench/micro/exact-scan.ts [--sizes 100,300,1000] [--sleep-ms 9]
 *        [--searches 400]
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { percentile } from '../lib/stats.ts';
import { formatMarkdown, type Cell } from '../lib/table.ts';
import { VectorIndex } from '../../src/shard/index/vector-index.ts';
import { CANDIDATE_DEPTH } from '../../src/recall/strategies.ts';
import { load1 } from './quiet.ts';
import { VectorSource } from './vectors.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    'sleep-ms': { type: 'string' },
    searches: { type: 'string' },
  },
});
const SIZES = (stringFlag(values, 'sizes') ?? '100,300,1000').split(',').map(Number);
const SLEEP_MS = numberFlag(values, 'sleep-ms', 9);
const SEARCHES = numberFlag(values, 'searches', 400);
const DIM = 384;

const median = (xs: number[]): number => percentile(Float64Array.from(xs).sort(), 0.5);

const rows: Cell[][] = [];
for (const n of SIZES) {
  const source = new VectorSource({ kind: 'clustered', dim: DIM, seed: 5 });
  const index = new VectorIndex();
  const ids: string[] = [];
  source.many(n).forEach((v, i) => {
    index.upsert(`m${i}`, v);
    ids.push(`m${i}`);
  });
  const queries = source.many(100);
  const ways: Array<[string, (q: Float32Array) => unknown]> = [
    ['JS scan', (q) => index.search(q, { k: CANDIDATE_DEPTH, ef: CANDIDATE_DEPTH, only: ids })],
    ['native scan', (q) => index.search(q, { k: CANDIDATE_DEPTH, ef: CANDIDATE_DEPTH })],
  ];
  // Same answers, or the comparison means nothing.
  for (const q of queries.slice(0, 10)) {
    const [a, b] = ways.map(([, f]) => JSON.stringify(f(q)));
    if (a !== b) throw new Error(`n ${n}: the native and JS scans disagree`);
  }
  for (const [name, f] of ways) {
    const hot: number[] = [];
    const cold: number[] = [];
    for (let i = 0; i < SEARCHES; i++) {
      const q = queries[i % queries.length] as Float32Array;
      const t = performance.now();
      f(q);
      hot.push(performance.now() - t);
    }
    for (let i = 0; i < Math.max(20, SEARCHES / 8); i++) {
      await sleep(SLEEP_MS);
      const q = queries[i % queries.length] as Float32Array;
      const t = performance.now();
      f(q);
      cold.push(performance.now() - t);
    }
    rows.push([n, name, median(hot).toFixed(4), median(cold).toFixed(4), load1().toFixed(2)]);
  }
}
console.log(
  `\n## Exact scan below EXACT_MAX (${DIM}-d clustered vectors, k ${CANDIDATE_DEPTH}; medians)\n`,
);
console.log(
  formatMarkdown(
    ['vectors', 'scan', 'ms back to back', `ms after ${SLEEP_MS} ms asleep`, 'load'],
    rows,
  ),
);
console.log(
  "\nShows: what the shard thread spends on a small workspace's dense candidates, busy and woken from idle.",
);
