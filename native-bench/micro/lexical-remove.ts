/**
 * @module native-bench/micro/lexical-remove — what removing one memory from the lexical index costs
 * as the workspace grows, on the forget benchmark's sentences (six topics and shared words, so
 * common terms have postings for most of the workspace): p50, p99 and mean of 1,000 removals.
 *
 *   node --import tsx native-bench/micro/lexical-remove.ts [--sizes 10000,100000]
 */
import { parseArgs } from 'node:util';
import { listFlag } from '../lib/args.ts';
import { LexicalIndex, type LexicalDoc } from '../../src/shard/index/lexical.ts';

const TOPICS = [
  'garden tomato watering',
  'marathon training run',
  'postgres index query',
  'sourdough bread starter',
  'budget review meeting',
  'travel plans to lisbon',
];
const { values } = parseArgs({ options: { sizes: { type: 'string' } } });

for (const n of listFlag(values, 'sizes', ['10000', '100000']).map(Number)) {
  const docs: LexicalDoc[] = Array.from({ length: n }, (_, i) => ({
    content: `${TOPICS[i % 6]} note ${i} about item ${(i * 7919) % 1_000_003}`,
    entityId: `e${i % 20}`,
    context: {},
  }));
  const idx = new LexicalIndex();
  docs.forEach((d, i) => {
    idx.add(`m${i}`, d);
  });
  const ms: number[] = [];
  for (let k = 0; k < 1000; k++) {
    const i = (k * 104_729) % n;
    const t0 = performance.now();
    idx.remove(`m${i}`);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const at = (p: number): string => (ms[Math.floor(p * (ms.length - 1))] ?? 0).toFixed(3);
  console.log(
    `${n} memories: remove p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, mean ${(ms.reduce((a, b) => a + b, 0) / ms.length).toFixed(3)} ms`,
  );
}
