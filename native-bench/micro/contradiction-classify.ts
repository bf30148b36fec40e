/**
 * @module native-bench/micro/contradiction-classify — the contradiction classifier's own cost: µs
 * per `classifyPair` with the real WordNet lexicon, on pairs of the suite's corpus sentences (one
 * to three sentences each, so 10–60 content words a side: the long end of what a check compares).
 * The check runs after the acknowledgement, on the shard's thread, for up to 9 candidates per
 * remember, so this is shard CPU that every write costs under load.
 *
 *   node --import tsx native-bench/micro/contradiction-classify.ts [--pairs 9000] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { numberFlag } from '../lib/args.ts';
import { sentence } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { classifyPair } from '../../src/analysis/contradiction.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';

const { values } = parseArgs({ options: { pairs: { type: 'string' }, rounds: { type: 'string' } } });
const pairs = numberFlag(values, 'pairs', 9000);
const rounds = numberFlag(values, 'rounds', 3);
const lexicon = await loadLexicon();
const rng = new Rng(7);
const texts = Array.from({ length: 4000 }, () => {
  let t = sentence(rng);
  for (let i = rng.int(3); i > 0; i--) t += ` ${sentence(rng)}`;
  return t;
});
const pairAt = (i: number): [string, string] => [texts[(i * 13) % texts.length] as string, texts[(i * 31 + 5) % texts.length] as string];
// Warm-up: the lexicon memoises per word.
for (let i = 0; i < 2000; i++) classifyPair(...pairAt(i + pairs), 0.7, { lexicon });
for (let r = 1; r <= rounds; r++) {
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) classifyPair(...pairAt(i), 0.7, { lexicon });
  console.log(`round ${r}: ${(((performance.now() - t0) / pairs) * 1000).toFixed(1)} µs per classified pair (${pairs} pairs)`);
}
