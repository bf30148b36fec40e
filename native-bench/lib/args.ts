/** @module native-bench/lib/args — typed reading of numeric and list flags from node:util parseArgs values. */

export type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export function numberFlag(values: FlagValues, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isFinite(n) || n < 0)
    throw new Error(`--${name} must be a non-negative number, got '${String(raw)}'`);
  return n;
}

export function listFlag(values: FlagValues, name: string, fallback: readonly string[]): string[] {
  const raw = values[name];
  return typeof raw === 'string'
    ? raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [...fallback];
}

export function stringFlag(values: FlagValues, name: string): string | undefined {
  const raw = values[name];
  return typeof raw === 'string' ? raw : undefined;
}

/** Repeated `--name KEY=VALUE` flags as an environment object (for the server's FLASHBULB_* settings). */
export function envFlag(values: FlagValues, name: string): Record<string, string> {
  const raw = values[name];
  const env: Record<string, string> = {};
  for (const item of Array.isArray(raw) ? raw : []) {
    const text = String(item);
    const at = text.indexOf('=');
    if (at < 1) throw new Error(`--${name} takes KEY=VALUE, got '${text}'`);
    env[text.slice(0, at)] = text.slice(at + 1);
  }
  return env;
}
