/**
 * @module native-bench/suite/load — stores the tier's dataset over REST with parallel clients,
 * printing progress (count, rate, time left) every few seconds; in two halves, reading the
 * server's RSS after each once its background indexing is done (RSS per memory is the slope).
 */
import { runClosedLoop } from '../lib/closed-loop.ts';
import type { Dataset } from './ops/dataset.ts';
import { rememberOp } from './ops/memory.ts';
import type { RunningServer } from '../lib/server-process.ts';
import { loadFootprint, rssPoint, type LoadFootprint } from './resources.ts';
import { RestDriver, type Endpoint } from './rest-driver.ts';

const PROGRESS_MS = 5000;
/** Longest wait for the server's background indexing after a load. */
const SETTLE_LIMIT_S = 600;

export interface LoadResult {
  memories: number;
  seconds: number;
  perS: number;
}

function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  return s >= 60
    ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`
    : `${s.toFixed(0)}s`;
}

/** `stored` so far in this call, `before` stored earlier, `total` overall. */
function progressLine(
  p: { stored: number; before: number; total: number },
  startMs: number,
): string {
  const rate = p.stored / ((performance.now() - startMs) / 1000);
  const done = p.before + p.stored;
  return `  loading: ${done}/${p.total} (${((done / p.total) * 100).toFixed(0)}%), ${rate.toFixed(0)}/s, ${duration((p.total - done) / rate)} left`;
}

interface LoadOptions {
  count: number;
  concurrency: number;
  /** For the progress line: memories stored before this call, and the overall total. */
  progress: { before: number; total: number };
}

export async function loadDataset(
  endpoint: Endpoint,
  ds: Dataset,
  opts: LoadOptions,
): Promise<LoadResult> {
  const driver = new RestDriver(endpoint, { sockets: opts.concurrency });
  const before = ds.ids.length;
  const start = performance.now();
  const show = (): void =>
    console.error(progressLine({ stored: ds.ids.length - before, ...opts.progress }, start));
  const timer = setInterval(show, PROGRESS_MS);
  try {
    const run = await runClosedLoop(rememberOp(driver, ds), {
      concurrency: opts.concurrency,
      durationMs: 0,
      ops: opts.count,
    });
    if (run.errors > 0)
      throw new Error(`loading failed ${run.errors} times; first: ${run.firstError ?? '?'}`);
    return {
      memories: ds.ids.length - before,
      seconds: run.seconds,
      perS: (ds.ids.length - before) / run.seconds,
    };
  } finally {
    clearInterval(timer);
    driver.close();
  }
}

interface HalvesOptions {
  dataDir: string;
  ds: Dataset;
  count: number;
  concurrency: number;
  /** Server RSS before anything was stored. */
  rssEmpty: number;
}

export async function loadInHalves(
  server: RunningServer,
  o: HalvesOptions,
): Promise<{ load: LoadResult; footprint: LoadFootprint }> {
  const rest = { port: server.port, apiKey: server.apiKey };
  const firstCount = Math.floor(o.count / 2);
  console.error(`loading ${o.count} memories over REST with ${o.concurrency} clients…`);
  const first = await loadDataset(rest, o.ds, {
    count: firstCount,
    concurrency: o.concurrency,
    progress: { before: 0, total: o.count },
  });
  const half = await rssPoint(server, SETTLE_LIMIT_S);
  const second = await loadDataset(rest, o.ds, {
    count: o.count - firstCount,
    concurrency: o.concurrency,
    progress: { before: firstCount, total: o.count },
  });
  const seconds = first.seconds + second.seconds;
  const memories = first.memories + second.memories;
  console.error(
    `loaded ${memories} in ${seconds.toFixed(1)} s (${(memories / seconds).toFixed(0)}/s); waiting for background indexing…`,
  );
  const full = await rssPoint(server, SETTLE_LIMIT_S);
  return {
    load: { memories, seconds, perS: memories / seconds },
    footprint: loadFootprint(server, { dataDir: o.dataDir, empty: o.rssEmpty, half, full }),
  };
}
