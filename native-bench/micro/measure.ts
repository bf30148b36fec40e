/**
 * @module native-bench/micro/measure — runs one function under tinybench (after waiting for a
 * quiet machine) and reduces it to the figures our tables show: p50, p99, mean and rate.
 */
import { Bench, type Fn } from 'tinybench';
import { waitForQuiet, type Quiet } from './quiet.ts';

export interface Measured {
  name: string;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** Calls per second (1000 / mean latency). */
  perS: number;
  samples: number;
  quiet: Quiet;
}

export interface MeasureOptions {
  /** Time budget in ms (tinybench `time`). */
  timeMs: number;
  /** Minimum calls (tinybench `iterations`). */
  iterations?: number;
  /** Warm-up calls before measuring (0 disables warm-up). */
  warmup?: number;
}

export async function measure(name: string, fn: Fn, opts: MeasureOptions): Promise<Measured> {
  const quiet = await waitForQuiet(name);
  const warmup = opts.warmup ?? 10;
  const bench = new Bench({
    time: opts.timeMs,
    iterations: opts.iterations ?? 64,
    warmup: warmup > 0,
    warmupIterations: warmup,
    warmupTime: 0,
    retainSamples: false,
    throws: true,
  });
  bench.add(name, fn);
  await bench.run();
  const task = bench.tasks[0];
  const r = task?.result;
  if (!r || (r.state !== 'completed' && r.state !== 'aborted-with-statistics'))
    throw new Error(`${name}: no result (${r?.state ?? 'missing'})`);
  const lat = r.latency;
  return {
    name,
    p50Ms: lat.p50,
    p99Ms: lat.p99,
    meanMs: lat.mean,
    perS: 1000 / lat.mean,
    samples: lat.samplesCount,
    quiet,
  };
}

/** Milliseconds spent in `fn` (for one-off phases such as building an index). */
export async function timed<T>(fn: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

export interface MeasuredConcurrent extends Measured {
  concurrency: number;
}

/**
 * `concurrency` callers run `fn` back to back for `timeMs` (tinybench task concurrency): per-call
 * latency includes queueing; `perS` is completed calls per wall-clock second.
 */
export async function measureConcurrent(
  name: string,
  fn: Fn,
  opts: { concurrency: number; timeMs: number },
): Promise<MeasuredConcurrent> {
  const quiet = await waitForQuiet(name);
  // Warm up by hand, so that the timed run below holds only measured calls.
  await Promise.all(Array.from({ length: opts.concurrency * 2 }, () => fn()));
  const bench = new Bench({
    time: opts.timeMs,
    iterations: 0,
    concurrency: 'task',
    threshold: opts.concurrency,
    warmup: false,
    throws: true,
  });
  bench.add(name, fn);
  const start = performance.now();
  await bench.run();
  const wallMs = performance.now() - start;
  const r = bench.tasks[0]?.result;
  if (!r || (r.state !== 'completed' && r.state !== 'aborted-with-statistics'))
    throw new Error(`${name}: no result`);
  const lat = r.latency;
  return {
    name,
    concurrency: opts.concurrency,
    p50Ms: lat.p50,
    p99Ms: lat.p99,
    meanMs: lat.mean,
    perS: (lat.samplesCount * 1000) / wallMs,
    samples: lat.samplesCount,
    quiet,
  };
}

/**
 * One caller at a fixed rate (an open loop, as requests arrive from clients): `fn` starts every
 * 1000/ratePerS ms, or at once when the previous call overran. Latency is `fn` alone; the idle
 * gaps let background work (indexing, checks) run as it would between real requests.
 */
export async function measurePaced(
  name: string,
  fn: () => Promise<unknown>,
  opts: { ratePerS: number; timeMs: number },
): Promise<Measured> {
  const interval = 1000 / opts.ratePerS;
  let nextAt = 0;
  const paced = async (): Promise<{
    overriddenDuration: number;
    overriddenIterationCost: number;
  }> => {
    const begin = performance.now();
    nextAt = Math.max(nextAt + interval, begin);
    if (nextAt > begin) await new Promise((r) => setTimeout(r, nextAt - begin));
    const t0 = performance.now();
    await fn();
    const end = performance.now();
    return { overriddenDuration: end - t0, overriddenIterationCost: end - begin };
  };
  const m = await measure(name, paced, { timeMs: opts.timeMs, iterations: 50, warmup: 20 });
  return { ...m, perS: opts.ratePerS };
}
