/** @module native-bench/lib/targets — the team's REST performance targets, checked against measured phases. */
import type { CpuShare } from './proc.ts';
import type { Summary } from './stats.ts';

/** One measured phase: latencies and rate, and the CPU used meanwhile (1.0 = one core busy). */
export interface PhaseResult extends Summary, CpuShare {
  op: string;
  concurrency: number;
  /** Seconds waited for the machine (and the server's background work) to go idle first. */
  settleS: number;
}

export interface TargetCheck {
  description: string;
  met: boolean;
  actual: string;
}

interface Target {
  op: string;
  concurrency: number;
  description: string;
  met: (r: PhaseResult) => boolean;
  actual: (r: PhaseResult) => string;
}

const TARGETS: readonly Target[] = [
  {
    op: 'remember',
    concurrency: 32,
    description: 'remember >= 3,000/s at 32 clients',
    met: (r) => r.opsPerS >= 3000,
    actual: (r) => `${r.opsPerS.toFixed(0)}/s`,
  },
  {
    op: 'get',
    concurrency: 32,
    description: 'get >= 15,000/s at 32 clients',
    met: (r) => r.opsPerS >= 15000,
    actual: (r) => `${r.opsPerS.toFixed(0)}/s`,
  },
  {
    op: 'remember',
    concurrency: 1,
    description: 'remember p99 < 5 ms at 1 client',
    met: (r) => r.p99Ms < 5,
    actual: (r) => `${r.p99Ms.toFixed(2)} ms`,
  },
  {
    op: 'get',
    concurrency: 1,
    description: 'get p99 < 1 ms at 1 client',
    met: (r) => r.p99Ms < 1,
    actual: (r) => `${r.p99Ms.toFixed(2)} ms`,
  },
];

export function checkTargets(results: readonly PhaseResult[]): TargetCheck[] {
  const out: TargetCheck[] = [];
  for (const t of TARGETS) {
    const r = results.find((x) => x.op === t.op && x.concurrency === t.concurrency);
    if (r) out.push({ description: t.description, met: t.met(r), actual: t.actual(r) });
  }
  return out;
}
