/**
 * @module native-bench/suite/goals — the performance goals of issue 8, checked against a run.
 * They are stated for the real model at 100k memories on this 2-core machine: latency at one
 * client, throughput at the peak with 32 clients; a run at another size or with the hash
 * embedder is checked all the same, and says so.
 */
import type { OpName } from './ops/names.ts';
import type { Protocol } from './options.ts';

/** Latency and throughput of one operation, as measured and as the goals read them. */
export interface OpStats {
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
  ops_per_s: number;
}

interface OpGoal {
  op: OpName;
  p50Ms: number;
  p99Ms: number;
  opsPerS: number | null;
}

const OP_GOALS: readonly OpGoal[] = [
  { op: 'remember', p50Ms: 10, p99Ms: 20, opsPerS: 200 },
  { op: 'recall_similarity', p50Ms: 8, p99Ms: 15, opsPerS: 200 },
  { op: 'recall_cached', p50Ms: 1, p99Ms: 3, opsPerS: 3000 },
  { op: 'get', p50Ms: 0.5, p99Ms: 1, opsPerS: 10_000 },
  { op: 'subscribe_push', p50Ms: 20, p99Ms: 40, opsPerS: null },
  { op: 'subscribe_push_10_open', p50Ms: 20, p99Ms: 40, opsPerS: null },
  { op: 'subscribe_push_100_open', p50Ms: 20, p99Ms: 40, opsPerS: null },
];

/** Resident memory beyond the raw vector, per memory. */
export const RSS_BEYOND_VECTOR_GOAL_BYTES = 4096;
/** Restart of 1M memories. */
export const RESTART_GOAL_MS = 30_000;

export interface GoalCheck {
  goal: string;
  actual: string;
  met: boolean;
}

const ms = (v: number): string => `${v.toFixed(v < 10 ? 2 : 1)} ms`;

export function checkOpGoals(
  protocol: Protocol,
  ops: Partial<Record<OpName, OpStats>>,
): GoalCheck[] {
  const out: GoalCheck[] = [];
  for (const g of OP_GOALS) {
    const s = ops[g.op];
    if (!s) continue;
    out.push({
      goal: `${protocol} ${g.op} p50 <= ${g.p50Ms} ms`,
      actual: ms(s.p50_ms),
      met: s.p50_ms <= g.p50Ms,
    });
    out.push({
      goal: `${protocol} ${g.op} p99 <= ${g.p99Ms} ms`,
      actual: ms(s.p99_ms),
      met: s.p99_ms <= g.p99Ms,
    });
    if (g.opsPerS !== null)
      out.push({
        goal: `${protocol} ${g.op} >= ${g.opsPerS}/s`,
        actual: `${s.ops_per_s.toFixed(0)}/s`,
        met: s.ops_per_s >= g.opsPerS,
      });
  }
  return out;
}

export function checkResourceGoals(r: {
  rssBeyondVector: number | null;
  restartMs: number | null;
  memoriesAtRestart: number;
}): GoalCheck[] {
  const out: GoalCheck[] = [];
  if (r.rssBeyondVector !== null) {
    out.push({
      goal: `RSS beyond the vector <= ${RSS_BEYOND_VECTOR_GOAL_BYTES} B/memory`,
      actual: `${r.rssBeyondVector.toFixed(0)} B`,
      met: r.rssBeyondVector <= RSS_BEYOND_VECTOR_GOAL_BYTES,
    });
  }
  if (r.restartMs !== null) {
    // The goal is for 1M memories; a smaller run is held to the same bound, which it should beat easily.
    out.push({
      goal: `restart <= 30 s (goal stated for 1M; here ${r.memoriesAtRestart})`,
      actual: `${(r.restartMs / 1000).toFixed(2)} s`,
      met: r.restartMs <= RESTART_GOAL_MS,
    });
  }
  return out;
}
