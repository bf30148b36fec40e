/**
 * @module native-bench/side-by-side — the suite's workload against any server that speaks hebbs.v1
 * gRPC (Flashbulb, HEBBS, another implementation), given only its address. With several
 * `--target`s, each gets the same seeded dataset (over gRPC Remember), and every phase runs on
 * each target in turn, so a disturbance on the machine hits both sides alike. Starting the servers
 * is the user's business; pass `--pid` for a server on this machine to get its CPU per operation
 * and its resident memory after loading and at the end.
 *
 *   node --import tsx native-bench/side-by-side.ts --target 127.0.0.1:6380 --target 127.0.0.1:50051 \
 *     [--pid 1234 --pid 5678] [--api-key KEY]... [--memories 2000] [--concurrency 16]
 *     [--ops remember,get,...] [--duration-s 5] [--warmup-s 1] [--load-concurrency 16] [--seed 42]
 *     [--quiet-wait-s 10] [--busy-retries 1] [--rounds 1] [--threads] [--json FILE]
 *
 * `--rounds N` measures every phase N times, the targets' order reversed every other round, and
 * reports each figure as the median of its rounds (with the rounds' p50s beside it): on a machine
 * whose speed drifts, many short alternating phases compare two servers better than one long one.
 *
 * `--threads` (Linux, with `--pid`) adds where each operation's server CPU went by thread (the main
 * thread, each worker in the order it started, V8's platform threads, libuv's pool): µs of CPU and
 * voluntary context switches per operation, summed over the rounds. A voluntary switch is the thread
 * going to sleep, so each is a wake-up later: what a hop between threads costs beside its work.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { listFlag, numberFlag, stringFlag } from './lib/args.ts';
import { runClosedLoop } from './lib/closed-loop.ts';
import { Rng } from './lib/prng.ts';
import { formatMarkdown, formatTable, type Cell } from './lib/table.ts';
import { Dataset } from './suite/ops/dataset.ts';
import { GrpcDriver } from './suite/grpc-driver.ts';
import { isOpName, OP_NAMES, type OpName } from './suite/ops/names.ts';
import { rememberOp } from './suite/ops/memory.ts';
import { measurePhase, type PhaseContext, type PhaseResult } from './suite/phases.ts';
import { machine } from './suite/report.ts';
import { rssBytes } from './lib/proc.ts';
import type { ThreadDelta } from './lib/threads.ts';

interface Target {
  label: string;
  host: string;
  port: number;
  apiKey: string;
  pid: number | null;
}

interface Options {
  targets: Target[];
  memories: number;
  concurrency: number;
  loadConcurrency: number;
  ops: OpName[];
  durationS: number;
  warmupS: number;
  quietLimitS: number;
  busyRetries: number;
  rounds: number;
  seed: number;
  json: string | undefined;
  threads: boolean;
}

const FLAGS = {
  target: { type: 'string', multiple: true },
  pid: { type: 'string', multiple: true },
  'api-key': { type: 'string', multiple: true },
  memories: { type: 'string' },
  concurrency: { type: 'string' },
  'load-concurrency': { type: 'string' },
  ops: { type: 'string' },
  'duration-s': { type: 'string' },
  'warmup-s': { type: 'string' },
  'quiet-wait-s': { type: 'string' },
  'busy-retries': { type: 'string' },
  rounds: { type: 'string' },
  seed: { type: 'string' },
  json: { type: 'string' },
  threads: { type: 'boolean' },
} as const;

function parseTarget(
  text: string,
  i: number,
  keys: readonly string[],
  pids: readonly string[],
): Target {
  const at = text.lastIndexOf(':');
  const port = Number(text.slice(at + 1));
  if (at < 1 || !Number.isInteger(port) || port <= 0 || port > 65535)
    throw new Error(`--target takes host:port, got '${text}'`);
  const pidText = pids[i];
  const pid = pidText === undefined ? null : Number(pidText);
  if (pid !== null && !Number.isInteger(pid))
    throw new Error(`--pid must be a process id, got '${pidText}'`);
  // One --api-key applies to every target; several pair with the targets in order.
  const apiKey = (keys.length === 1 ? keys[0] : keys[i]) ?? '';
  return { label: text, host: text.slice(0, at), port, apiKey, pid };
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({ args: argv, options: FLAGS });
  const texts = values.target ?? [];
  if (texts.length === 0)
    throw new Error('name at least one server: --target host:port (repeat it to compare servers)');
  const targets = texts.map((t, i) => parseTarget(t, i, values['api-key'] ?? [], values.pid ?? []));
  const ops = listFlag(values, 'ops', OP_NAMES);
  const bad = ops.find((o) => !isOpName(o));
  if (bad !== undefined) throw new Error(`unknown operation '${bad}'; use ${OP_NAMES.join(', ')}`);
  return {
    targets,
    memories: numberFlag(values, 'memories', 2000),
    concurrency: numberFlag(values, 'concurrency', 16),
    loadConcurrency: numberFlag(values, 'load-concurrency', 16),
    ops: OP_NAMES.filter((o) => ops.includes(o)),
    durationS: numberFlag(values, 'duration-s', 5),
    warmupS: numberFlag(values, 'warmup-s', 1),
    quietLimitS: numberFlag(values, 'quiet-wait-s', 10),
    busyRetries: numberFlag(values, 'busy-retries', 1),
    rounds: Math.max(1, Math.floor(numberFlag(values, 'rounds', 1))),
    seed: numberFlag(values, 'seed', 42),
    json: stringFlag(values, 'json'),
    threads: values.threads === true,
  };
}

/** Stores the seeded dataset in one target over gRPC Remember. */
async function load(target: Target, opts: Options): Promise<Dataset> {
  const ds = new Dataset(new Rng(opts.seed));
  const driver = new GrpcDriver(target);
  try {
    const run = await runClosedLoop(rememberOp(driver, ds), {
      concurrency: opts.loadConcurrency,
      durationMs: 0,
      ops: opts.memories,
    });
    if (run.errors > 0)
      throw new Error(
        `${target.label}: loading failed ${run.errors} times; first: ${run.firstError ?? '?'}`,
      );
    console.error(
      `${target.label}: loaded ${ds.ids.length} memories in ${run.seconds.toFixed(1)} s (${(ds.ids.length / run.seconds).toFixed(0)}/s)`,
    );
    return ds;
  } finally {
    driver.close();
  }
}

function contextFor(target: Target, ds: Dataset, opts: Options): PhaseContext {
  return {
    endpoint: { grpc: { host: target.host, port: target.port, apiKey: target.apiKey } },
    serverPid: target.pid,
    ds,
    spec: {
      memories: opts.memories,
      durationS: opts.durationS,
      warmupS: opts.warmupS,
      quietLimitS: opts.quietLimitS,
    },
    // Without the server's pid its CPU reads as other processes', so re-measuring would not help.
    busyRetries: target.pid === null ? 0 : opts.busyRetries,
    memories: ds.ids.length,
  };
}

interface Row extends PhaseResult {
  target: string;
  /** Server CPU per operation in ms (NaN without --pid). */
  cpuMsPerOp: number;
  /** With several rounds: each round's p50, in the order measured. */
  roundP50s?: number[];
}

/** The server's resident memory in MB (NaN without its pid). */
function rssMb(t: Target): number {
  return t.pid === null ? Number.NaN : rssBytes(t.pid) / (1024 * 1024);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1
    ? (s[mid] as number)
    : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** One row per operation, client count and target: the median of each figure over the rounds. */
function medianRows(rows: readonly Row[]): Row[] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const key = `${r.op}\u0000${r.clients}\u0000${r.target}`;
    groups.get(key)?.push(r) ?? groups.set(key, [r]);
  }
  return [...groups.values()].map((g) => {
    const first = g[0] as Row;
    const of = (f: (r: Row) => number): number => median(g.map(f));
    return {
      ...first,
      opsPerS: of((r) => r.opsPerS),
      p50Ms: of((r) => r.p50Ms),
      p99Ms: of((r) => r.p99Ms),
      errors: g.reduce((n, r) => n + r.errors, 0),
      cpuMsPerOp: of((r) => r.cpuMsPerOp),
      otherCores: of((r) => r.otherCores),
      roundP50s: g.map((r) => r.p50Ms),
    };
  });
}

const fmt = (n: number, digits = 3): string =>
  Number.isFinite(n) ? String(Number(n.toPrecision(digits))) : '?';

function print(rows: readonly Row[], targets: readonly Target[]): void {
  const rounds = rows.some((r) => r.roundP50s !== undefined);
  const headers = [
    'operation',
    'clients',
    'target',
    'ops/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'server CPU ms/op',
    'other cores',
    ...(rounds ? ['p50 per round'] : []),
  ];
  const cells: Cell[][] = rows.map((r) => [
    r.op,
    r.clients,
    r.target,
    fmt(r.opsPerS),
    fmt(r.p50Ms),
    fmt(r.p99Ms),
    r.errors,
    fmt(r.cpuMsPerOp),
    fmt(r.otherCores, 2),
    ...(r.roundP50s ? [r.roundP50s.map((x) => fmt(x)).join(' ')] : []),
  ]);
  if (rounds) console.log('Medians over the rounds:\n');
  console.log(formatTable(headers, cells));
  const [a, b] = targets;
  if (!a || !b) return;
  console.log(`\nRatios ${a.label} / ${b.label} (ops/s at N clients; p50 at 1 client):\n`);
  const ratioRows: Cell[][] = [];
  for (const op of new Set(rows.map((r) => r.op))) {
    const pick = (t: Target, one: boolean): Row | undefined =>
      rows.find((r) => r.op === op && r.target === t.label && (r.clients === 1) === one);
    const [a1, b1, aN, bN] = [pick(a, true), pick(b, true), pick(a, false), pick(b, false)];
    ratioRows.push([
      op,
      fmt((aN?.opsPerS ?? Number.NaN) / (bN?.opsPerS ?? Number.NaN)),
      fmt((a1?.p50Ms ?? Number.NaN) / (b1?.p50Ms ?? Number.NaN)),
    ]);
  }
  console.log(formatMarkdown(['operation', 'throughput ratio', 'p50 ratio'], ratioRows));
}

/** Per operation, client count and target: each thread role's µs of CPU and wake-ups per operation, over every round. */
function printThreads(rows: readonly Row[]): void {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    if (!r.threads) continue;
    const key = `${r.op}\u0000${r.clients}\u0000${r.target}`;
    groups.get(key)?.push(r) ?? groups.set(key, [r]);
  }
  if (groups.size === 0) return;
  const roles = [
    ...new Set(
      [...groups.values()].flatMap((g) => g.flatMap((r) => (r.threads ?? []).map((t) => t.role))),
    ),
  ].sort((a, b) => roleOrder(a) - roleOrder(b) || a.localeCompare(b, 'en', { numeric: true }));
  const cells: Cell[][] = [...groups.values()].map((g) => {
    const first = g[0] as Row;
    const ops = g.reduce((n, r) => n + r.ops, 0);
    const sum = (role: string | null, f: (t: ThreadDelta) => number): number =>
      g.reduce(
        (n, r) =>
          n +
          (r.threads ?? [])
            .filter((t) => role === null || t.role === role)
            .reduce((m, t) => m + f(t), 0),
        0,
      );
    const cpuUs = (role: string | null): number =>
      (sum(role, (t) => t.userS + t.systemS) * 1e6) / ops;
    const wakes = (role: string | null): number => sum(role, (t) => t.voluntary) / ops;
    return [
      first.op,
      first.clients,
      first.target,
      fmt(cpuUs(null)),
      fmt(wakes(null), 2),
      ...roles.map((role) => `${fmt(cpuUs(role))} / ${fmt(wakes(role), 2)}`),
    ];
  });
  console.log(
    '\nServer threads per operation (--threads): µs of CPU / voluntary context switches (wake-ups):\n',
  );
  console.log(
    formatMarkdown(['operation', 'clients', 'target', 'µs CPU', 'wake-ups', ...roles], cells),
  );
}

function roleOrder(role: string): number {
  return role === 'main' ? 0 : role.startsWith('worker') ? 1 : role === 'v8' ? 2 : 3;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const contexts = new Map<Target, PhaseContext>();
  for (const t of opts.targets) contexts.set(t, contextFor(t, await load(t, opts), opts));
  const rssLoaded = opts.targets.map(rssMb);
  const rows: Row[] = [];
  const clientCounts = opts.concurrency === 1 ? [1] : [1, opts.concurrency];
  for (const op of opts.ops) {
    for (const clients of clientCounts) {
      for (let round = 0; round < opts.rounds; round++) {
        for (const t of round % 2 === 0 ? opts.targets : [...opts.targets].reverse()) {
          const r = await measurePhase(contexts.get(t) as PhaseContext, {
            op,
            protocol: 'grpc',
            clients,
          });
          const err = r.errors > 0 ? `, ${r.errors} errors (first: ${r.firstError ?? '?'})` : '';
          console.error(
            `  ${t.label} ${op} x${r.clients}: p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, ${r.opsPerS.toFixed(0)}/s${err}`,
          );
          rows.push({ ...r, target: t.label, cpuMsPerOp: (r.serverCores * 1000) / r.opsPerS });
        }
      }
    }
  }
  print(opts.rounds > 1 ? medianRows(rows) : rows, opts.targets);
  if (opts.threads) printThreads(rows);
  const rssEnd = opts.targets.map(rssMb);
  if (opts.targets.some((t) => t.pid !== null)) {
    console.log('\nServer RSS MB (with --pid), after loading / at the end:\n');
    console.log(
      formatMarkdown(
        ['target', 'after loading', 'at the end'],
        opts.targets.map((t, i) => [
          t.label,
          fmt(rssLoaded[i] ?? Number.NaN),
          fmt(rssEnd[i] ?? Number.NaN),
        ]),
      ),
    );
  }
  if (opts.json !== undefined) {
    writeFileSync(
      opts.json,
      JSON.stringify(
        {
          machine: machine(),
          memories: opts.memories,
          concurrency: opts.concurrency,
          targets: opts.targets.map((t) => t.label),
          phases: rows,
        },
        null,
        2,
      ),
    );
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
