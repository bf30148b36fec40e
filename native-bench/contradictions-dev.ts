/**
 * @module native-bench/contradictions-dev — an in-process harness for developing the contradiction
 * rules: the same candidate rule and classifier the shard runs (src/analysis/contradiction.ts), on
 * SICK pairs with their cosines from the default model embedded in process (cached under the OS
 * temporary directory, never in the repository). Seconds per run instead of a server's minutes;
 * the reported figures come from `npm run bench:contradictions` against a live server.
 *
 *   node --import tsx native-bench/contradictions-dev.ts                        # dev: train pairs with an odd pair id
 *   node --import tsx native-bench/contradictions-dev.ts --part check           # train pairs with an even pair id
 *   node --import tsx native-bench/contradictions-dev.ts --split trial --explain
 *   node --import tsx native-bench/contradictions-dev.ts --part all --without scope,opposites   # a rule's gain
 *
 * Flags: --rules (hits and false alarms per rule), --without R1,R2 (rules left out, see
 * ClassifyOptions), --no-lexicon (no WordNet), --cosine-only (candidates by the cosine cut-off alone),
 * --learned (the learned decision after the rules; measured and dropped, native-bench/fit-contradiction.ts).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  classifyPair,
  CONFIDENT,
  isCandidate,
  MIN_SIMILARITY,
  UNCERTAIN,
  type ClassifyOptions,
} from '../src/analysis/contradiction.ts';
import { EMPTY_LEXICON } from '../src/analysis/lexicon.ts';
import { loadLexicon } from '../src/shard/lexicon-loader.ts';
import { listFlag, stringFlag } from './lib/args.ts';
import {
  cosinesOf,
  explain,
  printScore,
  readSick,
  score,
  type Outcome,
  type SickPair,
} from './lib/sick.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      split: { type: 'string' },
      part: { type: 'string' },
      explain: { type: 'boolean' },
      rules: { type: 'boolean' },
      without: { type: 'string' },
      'no-lexicon': { type: 'boolean' },
      'cosine-only': { type: 'boolean' },
      learned: { type: 'boolean' },
    },
  });
  const split = stringFlag(values, 'split') ?? 'train';
  const path = [`../shared/data/sick/SICK_${split}.txt`, `../../shared/data/sick/SICK_${split}.txt`]
    .map((p) => resolve(p))
    .find((p) => existsSync(p));
  const all = path ? readSick(path) : null;
  if (!all) {
    console.log('contradictions-dev skipped: no SICK data (see ../shared/data/README.md)');
    return;
  }
  const part = stringFlag(values, 'part') ?? (split === 'train' ? 'dev' : 'all');
  const pairs = all.filter((p) => part === 'all' || (Number(p.id) % 2 === 1) === (part === 'dev'));
  const cosines = await cosinesOf(split, all);
  const opts: ClassifyOptions = {
    lexicon: values['no-lexicon'] ? EMPTY_LEXICON : await loadLexicon(),
    without: new Set(listFlag(values, 'without', [])),
    learned: values.learned === true,
  };
  const candidate = values['cosine-only']
    ? (_a: string, _b: string, sim: number) => sim >= MIN_SIMILARITY
    : isCandidate;
  const outcomes = pairs.map((p) => judge(p, cosines.get(p.id) ?? 0, opts, candidate));
  if (values.explain) explain(outcomes);
  printScore(`SICK ${split} (${part})`, score(outcomes));
  if (values.rules) byRule(outcomes);
}

function judge(
  pair: SickPair,
  cosine: number,
  opts: ClassifyOptions,
  candidate: typeof isCandidate,
): Outcome {
  if (!candidate(pair.a, pair.b, cosine))
    return {
      pair,
      found: 'none',
      compared: false,
      reason: `cosine ${cosine.toFixed(2)}: not a candidate`,
    };
  const c = classifyPair(pair.a, pair.b, cosine, opts);
  const found =
    c.verdict === 'none' || c.score < UNCERTAIN
      ? 'none'
      : c.score >= CONFIDENT
        ? 'edge'
        : 'pending';
  return {
    pair,
    found,
    compared: true,
    reason: `cosine ${cosine.toFixed(2)}, score ${c.score.toFixed(2)}: ${c.reason}`,
  };
}

/** Flags per rule (the reason's first words): hits and false alarms. */
function byRule(outcomes: readonly Outcome[]): void {
  const rows = new Map<string, { hits: number; alarms: number }>();
  for (const o of outcomes) {
    if (o.found === 'none') continue;
    const rule =
      o.reason
        .replace(/^[^:]*: /, '')
        .split(/[:;]/)[0]
        ?.trim() ?? '';
    const r = rows.get(rule) ?? { hits: 0, alarms: 0 };
    if (o.pair.label === 'CONTRADICTION') r.hits += 1;
    else r.alarms += 1;
    rows.set(rule, r);
  }
  for (const [rule, r] of [...rows].sort((x, y) => y[1].hits - x[1].hits))
    console.log(
      `  ${String(r.hits).padStart(4)} hits ${String(r.alarms).padStart(3)} false alarms  ${rule}`,
    );
}

await main();
