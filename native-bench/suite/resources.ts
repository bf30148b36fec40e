/**
 * @module native-bench/suite/resources — what the stored data costs: server RSS and data-directory
 * bytes per memory after loading, and a restart (SIGTERM, start, time until /v1/health/ready is
 * 200) with the data directory's size after the final snapshot.
 */
import { dirBytes, rssBytes, waitForIdleProcess } from '../lib/proc.ts';
import { expectJson, RestClient } from '../lib/rest-client.ts';
import type { RunningServer } from '../lib/server-process.ts';
import { startSuiteServer, type SuiteServerConfig } from './server.ts';

/** Both the model and the hash embedder give 384 dimensions unless the log says otherwise. */
const DEFAULT_DIM = 384;

export interface LoadFootprint {
  memories: number;
  rss_empty_bytes: number;
  /** RSS once half the dataset was stored (and indexed). */
  rss_half_bytes: number;
  rss_loaded_bytes: number;
  /** What one more memory costs: the RSS growth over the second half of the load, per memory. */
  rss_bytes_per_memory: number;
  /** (loaded − empty) / memories: includes the heap and caches a first load warms up. */
  rss_average_bytes_per_memory: number;
  vector_bytes: number;
  /** rss_bytes_per_memory minus the raw float32 vector (the goal: at most 4 KB). */
  rss_beyond_vector_bytes_per_memory: number;
  data_dir_bytes: number;
  data_dir_bytes_per_memory: number;
  /** Seconds after the load until the server's background indexing went idle. */
  index_settle_s: number;
}

export interface RestartCost {
  memories: number;
  stop_ms: number;
  stop_exit_code: number | null;
  /** Log + snapshot + saved HNSW graphs after the final snapshot. */
  data_dir_bytes_after_stop: number;
  data_dir_bytes_per_memory_after_stop: number;
  /** Spawn until GET /v1/health/ready answered 200 (model load included). */
  restart_ready_ms: number;
  rss_after_restart_bytes: number;
  /** (RSS after the restart − RSS of the empty server) / memories: no load-time garbage or arenas. */
  rss_after_restart_bytes_per_memory: number;
}

export function vectorDim(log: readonly string[]): number {
  for (const line of log) {
    const m = /\((\d+) dims\)/.exec(line);
    if (m) return Number(m[1]);
  }
  return DEFAULT_DIM;
}

/** Memories in the key's workspace, as the server counts them. */
export async function memoryCount(server: RunningServer): Promise<number> {
  const client = new RestClient({
    host: '127.0.0.1',
    port: server.port,
    apiKey: server.apiKey,
    maxSockets: 1,
  });
  try {
    return expectJson<{ memory_count: number }>(
      await client.get('/v1/workspaces/default'),
      200,
      'workspace',
    ).memory_count;
  } finally {
    client.close();
  }
}

export interface RssPoint {
  memories: number;
  rss: number;
  settleS: number;
}

/** Waits for the server's background indexing to finish, then reads its RSS and memory count. */
export async function rssPoint(server: RunningServer, settleLimitS: number): Promise<RssPoint> {
  // 0.1: an idle server reads 0–0.06 cores in half-second windows (10 ms clock ticks).
  const settleS = await waitForIdleProcess(server.pid, { maxCores: 0.1, limitS: settleLimitS });
  return { memories: await memoryCount(server), rss: rssBytes(server.pid), settleS };
}

export function loadFootprint(
  server: RunningServer,
  opts: { dataDir: string; empty: number; half: RssPoint; full: RssPoint },
): LoadFootprint {
  const { half, full } = opts;
  const memories = full.memories;
  const data = dirBytes(opts.dataDir);
  const perMemory = (full.rss - half.rss) / Math.max(1, full.memories - half.memories);
  const vectorBytes = vectorDim(server.log) * 4;
  return {
    memories,
    rss_empty_bytes: opts.empty,
    rss_half_bytes: half.rss,
    rss_loaded_bytes: full.rss,
    rss_bytes_per_memory: perMemory,
    rss_average_bytes_per_memory: (full.rss - opts.empty) / Math.max(1, memories),
    vector_bytes: vectorBytes,
    rss_beyond_vector_bytes_per_memory: perMemory - vectorBytes,
    data_dir_bytes: data,
    data_dir_bytes_per_memory: data / Math.max(1, memories),
    index_settle_s: full.settleS,
  };
}

/** Stops the server with SIGTERM, starts it again on the same data, and stops it again. */
export async function measureRestart(
  server: RunningServer,
  cfg: SuiteServerConfig,
  rssEmpty: number,
): Promise<RestartCost> {
  const memories = await memoryCount(server);
  const stopped = await server.stop();
  const afterStop = dirBytes(cfg.dataDir);
  const again = await startSuiteServer(cfg, server.apiKey);
  const rss = rssBytes(again.pid);
  await again.stop();
  return {
    memories,
    stop_ms: stopped.ms,
    stop_exit_code: stopped.code,
    data_dir_bytes_after_stop: afterStop,
    data_dir_bytes_per_memory_after_stop: afterStop / Math.max(1, memories),
    restart_ready_ms: again.readyMs,
    rss_after_restart_bytes: rss,
    rss_after_restart_bytes_per_memory: (rss - rssEmpty) / Math.max(1, memories),
  };
}
