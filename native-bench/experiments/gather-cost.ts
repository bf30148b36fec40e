/**
 * @module native-bench/experiments/gather-cost — what the second pass for cues that ask for several
 * things (recall/gather.ts) costs: hybrid recalls in a shard's state of `n` benchmark memories
 * (as micro/hybrid-recall.ts), each cue asked with the feedback off and on in turn (so both see the
 * same load), over the corpus's cues as they are (some ask for several: they name "all", "each")
 * and the same cues asked as a count ("How many times …"). Prints the median and mean of each.
 *
 *   node --import tsx native-bench/experiments/gather-cost.ts [--size 10000] [--recalls 2000]
 */
import { parseArgs } from 'node:util';
import { IdGenerator } from '../../src/model/ids.ts';
import { asksForSeveral, GATHER } from '../../src/recall/gather.ts';
import { DEFAULT_WEIGHTS, type StrategySpec } from '../../src/recall/types.ts';
import type { OpContext } from '../../src/shard/ops/context.ts';
import { recall } from '../../src/shard/ops/recall.ts';
import { numberFlag } from '../lib/args.ts';
import { sentence } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { percentile } from '../lib/stats.ts';
import { load1 } from '../micro/quiet.ts';
import { shardRecords, stateOf, WS } from '../micro/shard-fixture.ts';
import { VectorSource } from '../micro/vectors.ts';

const { values } = parseArgs({
  options: { size: { type: 'string' }, recalls: { type: 'string' } },
});
const N = numberFlag(values, 'size', 10_000);
const RECALLS = numberFlag(values, 'recalls', 2000);
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
const ON = GATHER.weight;
const state = stateOf(shardRecords(N, 3));
const w = state.workspaces.get(WS);
if (w === undefined) throw new Error('the fixture wrote no workspace');
while (w.vectors.indexSome(1000)) {
  // the whole graph before measuring
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
const time = (vector: Float32Array, text: string, weight: number): number => {
  GATHER.weight = weight;
  const t = performance.now();
  recall(ctx, WS, {
    cue: vector,
    cueText: text,
    similarityMode: 'hybrid',
    cueContext: null,
    strategies: [SPEC],
    weights: DEFAULT_WEIGHTS,
    withEmbedding: false,
    filter: null,
  });
  return performance.now() - t;
};
const stats = (xs: number[]): string => {
  const s = Float64Array.from(xs).sort();
  return `median ${percentile(s, 0.5).toFixed(3)} ms, mean ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3)} ms`;
};
for (const [label, textOf] of [
  ['the corpus cues', (t: string) => t],
  ['asked as a count', (t: string) => `How many times ${t}`],
] as const) {
  const off: number[] = [];
  const on: number[] = [];
  let several = 0;
  for (let i = 0; i < 200; i++)
    time(cues[i]?.vector as Float32Array, textOf(cues[i]?.text ?? ''), ON);
  for (let i = 0; i < RECALLS; i++) {
    const cue = cues[i % cues.length] as { vector: Float32Array; text: string };
    const text = textOf(cue.text);
    if (i < cues.length && asksForSeveral(text)) several += 1;
    // Which goes first alternates, so neither always finds the caches the other left.
    if (i % 2 === 0) {
      off.push(time(cue.vector, text, 0));
      on.push(time(cue.vector, text, ON));
    } else {
      on.push(time(cue.vector, text, ON));
      off.push(time(cue.vector, text, 0));
    }
  }
  console.log(
    `${N} memories, ${label} (${several} of ${Math.min(RECALLS, cues.length)} ask for several), load ${load1().toFixed(2)}: off ${stats(off)}; on (weight ${ON}) ${stats(on)}`,
  );
}
GATHER.weight = ON;
