/**
 * @module native-bench/suite/phases — one measured phase: an operation on one protocol at a fixed
 * number of closed-loop clients, after the machine went quiet and a short warm-up; latencies,
 * throughput, and the CPU the server, this process and everything else used meanwhile. A phase
 * that other processes disturbed (over BUSY_CORES) is measured again (--busy-retries) and the
 * calmest run kept. forget runs a fixed number of operations instead of a duration.
 */
import { runClosedLoop, type LoopOptions } from '../lib/closed-loop.ts';
import { CpuMeter, waitForQuiet, type CpuShare } from '../lib/proc.ts';
import { percentile } from '../lib/stats.ts';
import { sampleThreads, threadDeltas, type ThreadDelta } from '../lib/threads.ts';
import type { Dataset } from './ops/dataset.ts';
import type { Driver } from './ops/driver.ts';
import { GrpcDriver } from './grpc-driver.ts';
import { holdsSubscriptions, prepareOp, type OpName } from './ops/index.ts';
import type { Protocol, TierSpec } from './options.ts';
import { RestDriver, type Endpoint } from './rest-driver.ts';

const QUIET_CORES = 0.2;
const BUSY_CORES = 0.3;
/** forget consumes stored ids: each forget phase runs this share of the dataset, not a duration. */
const FORGET_SHARE = 0.02;
const FORGET_MIN_OPS = 100;
/** A workspace holds at most 100 open subscriptions. */
const MAX_SUBSCRIPTIONS = 100;

export interface PhaseResult extends CpuShare {
  op: OpName;
  protocol: Protocol;
  clients: number;
  ops: number;
  errors: number;
  firstError: string | null;
  seconds: number;
  opsPerS: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  settleS: number;
  /** When the measured part ran, in CLOCK_MONOTONIC microseconds: the clock `.cpuprofile` timestamps use. */
  windowUs: [number, number];
  /** With the server's pid (Linux): what each of its thread roles used over the measured part. */
  threads?: ThreadDelta[];
}

export interface PhaseContext {
  /** REST is absent when the target speaks only hebbs.v1 gRPC (side-by-side runs). */
  endpoint: { rest?: Endpoint; grpc: Endpoint & { host?: string } };
  /** null: the server's CPU cannot be read (another machine, or its pid was not given). */
  serverPid: number | null;
  ds: Dataset;
  spec: TierSpec;
  busyRetries: number;
  /** Memories loaded (sizes the forget phases). */
  memories: number;
}

function driverFor(ctx: PhaseContext, protocol: Protocol, clients: number): Driver {
  if (protocol === 'grpc') return new GrpcDriver(ctx.endpoint.grpc);
  if (!ctx.endpoint.rest) throw new Error('this target has no REST endpoint');
  return new RestDriver(ctx.endpoint.rest, { sockets: clients });
}

function latencyStats(
  latencies: readonly number[],
): Pick<PhaseResult, 'p50Ms' | 'p95Ms' | 'p99Ms' | 'maxMs'> {
  const sorted = Float64Array.from(latencies).sort();
  return {
    p50Ms: percentile(sorted, 0.5),
    p95Ms: percentile(sorted, 0.95),
    p99Ms: percentile(sorted, 0.99),
    maxMs: percentile(sorted, 1),
  };
}

/** process.hrtime is CLOCK_MONOTONIC, like V8's profile timestamps, so windows line up across processes. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function loopOptions(
  ctx: PhaseContext,
  phase: { op: OpName; clients: number },
  part: 'warmup' | 'measure',
): LoopOptions {
  const seconds = part === 'warmup' ? ctx.spec.warmupS : ctx.spec.durationS;
  if (phase.op !== 'forget') return { concurrency: phase.clients, durationMs: seconds * 1000 };
  const ops = Math.max(FORGET_MIN_OPS, Math.round(ctx.memories * FORGET_SHARE));
  return {
    concurrency: phase.clients,
    durationMs: 0,
    ops: part === 'warmup' ? Math.ceil(ops / 5) : ops,
  };
}

/** The server's threads now, or null where they cannot be read (no pid, not Linux). */
function serverThreads(pid: number | null): ReturnType<typeof sampleThreads> | null {
  if (pid === null) return null;
  try {
    return sampleThreads(pid);
  } catch {
    return null;
  }
}

async function runOnce(
  ctx: PhaseContext,
  phase: { op: OpName; protocol: Protocol; clients: number },
): Promise<PhaseResult> {
  const settle0 = performance.now();
  await waitForQuiet({ maxCores: QUIET_CORES, limitS: ctx.spec.quietLimitS });
  const settleS = (performance.now() - settle0) / 1000;
  const driver = driverFor(ctx, phase.protocol, phase.clients);
  const prepared = await prepareOp(phase.op, driver, { ds: ctx.ds, clients: phase.clients });
  try {
    await runClosedLoop(prepared.run, loopOptions(ctx, phase, 'warmup'));
    const threads0 = serverThreads(ctx.serverPid);
    const cpu = new CpuMeter(ctx.serverPid);
    const startUs = monotonicUs();
    const run = await runClosedLoop(prepared.run, loopOptions(ctx, phase, 'measure'));
    const windowUs: [number, number] = [startUs, monotonicUs()];
    const share = cpu.read();
    const threads1 = serverThreads(ctx.serverPid);
    const threads =
      ctx.serverPid !== null && threads0 && threads1
        ? { threads: threadDeltas(ctx.serverPid, threads0, threads1) }
        : {};
    const ops = run.latenciesMs.length;
    return {
      ...phase,
      ops,
      errors: run.errors,
      firstError: run.firstError,
      seconds: run.seconds,
      opsPerS: ops / run.seconds,
      ...latencyStats(run.latenciesMs),
      settleS,
      windowUs,
      ...share,
      ...threads,
    };
  } finally {
    await prepared.dispose();
    driver.close();
  }
}

/** Measures a phase; re-measures (up to busyRetries times) while other processes took over BUSY_CORES. */
export async function measurePhase(
  ctx: PhaseContext,
  phase: { op: OpName; protocol: Protocol; clients: number },
): Promise<PhaseResult> {
  const clients = holdsSubscriptions(phase.op)
    ? Math.min(phase.clients, MAX_SUBSCRIPTIONS)
    : phase.clients;
  let best = await runOnce(ctx, { ...phase, clients });
  for (let i = 0; i < ctx.busyRetries && best.otherCores > BUSY_CORES; i++) {
    console.error(
      `  ${phase.protocol} ${phase.op} x${clients}: other processes used ${best.otherCores.toFixed(2)} cores meanwhile; measuring again`,
    );
    const again = await runOnce(ctx, { ...phase, clients });
    if (again.otherCores < best.otherCores) best = again;
  }
  return best;
}
