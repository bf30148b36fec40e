/**
 * @module native-bench/profile-summary — prints the top self-time functions of `.cpuprofile`
 * files (one per thread, as `node --cpu-prof` writes them); `(idle)` is time the thread slept.
 *
 *   node --import tsx native-bench/profile-summary.ts DIR_OR_FILES... [--top 25] [--last-s N]
 *
 * `--last-s N` keeps only each profile's last N seconds (e.g. the measured phase of a benchmark
 * that first loads a store).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag } from './lib/args.ts';
import { functionCosts, profileMs, type CpuProfile } from './lib/cpu-profile.ts';
import { formatTable } from './lib/table.ts';

function profileFiles(paths: readonly string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith('.cpuprofile'))
          .sort()
          .map((f) => join(p, f))
      : [p],
  );
}

/** The profile's samples from its last `seconds` only. */
function lastSeconds(profile: CpuProfile, seconds: number): CpuProfile {
  let t = profile.endTime;
  let from = profile.samples.length;
  while (from > 0 && profile.endTime - t < seconds * 1e6) t -= profile.timeDeltas[--from] ?? 0;
  return {
    ...profile,
    samples: profile.samples.slice(from),
    timeDeltas: profile.timeDeltas.slice(from),
    startTime: t,
  };
}

function summarize(file: string, top: number, lastS: number | null): void {
  const whole = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const profile = lastS === null ? whole : lastSeconds(whole, lastS);
  const costs = functionCosts(profile);
  const wall = profileMs(profile);
  const idle = costs.find((c) => c.name === '(idle)')?.selfMs ?? 0;
  console.log(
    `\n${file}: ${(wall / 1000).toFixed(1)} s profiled, ${(((wall - idle) / wall) * 100).toFixed(0)}% busy`,
  );
  const rows = costs
    .slice(0, top)
    .map((c) => [c.name.slice(0, 90), c.selfMs, (c.selfMs / wall) * 100, c.totalMs]);
  console.log(formatTable(['function', 'self ms', 'self %', 'total ms'], rows));
}

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { top: { type: 'string' }, 'last-s': { type: 'string' } },
  allowPositionals: true,
});
if (positionals.length === 0) {
  console.error('usage: profile-summary.ts DIR_OR_FILES... [--top 25] [--last-s N]');
  process.exit(2);
}
const top = numberFlag(values, 'top', 25);
const lastS = values['last-s'] === undefined ? null : numberFlag(values, 'last-s', 0);
for (const file of profileFiles(positionals)) summarize(file, top, lastS);
