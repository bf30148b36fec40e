/**
 * @module native-bench/restart — loads N memories into a fresh server over REST, then measures
 * (a) SIGTERM stop time (final snapshot), (b) restart from the snapshot until /v1/health/ready is
 * 200, (c) restart after kill -9 with a chunk that only the log holds; plus data-directory bytes and
 * server RSS per memory. "Settled" is when the server's CPU went idle after ready: the HNSW
 * graphs are built (or rebuilt after a crash) in the background, after the server answers.
 *
 *   npm run build && node --import tsx native-bench/restart.ts [--memories 100000] [--chunk 20000]
 *     [--concurrency 32] [--seed 7] [--json FILE] [--keep] [--settle-limit-s 600] [--cli dist/cli.js]
 *     [--server-env FLASHBULB_X=value ...] [--verbose]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { envFlag, numberFlag, stringFlag } from './lib/args.ts';
import { loadMemories } from './lib/loader.ts';
import { Rng } from './lib/prng.ts';
import { dirBytes, rssBytes, waitForIdleProcess } from './lib/proc.ts';
import { parseRecovery, type Recovery } from './lib/recovery-log.ts';
import { RestClient } from './lib/rest-client.ts';
import { checkStored } from './lib/stored-check.ts';
import {
  freePort,
  startServer,
  type RunningServer,
  type ServerOptions,
} from './lib/server-process.ts';
import { formatMarkdown, formatTable, type Cell } from './lib/table.ts';

interface Options {
  memories: number;
  chunk: number;
  concurrency: number;
  seed: number;
  json: string | undefined;
  keep: boolean;
  settleLimitS: number;
  cli: string | undefined;
  /** Extra FLASHBULB_* variables for the server (--server-env KEY=VALUE, repeatable). */
  serverEnv: Record<string, string>;
  verbose: boolean;
}

interface Step {
  step: string;
  ms: number;
  memories: number;
  replayed: number;
  shardRecoveryMs: number;
  /** Seconds after ready until the server's background work (HNSW indexing) went idle. */
  settleS: number;
  note: string;
}

interface Footprint {
  what: string;
  bytes: number;
  perMemory: number;
}

const FLAGS = {
  memories: { type: 'string' },
  chunk: { type: 'string' },
  concurrency: { type: 'string' },
  seed: { type: 'string' },
  json: { type: 'string' },
  keep: { type: 'boolean' },
  'settle-limit-s': { type: 'string' },
  cli: { type: 'string' },
  'server-env': { type: 'string', multiple: true },
  verbose: { type: 'boolean' },
} as const;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({ args: argv, options: FLAGS });
  const memories = numberFlag(values, 'memories', 100_000);
  return {
    memories,
    chunk: numberFlag(values, 'chunk', Math.max(1000, Math.round(memories / 5))),
    concurrency: numberFlag(values, 'concurrency', 32),
    seed: numberFlag(values, 'seed', 7),
    json: stringFlag(values, 'json'),
    keep: values.keep === true,
    settleLimitS: numberFlag(values, 'settle-limit-s', 600),
    cli: stringFlag(values, 'cli'),
    serverEnv: envFlag(values, 'server-env'),
    verbose: values.verbose === true,
  };
}

/** Stores `count` memories, appending their ids to `ids`; returns the rate. */
async function load(
  server: RunningServer,
  { opts, rng, count, ids }: { opts: Options; rng: Rng; count: number; ids: string[] },
): Promise<number> {
  const client = new RestClient({
    host: '127.0.0.1',
    port: server.port,
    apiKey: server.apiKey,
    maxSockets: opts.concurrency,
  });
  try {
    const r = await loadMemories(client, rng, { count, concurrency: opts.concurrency, ids });
    console.log(
      `  loaded ${count} memories in ${r.seconds.toFixed(1)} s (${r.perS.toFixed(0)}/s at ${opts.concurrency} clients)`,
    );
    return r.perS;
  } finally {
    client.close();
  }
}

/** Seconds until the server's background work (HNSW indexing) is done. */
function settle(server: RunningServer, opts: Options): Promise<number> {
  return waitForIdleProcess(server.pid, { maxCores: 0.05, limitS: opts.settleLimitS });
}

async function recoveryStep(
  server: RunningServer,
  { step, opts, acked }: { step: string; opts: Options; acked: readonly string[] },
): Promise<Step> {
  const rec: Recovery = parseRecovery(server.log);
  const note = await checkStored(server, acked).catch((err: unknown) => {
    throw new Error(`${step}: ${err instanceof Error ? err.message : String(err)}`);
  });
  const settleS = await settle(server, opts);
  return {
    step,
    ms: server.readyMs,
    memories: rec.memories,
    replayed: rec.replayedRecords,
    shardRecoveryMs: rec.slowestShardMs,
    settleS,
    note,
  };
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-restart-'));
  const base: ServerOptions = {
    dataDir,
    port: await freePort(),
    verbose: opts.verbose,
    env: opts.serverEnv,
    ...(opts.cli === undefined ? {} : { cli: opts.cli }),
  };
  const rng = new Rng(opts.seed);
  const steps: Step[] = [];
  const footprint: Footprint[] = [];
  const started: RunningServer[] = [];
  const start = async (o: ServerOptions): Promise<RunningServer> => {
    const server = await startServer(o);
    started.push(server);
    return server;
  };
  const acked: string[] = [];
  const per = (what: string, bytes: number): void =>
    void footprint.push({ what, bytes, perMemory: bytes / opts.memories });
  try {
    const first = await start(base);
    const key = { apiKey: first.apiKey };
    const emptyRss = rssBytes(first.pid);
    steps.push(await recoveryStep(first, { step: 'start on an empty data dir', opts, acked: [] }));
    const loadPerS = await load(first, { opts, rng, count: opts.memories, ids: acked });
    const indexS = await settle(first, opts);
    console.log(`  background indexing went idle ${indexS.toFixed(1)} s after the load`);
    per('server RSS after load (total)', rssBytes(first.pid));
    per('server RSS after load (minus empty server)', rssBytes(first.pid) - emptyRss);
    per('data dir after load (log + periodic snapshots)', dirBytes(dataDir));
    const stopped = await first.stop();
    steps.push({
      step: '(a) SIGTERM stop (final snapshot)',
      ms: stopped.ms,
      memories: opts.memories,
      replayed: 0,
      shardRecoveryMs: 0,
      settleS: 0,
      note: `exit code ${stopped.code}`,
    });
    per('data dir after SIGTERM (snapshot + saved HNSW graphs)', dirBytes(dataDir));

    const second = await start({ ...base, ...key });
    steps.push(await recoveryStep(second, { step: '(b) restart from snapshot', opts, acked }));
    per('server RSS after restart from snapshot', rssBytes(second.pid));
    await load(second, { opts, rng, count: opts.chunk, ids: acked });
    await second.kill();

    const third = await start({ ...base, ...key });
    steps.push(
      await recoveryStep(third, {
        step: `(c) restart after kill -9 (+${opts.chunk} in the log)`,
        opts,
        acked,
      }),
    );
    const last = await third.stop();
    if (last.code !== 0) console.error(`final stop exited with code ${last.code}`);
    report(opts, steps, footprint, loadPerS);
  } finally {
    for (const server of started) await server.kill(); // no-op for servers already stopped
    if (opts.keep) console.log(`data directory kept: ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

const STEP_HEADERS = [
  'step',
  'ms',
  'memories',
  'log records replayed',
  'slowest shard recovery ms',
  'settled after s',
  'note',
];
const SIZE_HEADERS = ['measure', 'MiB', 'bytes per memory'];

function report(opts: Options, steps: Step[], footprint: Footprint[], loadPerS: number): void {
  const stepRows: Cell[][] = steps.map((s) => [
    s.step,
    s.ms,
    s.memories,
    s.replayed,
    s.shardRecoveryMs,
    s.settleS,
    s.note,
  ]);
  const sizeRows: Cell[][] = footprint.map((f) => [f.what, f.bytes / 2 ** 20, f.perMemory]);
  console.log(
    `\n${opts.memories} memories loaded at ${loadPerS.toFixed(0)}/s (${opts.concurrency} clients, durable acks), ${availableParallelism()} cores\n`,
  );
  console.log(`${formatTable(STEP_HEADERS, stepRows)}\n\n${formatTable(SIZE_HEADERS, sizeRows)}\n`);
  console.log(
    `${formatMarkdown(STEP_HEADERS, stepRows)}\n\n${formatMarkdown(SIZE_HEADERS, sizeRows)}`,
  );
  const restart = steps.find((s) => s.step.startsWith('(b)'));
  if (restart)
    console.log(
      `\ntarget: restart of ${opts.memories} memories under 5 s: ${restart.ms < 5000 ? 'MET' : 'MISSED'} (${(restart.ms / 1000).toFixed(2)} s)`,
    );
  if (opts.json !== undefined) {
    writeFileSync(
      opts.json,
      `${JSON.stringify({ options: opts, loadPerS, steps, footprint }, null, 2)}\n`,
    );
    console.log(`wrote ${opts.json}`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
