/**
 * A takeover of one large partition (issue 24, item 5): writes a snapshot of `--memories`
 * generated memories (384-d clustered vectors, one edge each) for partition 0 of a one-partition
 * cluster straight into NATS (object store + pointer, as an owner's snapshot leaves them), then
 * starts one node, which takes the partition over. Reports spawn → the partition serving, the
 * takeover itself (lease taken → serving, from the node's log), and the node's peak RSS (VmHWM)
 * and RSS once serving.
 *
 *   npm run build && node --import tsx native-bench/cluster-takeover.ts [--memories 100000] [--runs 2] [--cpu-prof-dir DIR]
 *
 * Needs nats-server on PATH.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag } from './lib/args.ts';
import { rssBytes } from './lib/proc.ts';
import { freePort, startServer } from './lib/server-process.ts';
import { storeRecords } from './micro/store-fixture.ts';
import { applyRecord, ShardState } from '../src/shard/store/apply.ts';
import { startNats, stopNats, writePartitionSnapshot } from '../test/helpers/nats.ts';

const { values } = parseArgs({
  options: {
    memories: { type: 'string' },
    runs: { type: 'string' },
    'cpu-prof-dir': { type: 'string' },
  },
});
/** The node runs under --cpu-prof into this folder (read with profile-summary.ts). */
const PROF_DIR = values['cpu-prof-dir'];
const MEMORIES = numberFlag(values, 'memories', 100_000);
const RUNS = numberFlag(values, 'runs', 2);
const dirs: string[] = [];
const temp = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

function peakRss(pid: number): number {
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match?.[1] === undefined ? Number.NaN : Number(match[1]) * 1024;
}

async function seed(url: string, name: string): Promise<number> {
  const state = new ShardState();
  for (const r of storeRecords(MEMORIES, 7, 'takeover')) applyRecord(state, r);
  return writePartitionSnapshot(url, name, state);
}

async function main(): Promise<void> {
  const mb = (b: number): string => (b / 2 ** 20).toFixed(0);
  console.log(
    `| run | snapshot MB | spawn → serving ms | takeover ms (log) | peak RSS MB | RSS serving MB |`,
  );
  console.log(`| ---: | ---: | ---: | ---: | ---: | ---: |`);
  for (let run = 1; run <= RUNS; run++) {
    const nats = await startNats({ storeDir: temp('fb-takeover-nats-') });
    try {
      const name = `takeover${run}`;
      const bytes = await seed(nats.url, name);
      const started = performance.now();
      const node = await startServer({
        dataDir: temp('fb-takeover-node-'),
        port: await freePort(),
        apiKey: 'unused',
        ...(PROF_DIR === undefined ? {} : { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', PROF_DIR] }),
        env: {
          FLASHBULB_AUTH_ENABLED: 'false',
          FLASHBULB_NATS_URL: nats.url,
          FLASHBULB_NODE_ID: 'a',
          FLASHBULB_CLUSTER_NAME: name,
          FLASHBULB_CLUSTER_PARTITIONS: '1',
          FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
          FLASHBULB_REFLECT_ENABLED: 'false',
        },
      });
      try {
        let line: RegExpExecArray | null = null;
        for (let i = 0; i < 6000 && !line; i++) {
          line =
            node.log
              .map((l) => /partition 0 owned by a: (\d+) memories .* in (\d+) ms/.exec(l))
              .find((m) => m !== null) ?? null;
          if (!line) await new Promise((r) => setTimeout(r, 20));
        }
        if (!line)
          throw new Error(
            `the node did not take the partition over:\n${node.log.slice(-20).join('\n')}`,
          );
        const servingMs = performance.now() - started;
        console.log(
          `| ${run} | ${mb(bytes)} | ${servingMs.toFixed(0)} | ${line[2]} | ${mb(peakRss(node.pid))} | ${mb(rssBytes(node.pid))} |`,
        );
        if (Number(line[1]) !== MEMORIES)
          throw new Error(`took over ${line[1]} memories, expected ${MEMORIES}`);
      } finally {
        await (PROF_DIR === undefined ? node.kill() : node.stop().then(() => undefined)); // a profile is written on a clean exit
      }
    } finally {
      await stopNats(nats);
    }
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
