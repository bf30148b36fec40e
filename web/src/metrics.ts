/**
 * @module metrics — reads the Prometheus text the server exports (/v1/metrics) and turns two
 * samples into rates and latencies per operation.
 */

export interface Sample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** Parses the text exposition format (comments skipped). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

export function total(samples: readonly Sample[], name: string, where: (l: Readonly<Record<string, string>>) => boolean = () => true): number {
  return samples.filter((s) => s.name === name && where(s.labels)).reduce((sum, s) => sum + s.value, 0);
}

export interface OpStats {
  op: string;
  /** Requests per second between the two samples. */
  rate: number;
  /** Mean latency (ms) over the interval, or since start when the interval saw no request; null without any. */
  meanMs: number | null;
  /** 95th percentile upper bound from the histogram buckets (ms), over the same span as `meanMs`. */
  p95Ms: number | null;
  /** Whether the latencies cover the whole run rather than the last interval. */
  sinceStart: boolean;
  count: number;
}

const DURATION = 'flashbulb_request_duration_seconds';

/** Per-operation rate and latency of REST and gRPC requests between `before` and `after`. */
export function requestStats(before: readonly Sample[] | null, after: readonly Sample[], seconds: number): OpStats[] {
  const ops = new Set(after.filter((s) => s.name === `${DURATION}_count`).map((s) => s.labels['operation'] ?? ''));
  const stats: OpStats[] = [];
  for (const op of ops) {
    const of = (samples: readonly Sample[] | null, suffix: string, le?: string): number =>
      samples === null ? 0 : total(samples, `${DURATION}${suffix}`, (l) => l['operation'] === op && (le === undefined || l['le'] === le));
    const count = of(after, '_count');
    const inInterval = before !== null && count - of(before, '_count') > 0;
    const base = inInterval ? before : null;
    const dCount = count - of(base, '_count');
    const dSum = of(after, '_sum') - of(base, '_sum');
    const bounds = [...new Set(after.filter((s) => s.name === `${DURATION}_bucket` && s.labels['operation'] === op).map((s) => s.labels['le'] ?? '+Inf'))]
      .sort((a, b) => Number(a === '+Inf' ? Infinity : a) - Number(b === '+Inf' ? Infinity : b));
    let p95: number | null = null;
    if (dCount > 0) {
      for (const le of bounds) {
        if (of(after, '_bucket', le) - of(base, '_bucket', le) >= 0.95 * dCount) {
          p95 = le === '+Inf' ? Infinity : Number(le) * 1000;
          break;
        }
      }
    }
    const rate = before === null ? 0 : (count - of(before, '_count')) / seconds;
    stats.push({ op, rate, meanMs: dCount > 0 ? (dSum / dCount) * 1000 : null, p95Ms: p95, sinceStart: !inInterval, count });
  }
  return stats.sort((a, b) => b.rate - a.rate || b.count - a.count);
}
