/**
 * Issue 23, item 0, the long run: the fault sequence of test/helpers/fault-run.ts (kill -9 of a
 * node, of a NATS follower and of the JetStream meta leader, each restarted, SIGSTOP/SIGCONT of
 * a partition owner) for `--rounds` rounds under write load on three nats-servers (replicas 3)
 * and three nodes; then every acknowledged write is read back through every node. Prints how long
 * writes took to be acknowledged again after each fault, and exits non-zero on any lost write,
 * fencing violation or partition left without an owner.
 *
 *   npm run bench:cluster-faults -- [--rounds 10] [--lease-ms 3500] [--partitions 6] [--writers 2]
 *
 * Needs nats-server on PATH.
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { numberFlag } from './lib/args.ts';
import { runFaultSequence, type FaultRunReport } from '../test/helpers/fault-run.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    'lease-ms': { type: 'string' },
    partitions: { type: 'string' },
    writers: { type: 'string' },
  },
});
const dirs: string[] = [];

async function main(): Promise<void> {
  const started = Date.now();
  const report = await runFaultSequence({
    rounds: numberFlag(values, 'rounds', 10),
    leaseMs: numberFlag(values, 'lease-ms', 3500),
    partitions: numberFlag(values, 'partitions', 6),
    writers: numberFlag(values, 'writers', 2),
    dirs,
    log: (line) => console.log(line),
  });
  const byPhase = new Map<string, FaultRunReport['phases']>();
  for (const p of report.phases)
    if (p.round > 0) byPhase.set(p.phase, [...(byPhase.get(p.phase) ?? []), p]);
  console.log(
    `\n${report.acked} writes acknowledged in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  console.log(
    '| fault | runs | longest time without an acknowledged write (ms): median, max | until 10 more writes (ms): median, max | partitions owned again (ms): median, max |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const [phase, runs] of byPhase) {
    const owned = runs.flatMap((r) => (r.ownedMs === undefined ? [] : [r.ownedMs]));
    console.log(
      `| ${phase} | ${runs.length} | ${medMax(runs.map((r) => r.gapMs))} | ${medMax(runs.map((r) => r.ms))} | ${owned.length > 0 ? medMax(owned) : '–'} |`,
    );
  }
  console.log(
    `lost: ${report.missing.length}, fencing violations: ${report.violations.length}, partitions without an owner: ${report.unowned.length}`,
  );
  for (const line of [...report.missing.slice(0, 20), ...report.violations.slice(0, 20)])
    console.log(`  ${line}`);
  if (report.missing.length + report.violations.length + report.unowned.length > 0)
    process.exitCode = 1;
}

function medMax(values: number[]): string {
  const sorted = [...values].sort((x, y) => x - y);
  return `${sorted[Math.floor((sorted.length - 1) / 2)] ?? 0}, ${sorted[sorted.length - 1] ?? 0}`;
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
