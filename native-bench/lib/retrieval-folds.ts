/**
 * @module native-bench/lib/retrieval-folds — recall@k per category in every leave-one-conversation-out
 * fold (the held-out conversation's own figures: nothing is fitted inside a configuration), their
 * mean ± sd over folds (each conversation weighs the same) and the pooled figures over all questions.
 */
import { formatMarkdown } from './table.ts';

/** One scored question: its conversation, category and recall at each k. */
export interface QuestionScore {
  conv: number;
  category: number;
  at: number[];
}

/** Mean recall at each k and the question count of one group. */
export interface Cell {
  n: number;
  at: number[];
}

export interface Folds {
  /** Per held-out conversation: overall (category 0) and per category. */
  folds: Array<{ heldOut: number; byCategory: Record<number, Cell> }>;
  /** Over folds, overall: mean and sd of each k. */
  mean: number[];
  sd: number[];
  /** All questions together, overall (0) and per category. */
  pooled: Record<number, Cell>;
}

function cellOf(scores: readonly QuestionScore[], ks: number): Cell {
  const at = Array.from(
    { length: ks },
    (_, i) => scores.reduce((s, q) => s + (q.at[i] ?? 0), 0) / Math.max(1, scores.length),
  );
  return { n: scores.length, at };
}

function byCategory(
  scores: readonly QuestionScore[],
  names: Record<number, string>,
  ks: number,
): Record<number, Cell> {
  const out: Record<number, Cell> = { 0: cellOf(scores, ks) };
  for (const c of Object.keys(names).map(Number))
    out[c] = cellOf(
      scores.filter((q) => q.category === c),
      ks,
    );
  return out;
}

export function perCategoryFolds(
  scores: readonly QuestionScore[],
  names: Record<number, string>,
  ks: number,
): Folds {
  const convs = [...new Set(scores.map((q) => q.conv))].sort((a, b) => a - b);
  const folds = convs.map((heldOut) => ({
    heldOut,
    byCategory: byCategory(
      scores.filter((q) => q.conv === heldOut),
      names,
      ks,
    ),
  }));
  const col = (i: number): number[] => folds.map((f) => f.byCategory[0]?.at[i] ?? 0);
  const mean = Array.from(
    { length: ks },
    (_, i) => col(i).reduce((a, b) => a + b, 0) / Math.max(1, folds.length),
  );
  const sd = mean.map((m, i) =>
    Math.sqrt(col(i).reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, folds.length)),
  );
  return { folds, mean, sd, pooled: byCategory(scores, names, ks) };
}

/** One Markdown table: a row per fold, the mean over folds and the pooled figures; R@5 / R@10 per category. */
export function printFolds(f: Folds, names: Record<number, string>, ks: readonly number[]): void {
  const i5 = ks.indexOf(5);
  const i10 = ks.indexOf(10);
  const cats = Object.keys(names).map(Number);
  const pair = (c: Cell | undefined): string =>
    c && c.n > 0 ? `${(c.at[i5] ?? 0).toFixed(3)} / ${(c.at[i10] ?? 0).toFixed(3)} (${c.n})` : '–';
  const headers = [
    'held out',
    'R@5',
    'R@10',
    'R@25',
    ...cats.map((c) => `${names[c]} R@5 / R@10 (n)`),
  ];
  const rows = f.folds.map((x) => [
    `conv ${x.heldOut}`,
    ...ks.map((_, i) => (x.byCategory[0]?.at[i] ?? 0).toFixed(3)),
    ...cats.map((c) => pair(x.byCategory[c])),
  ]);
  rows.push([
    'mean ± sd',
    ...ks.map((_, i) => `${(f.mean[i] ?? 0).toFixed(3)} ± ${(f.sd[i] ?? 0).toFixed(3)}`),
    ...cats.map(() => ''),
  ]);
  rows.push([
    'pooled',
    ...ks.map((_, i) => (f.pooled[0]?.at[i] ?? 0).toFixed(3)),
    ...cats.map((c) => pair(f.pooled[c])),
  ]);
  console.log(formatMarkdown(headers, rows));
}
