/**
 * Issue 23, item 4: a real network partition (test/helpers/partition-run.ts). Three nats-servers
 * and three nodes, each in its own network namespace; an owner and its local nats-server are cut
 * off from the majority while clients write and read through both sides, then the network heals.
 * The whole history is checked with Porcupine (tools/linearizability) and directly: no
 * acknowledged write lost (every key read through every node at the end), no read behind an
 * acknowledged write, no append by a node after another node's fence. A failing run keeps its
 * history and Porcupine's visualisation under the directory its failure message names.
 *
 * Needs root and `ip netns` (skipped otherwise, with the reason; under FLASHBULB_E2E_REQUIRED=1 it
 * fails instead, unless FLASHBULB_NETNS=0), nats-server and a Go toolchain.
 * `npm run bench:cluster-partition -- --cycles N` runs it longer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/child.ts';
import {
  checkWithPorcupine,
  goBinary,
  lostWrites,
  staleReads,
} from '../helpers/linearizability.ts';
import { natsServerAvailable, natsServerVersion } from '../helpers/nats.ts';
import { netnsUnavailable, removeLeftovers } from '../helpers/netns.ts';
import { runPartitions } from '../helpers/partition-run.ts';

const REQUIRED = process.env['FLASHBULB_E2E_REQUIRED'] === '1';
/**
 * In the suite by default (FLASHBULB_PARTITION_TESTS=0 or FLASHBULB_NETNS=0 skips it). It was
 * opt-in while it had few runs behind it: it found reads going back in time (fixed by
 * shard/commit-barrier.ts), then passed 4 of 5 runs on nats-server 2.9.10, whose majority side once
 * served no JetStream request for 90 s after the cut, and 6 of 6 on 2.12.1, which `.ci/run` builds.
 * On a nats-server older than 2.10 it is skipped, saying so: that liveness failure is NATS's. A
 * majority that has not taken every partition within 150 s of the cut fails the test too, after
 * the history's safety is checked: the stalls once put down to NATS were the nodes' and servers'
 * connections to the cut-off server staying up on their default pings (fixed: cluster/setup.ts,
 * deploy/nats.conf; takeovers took 6–13 s on a loaded machine since).
 */
const version = natsServerVersion();
const OLD_NATS = version !== null && (version[0] < 2 || (version[0] === 2 && version[1] < 10));
const OPTED_OUT =
  process.env['FLASHBULB_NETNS'] === '0' ||
  process.env['FLASHBULB_PARTITION_TESTS'] === '0' ||
  OLD_NATS;
const missing = [
  netnsUnavailable(),
  natsServerAvailable() ? null : 'no nats-server on PATH',
  goBinary() ? null : 'no Go toolchain to build tools/linearizability',
].filter((m) => m !== null);
const SKIP = OPTED_OUT || (missing.length > 0 && !REQUIRED);
if (OLD_NATS)
  console.warn(
    `cluster-partition: skipped: nats-server ${version?.join('.')} is older than 2.10 (its majority side stalled after a cut; .ci/run builds 2.12.1)`,
  );
else if (OPTED_OUT)
  console.warn('cluster-partition: skipped (FLASHBULB_PARTITION_TESTS=0 or FLASHBULB_NETNS=0)');
else if (SKIP)
  console.warn(
    `cluster-partition: skipped: ${missing.join('; ')} (FLASHBULB_E2E_REQUIRED=1 makes this a failure)`,
  );
const dirs: string[] = [];

describe.skipIf(SKIP)(
  'a real network partition (network namespaces, 3 nats-servers, 3 nodes)',
  () => {
    beforeAll(() => {
      if (missing.length > 0)
        throw new Error(
          `cluster-partition cannot run: ${missing.join('; ')} (FLASHBULB_E2E_REQUIRED=1; set FLASHBULB_NETNS=0 to skip it on purpose)`,
        );
      ensureBuilt();
    });
    afterAll(() => {
      removeLeftovers();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('an owner cut off from the majority with its nats-server: the history is linearizable, nothing acknowledged is lost, no read goes back, no append after a fence', async () => {
      const log = (l: string): void => console.log(`cluster partition: ${l}`);
      const report = await runPartitions({
        cycles: 1,
        leaseMs: 3000,
        partitions: 6,
        keys: 8,
        readers: 3,
        dirs,
        log,
      });
      const writes = report.history.filter((o) => o.op === 'write');
      log(
        `${report.history.length} operations: ${writes.filter((o) => !o.unknown).length} writes acknowledged, ${writes.filter((o) => o.unknown).length} unknown, ${report.ackedByCutOff} acknowledged through the cut-off node while cut off; ${JSON.stringify(report.cycles)}`,
      );
      const keep = mkdtempSync(join(tmpdir(), 'fb-partition-history-'));
      const porcupine = checkWithPorcupine(report.history, keep);
      const lost = lostWrites(report.history, report.finals);
      const stale = staleReads(report.history);
      const failed =
        !porcupine.linearizable ||
        lost.length > 0 ||
        stale.length > 0 ||
        report.violations.length > 0 ||
        report.cycles.some((c) => c.takeoverMs === null);
      if (!failed) rmSync(keep, { recursive: true, force: true });
      const where = `history kept in ${keep} (history.json${porcupine.linearizable ? '' : ', porcupine.html'})`;
      expect(lost, where).toEqual([]);
      expect(stale, where).toEqual([]);
      expect(report.violations, where).toEqual([]);
      expect(porcupine.linearizable, `${porcupine.output}; ${where}`).toBe(true);
      expect(
        report.cycles.map((c) => (c.takeoverMs === null ? 'none within 150 s' : 'taken')),
        `the majority takes every partition after the cut; ${where}`,
      ).toEqual(report.cycles.map(() => 'taken'));
      expect(writes.filter((o) => !o.unknown).length).toBeGreaterThan(40); // the history has substance (before the cut, after the heal, and the writers in between)
    }, 600_000); // bounded for CI: 50–175 s on the shared 2-core machine, up to 2 × 150 s waits for owners
  },
);
