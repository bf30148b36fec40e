/**
 * @module native-bench/micro/hybrid-recall — one hybrid similarity recall inside a shard's state
 * (shard/ops/recall with the benchmark corpus: `n` memories written 1 ms apart, 384-d clustered
 * vectors, one edge each), with no thread hop, no model and no encoding: the shard's own work per
 * recall. Back to back (warm caches), and after a sleep with other memory read in between, as a
 * one-client server's shard thread runs it: woken from idle while the model ran elsewhere.
 *
 *   node --import tsx native-bench/micro/hybrid-recall.ts [--sizes 1000,10000] [--recalls 2000]
 *        [--sleep-ms 9] [--evict-mb 8] [--gather '{"weight":0}']
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { sentence } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { percentile } from '../lib/stats.ts';
import { formatMarkdown, type Cell } from '../lib/table.ts';
import { IdGenerator } from '../../src/model/ids.ts';
import { GATHER } from '../../src/recall/gather.ts';
import { DEFAULT_WEIGHTS, type StrategySpec } from '../../src/recall/types.ts';
import type { OpContext } from '../../src/shard/ops/context.ts';
import { recall } from '../../src/shard/ops/recall.ts';
import { shardRecords, stateOf, WS } from './shard-fixture.ts';
import { load1 } from './quiet.ts';
import { VectorSource } from './vectors.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    recalls: { type: 'string' },
    'sleep-ms': { type: 'string' },
    'evict-mb': { type: 'string' },
    gather: { type: 'string' },
  },
});
// Feedback for list cues to try (recall/gather.ts GATHER, read by the shard): '{"weight":0}' turns it off.
Object.assign(GATHER, JSON.parse(stringFlag(values, 'gather') ?? '{}') as Partial<typeof GATHER>);
const SIZES = (stringFlag(values, 'sizes') ?? '1000,10000').split(',').map(Number);
const RECALLS = numberFlag(values, 'recalls', 2000);
const SLEEP_MS = numberFlag(values, 'sleep-ms', 9);
const EVICT = new Float64Array(numberFlag(values, 'evict-mb', 8) * 131072);
const SPEC: StrategySpec = {
  strategy: 'similarity',
  topK: 10,
  efSearch: 50,
  entityId: null,
  timeRange: null,
  seedId: null,
  edgeTypes: null,
  maxDepth: 0,
  alpha: 0.5,
};

const median = (xs: number[]): number => percentile(Float64Array.from(xs).sort(), 0.5);
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
let sink = 0;

const rows: Cell[][] = [];
for (const n of SIZES) {
  const state = stateOf(shardRecords(n, 3));
  const w = state.workspaces.get(WS);
  if (w === undefined) throw new Error('the fixture wrote no workspace');
  while (w.vectors.indexSome(1000)) {
    // build the whole graph before measuring
  }
  const ctx = {
    state,
    ids: new IdGenerator(),
    nowUs: () => Date.now() * 1000,
    commit: () => Promise.resolve(),
    requestErasure: () => {},
    touch: () => {},
  } satisfies OpContext;
  const rng = new Rng(9);
  const vectors = new VectorSource({ kind: 'clustered', dim: 384, seed: 3 });
  const cues = Array.from({ length: 500 }, () => ({ vector: vectors.next(), text: sentence(rng) }));
  const once = (i: number): void => {
    const cue = cues[i % cues.length] as { vector: Float32Array; text: string };
    const out = recall(ctx, WS, {
      cue: cue.vector,
      cueText: cue.text,
      similarityMode: 'hybrid',
      cueContext: null,
      strategies: [SPEC],
      weights: DEFAULT_WEIGHTS,
      withEmbedding: false,
      filter: null,
    });
    sink += out.results.length;
  };
  for (let i = 0; i < 200; i++) once(i);
  const hot: number[] = [];
  for (let i = 0; i < RECALLS; i++) {
    const t = performance.now();
    once(i);
    hot.push(performance.now() - t);
  }
  const cold: number[] = [];
  for (let i = 0; i < Math.max(50, RECALLS / 8); i++) {
    for (let j = 0; j < EVICT.length; j += 8) sink += EVICT[j] as number;
    await sleep(SLEEP_MS);
    const t = performance.now();
    once(i);
    cold.push(performance.now() - t);
  }
  rows.push([
    n,
    median(hot).toFixed(3),
    mean(hot).toFixed(3),
    median(cold).toFixed(3),
    mean(cold).toFixed(3),
    load1().toFixed(2),
  ]);
}
console.log(
  `\n## Hybrid recall in the shard (top 10, the benchmark corpus: ~30 % of its cues name a time)\n`,
);
console.log(
  formatMarkdown(
    [
      'memories',
      'ms back to back, median',
      'mean',
      `ms after ${SLEEP_MS} ms asleep, ${EVICT.length / 131072} MB read between, median`,
      'mean',
      'load',
    ],
    rows,
  ),
);
console.log(
  `\nShows: the shard's own CPU per hybrid recall, warm and woken from idle (${sink > 0 ? 'results seen' : 'no results'}).`,
);
