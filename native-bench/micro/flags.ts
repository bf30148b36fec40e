/**
 * @module native-bench/micro/flags — the flags every micro-benchmark takes: `--quick` (smaller
 * sizes, shorter runs) and `--max-wait-s N` (how long to wait for a quiet machine, default 120).
 */
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag, type FlagValues } from '../lib/args.ts';
import { setMaxWait } from './quiet.ts';

export interface MicroFlags {
  quick: boolean;
  values: FlagValues;
}

/** Parses argv; `extra` names the script's own string flags. */
export function microFlags(extra: readonly string[] = []): MicroFlags {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    quick: { type: 'boolean' },
    'max-wait-s': { type: 'string' },
  };
  for (const name of extra) options[name] = { type: 'string' };
  const { values } = parseArgs({ args: process.argv.slice(2), options, strict: true });
  const quick = values['quick'] === true;
  setMaxWait(numberFlag(values, 'max-wait-s', quick ? 30 : 120));
  return { quick, values };
}

/** A comma-separated list of numbers (`--sizes 10000,100000`). */
export function numbersFlag(
  values: FlagValues,
  name: string,
  fallback: readonly number[],
): number[] {
  const raw = stringFlag(values, name);
  if (raw === undefined) return [...fallback];
  const out = raw.split(',').map((s) => Number(s.trim()));
  if (out.some((n) => !Number.isFinite(n) || n <= 0))
    throw new Error(`--${name} takes positive numbers, got '${raw}'`);
  return out;
}

/** Prints a section heading, the table, and the one line that says what it shows. */
export function report(
  title: string,
  table: string,
  shows: string,
  notes: readonly string[] = [],
): void {
  console.log(`\n## ${title}\n`);
  console.log(table);
  for (const n of notes) console.log(`  note: ${n}`);
  console.log(`\nShows: ${shows}`);
}
