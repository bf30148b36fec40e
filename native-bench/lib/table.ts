/** @module native-bench/lib/table — a plain-text table with right-aligned numeric columns. */

export type Cell = string | number;

export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
): string {
  const text = rows.map((row) => row.map(cellText));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[], numeric: readonly boolean[]): string =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ');
  const numeric = headers.map((_, i) => rows.every((r) => typeof r[i] === 'number'));
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(headers, numeric), rule, ...text.map((r) => line(r, numeric))].join('\n');
}

/** A Markdown table (for pasting results into docs/benchmarks.md). */
export function formatMarkdown(
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
): string {
  const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [
    row(headers),
    row(headers.map(() => '---')),
    ...rows.map((r) => row(r.map(cellText))),
  ].join('\n');
}

function cellText(c: Cell): string {
  if (typeof c === 'string') return c;
  if (!Number.isFinite(c)) return '-';
  if (Number.isInteger(c)) return String(c);
  return Math.abs(c) >= 100 ? c.toFixed(0) : Math.abs(c) >= 10 ? c.toFixed(1) : c.toFixed(2);
}
