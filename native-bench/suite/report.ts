/**
 * @module native-bench/suite/report — the suite's JSON document and console tables. Per protocol
 * and operation: latency percentiles from the 1-client phase, throughput from the N-client phase
 * (Little's law: a 32-client run's latency is mostly queueing, so the two are not quoted from one
 * run).
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { formatMarkdown, formatTable, type Cell } from '../lib/table.ts';
import { checkOpGoals, checkResourceGoals, type GoalCheck, type OpStats } from './goals.ts';
import type { LoadResult } from './load.ts';
import { OP_NAMES, type OpName } from './ops/names.ts';
import type { EmbedderKind, Protocol, Tier } from './options.ts';
import type { PhaseResult } from './phases.ts';
import type { LoadFootprint, RestartCost } from './resources.ts';

export interface Machine {
  cores: number;
  cpu: string;
  memory_bytes: number;
  kernel: string;
  node: string;
}

export interface SuiteReport {
  embedder: EmbedderKind;
  memories: number;
  concurrency: number;
  machine: Machine;
  tier: Tier;
  operations: Partial<Record<Protocol, Partial<Record<OpName, OpStats>>>>;
  resources: { load: LoadResult; footprint: LoadFootprint; restart: RestartCost | null };
  goals: GoalCheck[];
  /** Every measured phase, both client counts, with errors and CPU shares. */
  phases: PhaseResult[];
}

export function machine(): Machine {
  return {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? '?',
    memory_bytes: totalmem(),
    kernel: release(),
    node: process.version,
  };
}

function opStats(lat: PhaseResult, thr: PhaseResult): OpStats {
  return {
    p50_ms: lat.p50Ms,
    p95_ms: lat.p95Ms,
    p99_ms: lat.p99Ms,
    max_ms: lat.maxMs,
    ops_per_s: thr.opsPerS,
  };
}

/** Pairs each operation's 1-client phase with its many-client phase (the last one measured). */
export function operations(phases: readonly PhaseResult[]): SuiteReport['operations'] {
  const out: SuiteReport['operations'] = {};
  for (const p of phases) {
    const lat =
      phases.find((q) => q.protocol === p.protocol && q.op === p.op && q.clients === 1) ?? p;
    const thr = phases.findLast((q) => q.protocol === p.protocol && q.op === p.op) ?? p;
    (out[p.protocol] ??= {})[p.op] = opStats(lat, thr);
  }
  return out;
}

export function goals(report: Omit<SuiteReport, 'goals'>): GoalCheck[] {
  const ops = Object.entries(report.operations).flatMap(([protocol, byOp]) =>
    checkOpGoals(protocol as Protocol, byOp),
  );
  const fp = report.resources.footprint;
  const restart = report.resources.restart;
  return [
    ...ops,
    ...checkResourceGoals({
      rssBeyondVector: fp.rss_beyond_vector_bytes_per_memory,
      restartMs: restart?.restart_ready_ms ?? null,
      memoriesAtRestart: restart?.memories ?? 0,
    }),
  ];
}

const OP_HEADERS = [
  'protocol',
  'operation',
  'p50 ms',
  'p95 ms',
  'p99 ms',
  'max ms',
  'ops/s @N',
  'p50 ms @N',
  'p99 ms @N',
  'errors',
  'server cores @N',
  'client cores @N',
  'other cores @N',
];

function opRows(phases: readonly PhaseResult[]): Cell[][] {
  const rows: Cell[][] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    for (const op of OP_NAMES) {
      const mine = phases.filter((p) => p.protocol === protocol && p.op === op);
      const lat = mine.find((p) => p.clients === 1);
      const thr = mine.at(-1);
      if (!lat || !thr) continue;
      rows.push([
        protocol,
        op,
        lat.p50Ms,
        lat.p95Ms,
        lat.p99Ms,
        lat.maxMs,
        thr.opsPerS,
        thr.p50Ms,
        thr.p99Ms,
        lat.errors + thr.errors,
        thr.serverCores,
        thr.clientCores,
        thr.otherCores,
      ]);
    }
  }
  return rows;
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);

function resourceRows(r: SuiteReport['resources']): Cell[][] {
  const f = r.footprint;
  const rows: Cell[][] = [
    [
      'load (REST, durable acks)',
      `${r.load.memories} in ${r.load.seconds.toFixed(1)} s = ${r.load.perS.toFixed(0)}/s`,
    ],
    [
      'server RSS empty → half → loaded',
      `${mib(f.rss_empty_bytes)} → ${mib(f.rss_half_bytes)} → ${mib(f.rss_loaded_bytes)} MiB`,
    ],
    [
      'RSS per memory, 2nd half of the load',
      `${f.rss_bytes_per_memory.toFixed(0)} B (${f.rss_beyond_vector_bytes_per_memory.toFixed(0)} B beyond the ${f.vector_bytes} B vector)`,
    ],
    ['RSS per memory, average since empty', `${f.rss_average_bytes_per_memory.toFixed(0)} B`],
    [
      'data dir per memory (log)',
      `${f.data_dir_bytes_per_memory.toFixed(0)} B (${(f.data_dir_bytes / 2 ** 20).toFixed(1)} MiB)`,
    ],
    ['background indexing settled after', `${f.index_settle_s.toFixed(1)} s`],
  ];
  if (r.restart) {
    const s = r.restart;
    rows.push([
      'SIGTERM stop (final snapshot)',
      `${s.stop_ms.toFixed(0)} ms at ${s.memories} memories (exit ${String(s.stop_exit_code)})`,
    ]);
    rows.push([
      'data dir per memory after stop',
      `${s.data_dir_bytes_per_memory_after_stop.toFixed(0)} B (${(s.data_dir_bytes_after_stop / 2 ** 20).toFixed(1)} MiB)`,
    ]);
    rows.push(['restart: spawn → /v1/health/ready 200', `${s.restart_ready_ms.toFixed(0)} ms`]);
    rows.push([
      'RSS per memory after the restart',
      `${s.rss_after_restart_bytes_per_memory.toFixed(0)} B (${mib(s.rss_after_restart_bytes)} MiB)`,
    ]);
  }
  return rows;
}

export function printReport(report: SuiteReport): void {
  const rows = opRows(report.phases);
  console.log(
    `\nFlashbulb suite: tier ${report.tier}, ${report.memories} memories, embedder ${report.embedder}, N = ${report.concurrency} clients, ${report.machine.cores} cores (${report.machine.cpu}), node ${report.machine.node}`,
  );
  console.log(
    'Latency columns: 1 client (no queueing). "@N": N closed-loop clients (peak throughput; its latency includes queueing).\n',
  );
  console.log(formatTable(OP_HEADERS, rows));
  console.log(`\n${formatTable(['resource', 'value'], resourceRows(report.resources))}`);
  console.log('\ngoals (issue 8; stated for the real model at 100k memories):');
  for (const g of report.goals)
    console.log(`  ${g.met ? 'MET   ' : 'MISSED'} ${g.goal}: ${g.actual}`);
  console.log(
    `\nMarkdown:\n\n${formatMarkdown(
      OP_HEADERS.slice(0, 10),
      rows.map((r) => r.slice(0, 10)),
    )}\n\n${formatMarkdown(['resource', 'value'], resourceRows(report.resources))}`,
  );
}

export function writeReport(file: string, report: SuiteReport): void {
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${file}`);
}
