/**
 * @module metrics/history — the last hour of the service in 10-second points, kept in a ring in
 * this process for the dashboard's charts (`GET /v1/metrics/history`): per operation the request
 * count, errors and latency percentiles computed from the successful requests' own durations
 * (every one when an interval has at most 1,000 of an operation, else a uniform sample of 1,000;
 * not histogram bounds), and the gauges of the moment (memories, embedding queue, background backlogs,
 * subscriptions, connections, shards down, resident memory). A restart starts it empty.
 */
import { registry, requestDuration } from './index.ts';

export const HISTORY_INTERVAL_MS = 10_000;
export const HISTORY_POINTS = 360;
/** Durations kept per operation and interval (a reservoir beyond it). */
const SAMPLE = 1000;

export interface OpPoint {
  count: number;
  errors: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface HistoryPoint {
  /** Start of the interval (µs since the epoch). */
  startUs: number;
  /** Its length in seconds (the open interval: so far). */
  seconds: number;
  ops: Record<string, OpPoint>;
  gauges: Record<string, number>;
}

class OpWindow {
  count = 0;
  errors = 0;
  max = 0;
  readonly sample: number[] = [];

  #timed = 0;

  /** Counts a request; the percentiles and the maximum read successful ones only (a refusal is no latency). */
  add(ms: number, ok: boolean): void {
    this.count += 1;
    if (!ok) {
      this.errors += 1;
      return;
    }
    this.#timed += 1;
    if (ms > this.max) this.max = ms;
    if (this.sample.length < SAMPLE) this.sample.push(ms);
    else {
      // Algorithm R: each successful request of the interval is in the sample with the same chance.
      const j = Math.floor(Math.random() * this.#timed);
      if (j < SAMPLE) this.sample[j] = ms;
    }
  }

  point(): OpPoint {
    const sorted = Float64Array.from(this.sample).sort();
    const at = (q: number): number =>
      sorted.length === 0
        ? 0
        : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number);
    return {
      count: this.count,
      errors: this.errors,
      p50Ms: at(0.5),
      p95Ms: at(0.95),
      p99Ms: at(0.99),
      maxMs: this.max,
    };
  }
}

export interface HistorySources {
  /** What keeps shards from answering now (one line each). */
  problems: () => readonly string[];
  /** Shards (or, in cluster mode, partitions) this process serves. */
  shards: number;
}

export class MetricsHistory {
  readonly #points: HistoryPoint[] = [];
  #open = new Map<string, OpWindow>();
  #openedAt = Date.now();
  #timer: NodeJS.Timeout | null = null;
  #sources: HistorySources | null = null;
  readonly #started: HistorySources[] = [];

  /** One request's outcome, from the transports. */
  observe(op: string, seconds: number, ok: boolean): void {
    let w = this.#open.get(op);
    if (!w) this.#open.set(op, (w = new OpWindow()));
    w.add(seconds * 1000, ok);
  }

  /**
   * Starts closing a point every interval, reading gauges through `sources`; returns what
   * {@link stop} takes. A second app in the process (tests) reads through its own sources until it
   * stops, then the first one's apply again.
   */
  start(sources: HistorySources): HistorySources {
    this.#started.push(sources);
    this.#sources = sources;
    if (!this.#timer) {
      this.#openedAt = Date.now();
      this.#open = new Map();
      this.#timer = setInterval(() => void this.#close(), HISTORY_INTERVAL_MS);
      this.#timer.unref();
    }
    return sources;
  }

  /** Whether points are being closed (some app started the history and has not stopped it). */
  get running(): boolean {
    return this.#timer !== null;
  }

  /** Stops reading through `sources` (what `start` returned); the points stop when no app is left. */
  stop(sources: HistorySources): void {
    const at = this.#started.lastIndexOf(sources);
    if (at < 0) return;
    this.#started.splice(at, 1);
    this.#sources = this.#started[this.#started.length - 1] ?? null;
    if (this.#started.length === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  /** Closed points starting at or after `sinceUs`, oldest first, and the interval still open. */
  async read(sinceUs: number | null): Promise<{ points: HistoryPoint[]; current: HistoryPoint }> {
    const points =
      sinceUs === null ? [...this.#points] : this.#points.filter((p) => p.startUs >= sinceUs);
    return { points, current: await this.#snapshot(Date.now()) };
  }

  async #close(): Promise<void> {
    const now = Date.now();
    const point = await this.#snapshot(now);
    this.#open = new Map();
    this.#openedAt = now;
    this.#points.push(point);
    if (this.#points.length > HISTORY_POINTS)
      this.#points.splice(0, this.#points.length - HISTORY_POINTS);
  }

  async #snapshot(now: number): Promise<HistoryPoint> {
    const ops: Record<string, OpPoint> = {};
    for (const [op, w] of this.#open) ops[op] = w.point();
    return {
      startUs: this.#openedAt * 1000,
      seconds: Math.max(0.001, (now - this.#openedAt) / 1000),
      ops,
      gauges: await gauges(this.#sources),
    };
  }
}

/** The process's one history, fed by the transports and started by the app. */
export const history = new MetricsHistory();

/** A request ended: the Prometheus histogram and the history both count it. */
export function observeRequest(
  op: string,
  protocol: 'rest' | 'grpc',
  outcome: string,
  seconds: number,
): void {
  requestDuration.labels(op, protocol, outcome).observe(seconds);
  history.observe(protocol === 'rest' ? op : `grpc ${op}`, seconds, outcome === 'ok');
}

async function gauges(sources: HistorySources | null): Promise<Record<string, number>> {
  const sum = async (
    name: string,
    where: (labels: Record<string, string | number>) => boolean = () => true,
  ): Promise<number> => {
    const metric = registry.getSingleMetric(name);
    if (!metric) return 0;
    const { values } = await metric.get();
    return values
      .filter((v) => where(v.labels as Record<string, string | number>))
      .reduce((a, v) => a + v.value, 0);
  };
  return {
    memories: await sum('flashbulb_memories'),
    embedding_queue: await sum('flashbulb_embedding_queue'),
    contradiction_checks: await sum(
      'flashbulb_background_backlog',
      (l) => l['work'] === 'contradiction_checks',
    ),
    vector_index: await sum('flashbulb_background_backlog', (l) => l['work'] === 'vector_index'),
    open_subscriptions: await sum('flashbulb_open_subscriptions'),
    connections: await sum('flashbulb_connections_open'),
    shards: sources?.shards ?? 0,
    shards_down: sources?.problems().length ?? 0,
    shards_storage_failed: await sum('flashbulb_shard_storage_failed'),
    shards_memory_full: await sum('flashbulb_shard_memory_full'),
    rss_mb: Math.round(process.memoryUsage.rss() / 2 ** 20),
  };
}
