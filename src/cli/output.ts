/**
 * @module cli/output — how the CLI writes its answers: JSON for scripts (`--json`), aligned tables
 * and one-line summaries for people, times in UTC, paths quoted so that a printed command can be
 * pasted back into a shell; and its two kinds of failure (exit 1: the command could not be done;
 * exit 2: the command line itself is wrong).
 */

/** The command could not be done (exit 1): its message says why, without a stack. */
export class CliError extends Error {
  override name = 'CliError';
}

/** The command line is wrong (exit 2): the message is followed by the command's usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The options of a command that prints a result: `--json` for scripts. */
export interface Shown {
  json?: boolean | undefined;
}

/** Writes `value` as indented JSON on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes one line on stdout. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Writes one line on stderr (notes for the person at the terminal, never data). */
export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

/**
 * Columns padded to their widest cell, two spaces apart, headings in capitals; the last column is
 * not padded (no trailing blanks). An empty table is its heading alone.
 */
export function table(headings: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const all = [headings.map((h) => h.toUpperCase()), ...rows];
  const widths = headings.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)));
  const line = (r: readonly string[]): string =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return all.map(line).join('\n');
}

/** Microseconds since the epoch as `2026-12-01 23:40:12Z`; `-` for none. */
export function time(us: number | null | undefined): string {
  if (us === null || us === undefined || !Number.isFinite(us)) return '-';
  return new Date(Math.floor(us / 1000))
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** A word for a shell: as it is when it holds only safe characters, else in single quotes. */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** `1 key`, `2 keys`. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
