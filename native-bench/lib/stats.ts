/** @module native-bench/lib/stats — latency samples reduced to percentiles and a rate. */

export interface Summary {
  ops: number;
  errors: number;
  seconds: number;
  opsPerS: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Nearest-rank percentile of an ascending array; `q` in [0, 1]. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function summarize(
  latenciesMs: readonly number[],
  errors: number,
  seconds: number,
): Summary {
  const sorted = Float64Array.from(latenciesMs).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    ops: sorted.length,
    errors,
    seconds,
    opsPerS: sorted.length / seconds,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length > 0 ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
    meanMs: sorted.length > 0 ? sum / sorted.length : Number.NaN,
  };
}
