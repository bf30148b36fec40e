/**
 * Issue 23, item 4, the long run: the network partition of test/helpers/partition-run.ts for
 * `--cycles` cut/heal cycles (each cuts a partition owner and its local nats-server off the
 * majority, in network namespaces, while clients write and read through both sides). Checks the
 * whole history with Porcupine and directly (lost writes, stale reads, appends after a fence),
 * prints the takeover time per cycle, and keeps the history of a failing run.
 *
 *   npm run bench:cluster-partition -- [--cycles 5] [--lease-ms 5000] [--partitions 6] [--keys 8] [--readers 3]
 *
 * Needs root (ip netns), nats-server on PATH and a Go toolchain.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag } from './lib/args.ts';
import { checkWithPorcupine, lostWrites, staleReads } from '../test/helpers/linearizability.ts';
import { netnsUnavailable } from '../test/helpers/netns.ts';
import { runPartitions } from '../test/helpers/partition-run.ts';

const { values } = parseArgs({
  options: {
    cycles: { type: 'string' },
    'lease-ms': { type: 'string' },
    partitions: { type: 'string' },
    keys: { type: 'string' },
    readers: { type: 'string' },
  },
});
const dirs: string[] = [];

async function main(): Promise<void> {
  const why = netnsUnavailable();
  if (why) throw new Error(`network namespaces are not available: ${why}`);
  const started = Date.now();
  const report = await runPartitions({
    cycles: numberFlag(values, 'cycles', 5),
    leaseMs: numberFlag(values, 'lease-ms', 5000),
    partitions: numberFlag(values, 'partitions', 6),
    keys: numberFlag(values, 'keys', 8),
    readers: numberFlag(values, 'readers', 3),
    dirs,
    log: (line) => console.log(line),
  });
  const writes = report.history.filter((o) => o.op === 'write');
  console.log(
    `\n${report.history.length} operations in ${((Date.now() - started) / 1000).toFixed(0)} s: ${writes.filter((o) => !o.unknown).length} writes acknowledged, ${writes.filter((o) => o.unknown).length} unknown; ${report.ackedByCutOff} acknowledged through a cut-off node`,
  );
  console.log(
    '| cycle | cut | every partition owned by the majority (ms) | 20 more writes acknowledged (ms) |',
  );
  console.log('|---:|---|---:|---:|');
  report.cycles.forEach((c, i) => {
    console.log(`| ${i} | ${c.cut} | ${c.takeoverMs} | ${c.writesMs} |`);
  });
  const keep = mkdtempSync(join(tmpdir(), 'fb-partition-history-'));
  const porcupine = checkWithPorcupine(report.history, keep);
  const problems = [
    ...lostWrites(report.history, report.finals),
    ...staleReads(report.history),
    ...report.violations,
  ];
  console.log(`porcupine: ${porcupine.output}`);
  for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
  if (problems.length > 0 || !porcupine.linearizable) {
    console.log(`history kept in ${keep}`);
    process.exitCode = 1;
  } else rmSync(keep, { recursive: true, force: true });
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
