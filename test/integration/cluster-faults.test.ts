/**
 * Issue 23, item 0: no acknowledged write is lost and no partition becomes untakeable under the
 * whole fault sequence (kill -9 of a node, of a NATS follower and of the JetStream meta leader,
 * each restarted, SIGSTOP/SIGCONT of a partition owner) run under write load on three
 * nats-servers and three nodes (test/helpers/fault-run.ts). Every acknowledged write is read back
 * through every node at the end. Bounded for CI (one round); `npm run bench:cluster-faults --
 * --rounds N` runs it longer.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/child.ts';
import { runFaultSequence } from '../helpers/fault-run.ts';
import { natsServerAvailable } from '../helpers/nats.ts';

const HAVE_NATS = natsServerAvailable();
const dirs: string[] = [];

/**
 * In the suite by default (FLASHBULB_FAULT_TESTS=0 skips it). It was opt-in while a data-loss bug
 * stood (NATS 2.9.10 losing an acknowledged pointer move and snapshot object after a meta-leader
 * kill, the stream already trimmed below them); cluster/trim.ts keeps each snapshot 10 s before
 * trimming below it, and cluster-trim.test.ts replays both losses.
 */
const SKIPPED = process.env['FLASHBULB_FAULT_TESTS'] === '0';
if (HAVE_NATS && SKIPPED) console.warn('cluster-faults: skipped (FLASHBULB_FAULT_TESTS=0)');

describe.skipIf(!HAVE_NATS || SKIPPED)(
  'cluster under the fault sequence (3 nats-servers, replicas 3, 3 nodes)',
  () => {
    beforeAll(() => ensureBuilt());
    afterAll(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('every acknowledged write is readable through every node after kill -9 of a node, of a NATS follower and of the meta leader, and SIGSTOP/SIGCONT of an owner', async () => {
      const report = await runFaultSequence({
        rounds: 1,
        leaseMs: 3000,
        partitions: 6,
        writers: 2,
        dirs,
        log: (l) => console.log(`cluster faults: ${l}`),
      });
      console.log(`cluster faults: ${report.acked} writes acknowledged`);
      expect(report.acked).toBeGreaterThan(50);
      expect(report.unowned).toEqual([]);
      expect(report.missing).toEqual([]);
      expect(report.violations).toEqual([]);
    }, 420_000); // bounded for CI: 50–175 s on the shared 2-core machine
  },
);
