/**
 * @module native-bench/lib/retrieval-report — how bench:retrieval prints its figures: recall at
 * 5, 10 and 25 per category and overall for each configuration, the cross-validated summary and
 * the Markdown table the benchmarks page takes.
 */
import { chooseOnOthers, type PerConversation } from './retrieval-cv.ts';
import { percentile } from './stats.ts';
import { formatMarkdown, formatTable } from './table.ts';
import { perCategoryFolds, printFolds, type QuestionScore } from './retrieval-folds.ts';

/** The dataset's scored categories (LoCoMo's, or LifeBench's question types): set once the data is read. */
export const CATEGORY_NAMES: Record<number, string> = {};

export const KS = [5, 10, 25] as const;

export interface Scores {
  /** Per category (and 0 = overall): summed recall@k and the number of questions. */
  sums: Map<number, { n: number; at: number[] }>;
  /** The overall sums per conversation (its index in the data file), for `--cv`. */
  byConv: PerConversation;
  /** Every question's recall@k, for the per-category folds of `--cv`. */
  questions: QuestionScore[];
  latenciesMs: number[];
}

/**
 * `--cv`: leave-one-conversation-out recall@5/@10 per configuration, mean ± sd and range over folds,
 * then per configuration R@5 and R@10 per category in every fold.
 */
export function printCv(
  summaries: ReadonlyArray<[string, Scores]>,
  convs: readonly number[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const headers = [
    'configuration',
    'folds',
    'R@5 mean',
    'R@5 sd',
    'R@5 min–max',
    'R@10 mean',
    'R@10 sd',
    'R@10 min–max',
  ];
  const rows = summaries.map(([name, s]) => {
    const f = chooseOnOthers([[name, s.byConv]], convs, KS.length, 1);
    out[name] = f;
    const cell = (i: number): string[] => [
      round3(f.mean[i] ?? 0),
      round3(f.sd[i] ?? 0),
      `${round3(f.min[i] ?? 0)}–${round3(f.max[i] ?? 0)}`,
    ];
    return [
      name,
      f.folds.map((x) => `${x.heldOut}:${round3(x.at[1] ?? 0)}`).join(' '),
      ...cell(0),
      ...cell(1),
    ];
  });
  console.log(
    `\n## leave-one-conversation-out (held-out recall per fold; nothing in a configuration is fitted per fold)\n`,
  );
  console.log(formatMarkdown(headers, rows));
  for (const [name, s] of summaries) {
    console.log(`\n### ${name}: per category, every fold\n`);
    printFolds(perCategoryFolds(s.questions, CATEGORY_NAMES, KS.length), CATEGORY_NAMES, KS);
  }
  return out;
}

export function summary(scores: Scores): Record<string, unknown> {
  const sorted = Float64Array.from(scores.latenciesMs).sort();
  const rows: Record<string, unknown> = {};
  for (const [cat, s] of [...scores.sums].sort((a, b) => a[0] - b[0])) {
    rows[cat === 0 ? 'overall' : (CATEGORY_NAMES[cat] ?? String(cat))] = {
      questions: s.n,
      ...Object.fromEntries(KS.map((k, i) => [`recall@${k}`, (s.at[i] ?? 0) / s.n])),
    };
  }
  return {
    ...rows,
    latency_p50_ms: percentile(sorted, 0.5),
    latency_p99_ms: percentile(sorted, 0.99),
  };
}

export function printScores(name: string, scores: Scores): void {
  const sorted = Float64Array.from(scores.latenciesMs).sort();
  const headers = ['category', 'questions', ...KS.map((k) => `R@${k}`)];
  const rows = [...scores.sums]
    .sort((a, b) => (a[0] === 0 ? 1 : b[0] === 0 ? -1 : a[0] - b[0]))
    .map(([cat, s]) => [
      cat === 0 ? 'overall' : (CATEGORY_NAMES[cat] ?? String(cat)),
      s.n,
      ...KS.map((_, i) => round3((s.at[i] ?? 0) / s.n)),
    ]);
  console.log(
    `\n## ${name}  (recall latency top_k 10: p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms)`,
  );
  console.log(formatTable(headers, rows));
}

/** One Markdown table: a row per configuration, overall recall@k, recall@10 per category, latency. */
export function printMarkdown(summaries: ReadonlyArray<[string, Scores]>): void {
  const cats = Object.keys(CATEGORY_NAMES).map(Number);
  const headers = [
    'configuration',
    ...KS.map((k) => `R@${k}`),
    ...cats.map((c) => `R@10 ${CATEGORY_NAMES[c]}`),
    'p50 ms',
    'p99 ms',
  ];
  const rows = summaries.map(([name, s]) => {
    const sorted = Float64Array.from(s.latenciesMs).sort();
    const at = (cat: number, i: number): string => {
      const v = s.sums.get(cat);
      return v ? round3((v.at[i] ?? 0) / v.n) : '-';
    };
    return [
      name,
      ...KS.map((_, i) => at(0, i)),
      ...cats.map((c) => at(c, 1)),
      percentile(sorted, 0.5).toFixed(1),
      percentile(sorted, 0.99).toFixed(1),
    ];
  });
  console.log(`\n${formatMarkdown(headers, rows)}`);
}

function round3(x: number): string {
  return x.toFixed(3);
}
