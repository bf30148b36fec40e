/**
 * @module native-bench/micro/contradiction-classify — the contradiction classifier's own cost with
 * the real WordNet lexicon, on the suite's corpus sentences (one to three sentences each, so 10–60
 * content words a side: the long end of what a check compares): µs per `classifyPair` of two
 * statements never seen before, and µs per check as the shard runs it after a remember (the new
 * statement against 9 earlier ones, drawn from the last 1,000). The check runs after the
 * acknowledgement, on the shard's thread, so this is shard CPU that every write costs under load.
 *
 *   node --import tsx native-bench/micro/contradiction-classify.ts [--pairs 9000] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { numberFlag } from '../lib/args.ts';
import { sentence } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { classifyPair } from '../../src/analysis/contradiction.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';

const { values } = parseArgs({
  options: { pairs: { type: 'string' }, rounds: { type: 'string' } },
});
const pairs = numberFlag(values, 'pairs', 9000);
const rounds = numberFlag(values, 'rounds', 3);
const lexicon = await loadLexicon();
const rng = new Rng(7);
const texts = Array.from({ length: 4000 }, () => {
  let t = sentence(rng);
  for (let i = rng.int(3); i > 0; i--) t += ` ${sentence(rng)}`;
  return t;
});
const pairAt = (i: number): [string, string] => [
  texts[(i * 13) % texts.length] as string,
  texts[(i * 31 + 5) % texts.length] as string,
];
// Warm-up: the lexicon memoises per word.
for (let i = 0; i < 2000; i++) classifyPair(...pairAt(i + pairs), 0.7, { lexicon });
const fresh = (i: number): [string, string] => [
  `${texts[(i * 13) % texts.length] as string} #${i}`,
  `${texts[(i * 31 + 5) % texts.length] as string} #${i}`,
];
const checks = Math.floor(pairs / 9);
for (let r = 1; r <= rounds; r++) {
  let t0 = performance.now();
  for (let i = 0; i < pairs; i++) classifyPair(...fresh(i + r * pairs), 0.7, { lexicon });
  const perPair = ((performance.now() - t0) / pairs) * 1000;
  t0 = performance.now();
  for (let c = 0; c < checks; c++) {
    const at = 1000 + ((c + r * checks) % (texts.length - 1000));
    for (let j = 0; j < 9; j++)
      classifyPair(texts[at - 1 - rng.int(1000)] as string, texts[at] as string, 0.7, { lexicon });
  }
  const perCheck = ((performance.now() - t0) / checks) * 1000;
  console.log(
    `round ${r}: ${perPair.toFixed(1)} µs per pair of new statements; ${perCheck.toFixed(0)} µs per check of 9 pairs (${pairs} pairs, ${checks} checks)`,
  );
}
