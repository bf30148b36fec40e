/**
 * @module native-bench/suite/profile-phases — where the server's CPU went during each measured
 * phase: reads a suite JSON (its phases carry their time windows) and the `.cpuprofile` files the
 * server wrote (one per thread, `--cpu-prof-dir`), and prints each thread's top self-time
 * functions within each phase's window.
 *
 *   node --import tsx native-bench/suite/main.ts --tier quick --ops remember,recall_similarity \
 *     --protocol rest --skip-restart --cpu-prof-dir /tmp/prof --json /tmp/prof.json
 *   node --import tsx native-bench/suite/profile-phases.ts --json /tmp/prof.json --prof-dir /tmp/prof [--top 8]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { functionCosts, type CpuProfile } from '../lib/cpu-profile.ts';
import { formatTable } from '../lib/table.ts';
import type { PhaseResult } from './phases.ts';

/** The samples of `p` taken between `fromUs` and `toUs` (the profile's own clock). */
function slice(p: CpuProfile, fromUs: number, toUs: number): CpuProfile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let t = p.startTime;
  p.samples.forEach((id, i) => {
    const delta = p.timeDeltas[i] ?? 0;
    t += delta;
    if (t >= fromUs && t <= toUs) {
      samples.push(id);
      timeDeltas.push(delta);
    }
  });
  return { nodes: p.nodes, samples, timeDeltas, startTime: fromUs, endTime: toUs };
}

function threadOf(file: string): string {
  const parts = file.split('.');
  return parts.length >= 5 ? `thread ${parts[parts.length - 3] ?? '?'}` : file;
}

function report(phase: PhaseResult, profiles: ReadonlyMap<string, CpuProfile>, top: number): void {
  const [from, to] = phase.windowUs;
  const wallMs = (to - from) / 1000;
  console.log(
    `\n=== ${phase.protocol} ${phase.op} x${phase.clients}: ${phase.ops} ops in ${(wallMs / 1000).toFixed(1)} s ===`,
  );
  for (const [file, profile] of profiles) {
    const costs = functionCosts(slice(profile, from, to)).filter((c) => c.name !== '(idle)');
    const busyMs = costs.reduce((sum, c) => sum + c.selfMs, 0);
    if (busyMs < wallMs * 0.02) continue;
    console.log(
      `\n${threadOf(file)}: ${((busyMs / wallMs) * 100).toFixed(0)}% busy, ${(busyMs / Math.max(1, phase.ops)).toFixed(2)} ms per op`,
    );
    const rows = costs
      .slice(0, top)
      .map((c) => [
        c.name.slice(0, 80),
        c.selfMs,
        (c.selfMs / busyMs) * 100,
        c.selfMs / Math.max(1, phase.ops),
      ]);
    console.log(formatTable(['function', 'self ms', '% of busy', 'ms per op'], rows));
  }
}

function main(): void {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { json: { type: 'string' }, 'prof-dir': { type: 'string' }, top: { type: 'string' } },
  });
  const json = stringFlag(values, 'json');
  const dir = stringFlag(values, 'prof-dir');
  if (json === undefined || dir === undefined)
    throw new Error('usage: profile-phases.ts --json SUITE.json --prof-dir DIR [--top 8]');
  const phases = (JSON.parse(readFileSync(json, 'utf8')) as { phases: PhaseResult[] }).phases;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  const profiles = new Map(
    files.map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile]),
  );
  for (const phase of phases) report(phase, profiles, numberFlag(values, 'top', 8));
}

main();
