/**
 * Issue 23, item 0, the long run: the fault sequence of test/helpers/fault-run.ts (kill -9 of a
 * node, of a NATS follower and of the JetStream meta leader, each restarted, SIGSTOP/SIGCONT of
 * a partition owner) for `--rounds` rounds under write load on three nats-servers (replicas 3)
 * and three nodes; then every acknowledged write is read back through every node. Prints how long
 * writes took to be acknowledged again after each fault, and exits non-zero on any lost write,
 * fencing violation or partition left without an owner.
 *
 *   npm run bench:cluster-faults -- [--rounds 10] [--lease-ms 5000] [--partitions 6] [--writers 2]
 *
 * Needs nats-server on PATH.
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { numberFlag } from './lib/args.ts';
import { runFaultSequence } from '../test/helpers/fault-run.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, 'lease-ms': { type: 'string' }, partitions: { type: 'string' }, writers: { type: 'string' } } });
const dirs: string[] = [];

async function main(): Promise<void> {
  const started = Date.now();
  const report = await runFaultSequence({
    rounds: numberFlag(values, 'rounds', 10),
    leaseMs: numberFlag(values, 'lease-ms', 5000),
    partitions: numberFlag(values, 'partitions', 6),
    writers: numberFlag(values, 'writers', 2),
    dirs,
    log: (line) => console.log(line),
  });
  const byPhase = new Map<string, number[]>();
  for (const p of report.phases) {
    byPhase.set(p.phase, [...(byPhase.get(p.phase) ?? []), p.ms]);
  }
  console.log(`\n${report.acked} writes acknowledged in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log('| fault | runs | until writes are acknowledged again: median, max (ms) |\n|---|---:|---:|');
  for (const [kind, ms] of byPhase) {
    const sorted = [...ms].sort((a, b) => a - b);
    console.log(`| ${kind} | ${ms.length} | ${sorted[Math.floor(sorted.length / 2)]}, ${sorted[sorted.length - 1]} |`);
  }
  console.log(`lost: ${report.missing.length}, fencing violations: ${report.violations.length}, partitions without an owner: ${report.unowned.length}`);
  for (const line of [...report.missing.slice(0, 20), ...report.violations.slice(0, 20)]) console.log(`  ${line}`);
  if (report.missing.length + report.violations.length + report.unowned.length > 0) process.exitCode = 1;
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
