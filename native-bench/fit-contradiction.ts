/**
 * @module native-bench/fit-contradiction — fits the learned contradiction decision
 * (src/analysis/contradiction-learned.ts) on SICK's training split only, and writes its weights and
 * threshold to src/analysis/contradiction-weights.ts.
 *
 *   node --import tsx native-bench/fit-contradiction.ts [--l2 0] [--steps 20000] [--rate 2] [--dry-run]
 *   node --import tsx native-bench/fit-contradiction.ts --halves   # fit on odd pair ids, count on even, and back
 *
 * The examples are the training pairs the check compares (the shard's candidate rule) and no hand
 * rule flags; label 1 for CONTRADICTION. A logistic regression is fitted by full-batch gradient
 * descent with an L2 penalty. The threshold is the lowest probability at which the rules' and the
 * model's false alarms together stay at most 1 per 100 entailing and 1 per 100 neutral pairs.
 * The trial split is not read here: it is the held-out check (native-bench/contradictions-dev.ts).
 * The cosines come from FLASHBULB_MODEL_DIR's model, else the server's default (lib/sick.ts).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { classifyPair, featuresOf, isCandidate, UNCERTAIN } from '../src/analysis/contradiction.ts';
import { FEATURES } from '../src/analysis/contradiction-features.ts';
import { probability } from '../src/analysis/contradiction-learned.ts';
import type { Lexicon } from '../src/analysis/lexicon.ts';
import { loadLexicon } from '../src/shard/lexicon-loader.ts';
import { numberFlag } from './lib/args.ts';
import { benchModelDir, cosinesOf, readSick, type Label, type SickPair } from './lib/sick.ts';

const FALSE_ALARMS_PER_100 = 1;

interface Example {
  x: number[];
  label: Label;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      halves: { type: 'boolean' },
      l2: { type: 'string' },
      steps: { type: 'string' },
      rate: { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
  });
  const path = [
    resolve('../shared/data/sick/SICK_train.txt'),
    resolve('../../shared/data/sick/SICK_train.txt'),
  ].find((p) => existsSync(p));
  const pairs = path ? readSick(path) : null;
  if (!pairs) {
    console.log('fit-contradiction skipped: no SICK data (see ../shared/data/README.md)');
    return;
  }
  const cosines = await cosinesOf('train', pairs);
  const lexicon = await loadLexicon();
  const l2 = numberFlag(values, 'l2', 0);
  const steps = numberFlag(values, 'steps', 20000);
  const rate = numberFlag(values, 'rate', 2);
  if (values.halves) {
    // Fit and pick the threshold on one half of the training pairs (by pair id), count on the other.
    for (const odd of [true, false]) {
      const [fitOn, checkOn] = [0, 1].map((k) =>
        setOf(
          pairs.filter((p) => (Number(p.id) % 2 === 1) === (odd === (k === 0))),
          cosines,
          lexicon,
        ),
      );
      const m = fit((fitOn as TrainingSet).examples, l2, steps, rate);
      const t = pickThreshold(fitOn as TrainingSet, m.weights, m.bias);
      console.log(`fitted on ${odd ? 'odd' : 'even'} ids, counted on the others:`);
      report(checkOn as TrainingSet, m.weights, m.bias, t);
    }
    return;
  }
  const set = setOf(pairs, cosines, lexicon);
  const { weights, bias } = fit(set.examples, l2, steps, rate);
  const threshold = pickThreshold(set, weights, bias);
  FEATURES.forEach((f, i) => {
    console.log(`  ${f.padEnd(24)} ${(weights[i] ?? 0).toFixed(3)}`);
  });
  console.log(`  bias ${bias.toFixed(3)}; threshold ${threshold.toFixed(4)}`);
  report(set, weights, bias, threshold);
  if (!values['dry-run']) write(weights, bias, threshold, means(set.examples));
}

interface TrainingSet {
  examples: Example[];
  totals: Record<Label, number>;
  /** The pairs the hand rules flag, per label (false alarms but for CONTRADICTION). */
  ruleAlarms: Record<Label, number>;
}

/** The pairs the check compares and no rule flags (the examples), the label counts, the rules' false alarms. */
function setOf(
  pairs: readonly SickPair[],
  cosines: Map<string, number>,
  lexicon: Lexicon,
): TrainingSet {
  const set: TrainingSet = {
    examples: [],
    totals: { CONTRADICTION: 0, ENTAILMENT: 0, NEUTRAL: 0 },
    ruleAlarms: { CONTRADICTION: 0, ENTAILMENT: 0, NEUTRAL: 0 },
  };
  for (const p of pairs) {
    set.totals[p.label] += 1;
    const cos = cosines.get(p.id) ?? 0;
    if (!isCandidate(p.a, p.b, cos)) continue;
    const c = classifyPair(p.a, p.b, cos, { lexicon });
    if (c.verdict !== 'none' && c.score >= UNCERTAIN) set.ruleAlarms[p.label] += 1;
    else set.examples.push({ x: featuresOf(p.a, p.b, cos, lexicon), label: p.label });
  }
  return set;
}

function fit(
  examples: readonly Example[],
  l2: number,
  steps: number,
  rate: number,
): { weights: number[]; bias: number } {
  const w = FEATURES.map(() => 0);
  let b = 0;
  for (let step = 0; step < steps; step++) {
    const gw = w.map(() => 0);
    let gb = 0;
    for (const e of examples) {
      const err = probability(e.x, w, b) - (e.label === 'CONTRADICTION' ? 1 : 0);
      e.x.forEach((v, i) => {
        gw[i] = (gw[i] ?? 0) + err * v;
      });
      gb += err;
    }
    w.forEach((v, i) => {
      w[i] = v - rate * ((gw[i] ?? 0) / examples.length + l2 * v);
    });
    b -= (rate * gb) / examples.length;
  }
  return { weights: w, bias: b };
}

/** The lowest probability keeping false alarms (rules' and model's) within the limit per label. */
function pickThreshold(
  { examples, totals, ruleAlarms }: TrainingSet,
  w: readonly number[],
  b: number,
): number {
  const scored = examples
    .map((e) => ({ p: probability(e.x, w, b), label: e.label }))
    .sort((x, y) => y.p - x.p);
  const budget = (l: Label): number =>
    Math.floor((FALSE_ALARMS_PER_100 * totals[l]) / 100) - ruleAlarms[l];
  const alarms: Record<Label, number> = { CONTRADICTION: 0, ENTAILMENT: 0, NEUTRAL: 0 };
  let last = 1;
  for (const s of scored) {
    // Halfway between the last pair let in and the first kept out: rounding the weights cannot tip either.
    if (s.label !== 'CONTRADICTION' && alarms[s.label] + 1 > budget(s.label))
      return (last + s.p) / 2;
    alarms[s.label] += 1;
    last = s.p;
  }
  return last;
}

function report(
  { examples, totals, ruleAlarms }: TrainingSet,
  w: readonly number[],
  b: number,
  t: number,
): void {
  const caught: Record<Label, number> = { CONTRADICTION: 0, ENTAILMENT: 0, NEUTRAL: 0 };
  for (const e of examples) if (probability(e.x, w, b) >= t) caught[e.label] += 1;
  console.log(
    `  examples (compared, no rule fired): ${examples.length}; rules' false alarms: ${ruleAlarms.ENTAILMENT} entailment, ${ruleAlarms.NEUTRAL} neutral`,
  );
  console.log(
    `  learned decision: +${caught.CONTRADICTION} of ${totals.CONTRADICTION} contradictions, +${caught.ENTAILMENT} entailment, +${caught.NEUTRAL} neutral false alarms`,
  );
  const per100 = (l: Label): string => ((100 * (ruleAlarms[l] + caught[l])) / totals[l]).toFixed(2);
  console.log(
    `  rules + learned: recall ${((ruleAlarms.CONTRADICTION + caught.CONTRADICTION) / totals.CONTRADICTION).toFixed(3)}, false alarms per 100 entailment ${per100('ENTAILMENT')}, per 100 neutral ${per100('NEUTRAL')}`,
  );
}

/** Each feature's mean over the examples: the learned `reason` names the feature furthest above its mean, by weight. */
function means(examples: readonly Example[]): number[] {
  return FEATURES.map(
    (_, i) => examples.reduce((sum, e) => sum + (e.x[i] ?? 0), 0) / Math.max(1, examples.length),
  );
}

function write(w: readonly number[], b: number, t: number, m: readonly number[]): void {
  const lines = [
    '/**',
    " * @module analysis/contradiction-weights — the learned contradiction decision's weights (FEATURES",
    " * order, analysis/contradiction-features), bias, threshold, and the features' means over the",
    ' * training examples (for naming the feature that decided). Written by',
    " * `node --import tsx native-bench/fit-contradiction.ts` from SICK's training split with the cosines of",
    ` * ${basename(benchModelDir())} (the \`cosine\` feature; refit for another model); do not edit by hand.`,
    ' */',
    `export const WEIGHTS: readonly number[] = [${w.map((v) => v.toFixed(6)).join(', ')}];`,
    `export const BIAS = ${b.toFixed(6)};`,
    `export const THRESHOLD = ${t.toFixed(6)};`,
    `export const MEANS: readonly number[] = [${m.map((v) => v.toFixed(6)).join(', ')}];`,
    '',
  ];
  writeFileSync(resolve('src/analysis/contradiction-weights.ts'), lines.join('\n'));
}

await main();
