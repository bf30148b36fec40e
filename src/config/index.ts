/**
 * @module config — the only reader of process.env. Turns the environment into one frozen,
 * typed Config; every variable is listed in DEFAULTS and documented in docs/operations/configuration.md.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RerankConfig } from './rerank.ts';

export type { RerankConfig } from './rerank.ts';

export type Durability = 'fsync' | 'os';
export type EmbedderKind = 'model' | 'hash';

export interface Config {
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly bind: string;
  readonly dataDir: string;
  readonly authEnabled: boolean;
  readonly publicHealth: boolean;
  /** Shard count used only when the data directory is created; later it is read from the directory. */
  readonly shards: number;
  readonly durability: Durability;
  readonly snapshotIntervalS: number;
  readonly snapshotWalBytes: number;
  readonly eraseWithinS: number;
  readonly embedder: EmbedderKind;
  readonly modelDir: string;
  /** Embedding worker threads and ONNX Runtime intra-op threads per worker. */
  readonly embedWorkers: number;
  readonly embedThreads: number;
  /** Idle ONNX intra-op threads busy-wait for work (lower latency on dedicated cores, more CPU). */
  readonly embedSpin: boolean;
  /** Embeddings kept in the LRU cache (0 disables it). */
  readonly embedCacheSize: number;
  /** Seconds without an embedding after which the model's worker exits (0: it stays). */
  readonly embedIdleS: number;
  /** Per-workspace token-bucket rates (requests per second); 0 disables the limit. */
  readonly rateLimitWrites: number;
  readonly rateLimitReads: number;
  readonly maxInflightPerShard: number;
  /** One workspace's share of a shard's in-flight requests, so it cannot starve the others. */
  readonly maxInflightPerWorkspace: number;
  readonly shardTimeoutMs: number;
  /** First wait before a shard whose log failed, or that crashed, is restarted from its files (doubling, to at least 60 s). */
  readonly shardRestartS: number;
  /** Each shard worker's JavaScript heap cap in MB (0: V8's own limit). */
  readonly shardHeapMb: number;
  readonly contradictionsEnabled: boolean;
  readonly reflectEnabled: boolean;
  readonly reflectMinNew: number;
  readonly reflectIntervalS: number;
  /** OpenAI-compatible chat endpoint for insights and uncertain contradictions (empty: none). */
  readonly llmBaseUrl: string;
  readonly llmModel: string;
  readonly llmApiKey: string;
  readonly llmTimeoutMs: number;
  /** On SIGTERM, how long in-flight requests may take before their connections are closed. */
  readonly shutdownTimeoutS: number;
  /** `flashbulb mcp`: the server to relay to (empty: none) and the API key to use there. */
  readonly url: string;
  /** Where CLI commands that talk to a running server (export, import, backup) send requests, and with which key. */
  readonly serverUrl: string;
  readonly apiKey: string;
  /** The built web dashboard served at `/` on the REST port (a missing directory serves none). */
  readonly webDir: string;
  /** Cluster mode (src/cluster) when non-empty: the NATS servers to connect to. */
  readonly natsUrls: readonly string[];
  /** This node's id in the cluster (required with natsUrls). */
  readonly nodeId: string;
  /** Name prefixing the cluster's streams, buckets and subjects (several clusters can share NATS). */
  readonly clusterName: string;
  /** Partition count, used only when the cluster is created; later read from NATS. */
  readonly clusterPartitions: number;
  /** JetStream replicas for the partition streams and buckets (1, or 3 on a 3-server NATS). */
  readonly natsReplicas: number;
  /** How long an ownership lease lasts without renewal; renewed every third of it. */
  readonly clusterLeaseMs: number;
  /** OpenTelemetry spans: `none` (default) or `otlp` (OTLP/HTTP, endpoint from the standard OTEL_* variables). */
  readonly otelExporter: 'none' | 'otlp';
  /** Open connections on the REST and gRPC listeners together, and from one client address (0: no per-address cap). */
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
  /** Places below maxConnections kept for health checks. */
  readonly healthConnections: number;
  /** With auth on: a connection must present a valid key within this; unauthenticated connections may hold this many places in all, and from one client. */
  readonly authTimeoutMs: number;
  readonly maxUnauthenticatedConnections: number;
  readonly maxUnauthenticatedPerClient: number;
  /** A request head must arrive within this; a body may pause at most `bodyTimeoutMs`; the whole request must arrive within `requestTimeoutS`. */
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly requestTimeoutS: number;
  /** gRPC: concurrent streams per connection and the largest request message. */
  readonly grpcMaxStreams: number;
  readonly grpcMaxMessageBytes: number;
  /** Reply bytes one request may hold, one workspace may have in flight, and all together (router/reply-budget). */
  readonly maxReplyBytes: number;
  readonly maxReplyBytesPerWorkspace: number;
  readonly maxReplyBytesInFlight: number;
  /** The optional cross-encoder reranker of recall (off by default; docs/concepts/reranking.md). */
  readonly rerank: RerankConfig;
}

const CORES = availableParallelism();
/**
 * Two embedding workers where there are two cores: on a quiet 2-core machine two sessions of one
 * ONNX thread each embedded 1.4× as many texts at 16 clients as one session of two threads, at 3/4
 * of its CPU per text, for ~77 MB more (docs/benchmarks.md, "Two workers or one").
 */
const EMBED_WORKERS = Math.min(2, CORES);

/** Defaults in one place (name of the variable → default). */
export const DEFAULTS = {
  FLASHBULB_OTEL_EXPORTER: 'none',
  FLASHBULB_HTTP_PORT: '6381',
  FLASHBULB_GRPC_PORT: '6380',
  FLASHBULB_BIND: '0.0.0.0',
  FLASHBULB_DATA_DIR: './snapshots',
  FLASHBULB_AUTH_ENABLED: 'true',
  FLASHBULB_PUBLIC_HEALTH: 'false',
  FLASHBULB_SHARDS: String(CORES),
  FLASHBULB_DURABILITY: 'fsync',
  FLASHBULB_SNAPSHOT_INTERVAL_S: '300',
  FLASHBULB_SNAPSHOT_WAL_BYTES: String(64 * 1024 * 1024),
  FLASHBULB_ERASE_WITHIN_S: '60',
  FLASHBULB_EMBEDDER: 'model',
  FLASHBULB_MODEL_DIR: fileURLToPath(new URL('../../models/bge-small-en-v1.5', import.meta.url)),
  FLASHBULB_EMBED_WORKERS: String(EMBED_WORKERS),
  FLASHBULB_EMBED_THREADS: String(Math.max(1, Math.floor(Math.min(4, CORES) / EMBED_WORKERS))),
  FLASHBULB_EMBED_SPIN: 'false',
  FLASHBULB_EMBED_CACHE: '10000',
  FLASHBULB_EMBED_IDLE_S: '300',
  FLASHBULB_RATE_LIMIT_WRITES: '20000',
  FLASHBULB_RATE_LIMIT_READS: '100000',
  FLASHBULB_MAX_INFLIGHT_PER_SHARD: '8192',
  FLASHBULB_MAX_INFLIGHT_PER_WORKSPACE: '2048',
  FLASHBULB_SHARD_TIMEOUT_MS: '30000',
  FLASHBULB_SHARD_RESTART_S: '2',
  FLASHBULB_SHARD_HEAP_MB: '0',
  FLASHBULB_CONTRADICTIONS_ENABLED: 'true',
  FLASHBULB_REFLECT_ENABLED: 'true',
  FLASHBULB_REFLECT_MIN_NEW: '50',
  FLASHBULB_REFLECT_INTERVAL_S: '600',
  FLASHBULB_LLM_BASE_URL: '',
  FLASHBULB_LLM_MODEL: '',
  FLASHBULB_LLM_API_KEY: '',
  FLASHBULB_LLM_TIMEOUT_MS: '20000',
  FLASHBULB_SHUTDOWN_TIMEOUT_S: '10',
  FLASHBULB_URL: '',
  FLASHBULB_API_KEY: '',
  FLASHBULB_WEB_DIR: fileURLToPath(new URL('../../dist/web', import.meta.url)),
  FLASHBULB_NATS_URL: '',
  FLASHBULB_NODE_ID: '',
  FLASHBULB_CLUSTER_NAME: 'flashbulb',
  FLASHBULB_CLUSTER_PARTITIONS: '64',
  FLASHBULB_NATS_REPLICAS: '1',
  FLASHBULB_CLUSTER_LEASE_MS: '3500',
  FLASHBULB_MAX_CONNECTIONS: String(defaultMaxConnections()),
  FLASHBULB_MAX_CONNECTIONS_PER_CLIENT: '256',
  FLASHBULB_HEALTH_CONNECTIONS: '16',
  FLASHBULB_AUTH_TIMEOUT_MS: '5000',
  /** Empty: a quarter of FLASHBULB_MAX_CONNECTIONS, at least 8. */
  FLASHBULB_MAX_UNAUTHENTICATED_CONNECTIONS: '',
  FLASHBULB_MAX_UNAUTHENTICATED_PER_CLIENT: '16',
  FLASHBULB_HEADERS_TIMEOUT_MS: '10000',
  FLASHBULB_BODY_TIMEOUT_MS: '10000',
  FLASHBULB_REQUEST_TIMEOUT_S: '60',
  FLASHBULB_GRPC_MAX_STREAMS: '256',
  FLASHBULB_GRPC_MAX_MESSAGE_BYTES: String(16 * 1024 * 1024),
  FLASHBULB_MAX_REPLY_BYTES: String(16 * 1024 * 1024),
  FLASHBULB_MAX_REPLY_BYTES_PER_WORKSPACE: String(64 * 1024 * 1024),
  FLASHBULB_MAX_REPLY_BYTES_IN_FLIGHT: String(256 * 1024 * 1024),
  FLASHBULB_RERANK_ENABLED: 'false',
  FLASHBULB_RERANK_MODEL_DIR: '',
  FLASHBULB_RERANK_CANDIDATES: '30',
  FLASHBULB_RERANK_WORKERS: '1',
  FLASHBULB_RERANK_THREADS: String(Math.min(2, availableParallelism())),
  FLASHBULB_RERANK_BATCH: '16',
  FLASHBULB_RERANK_MAX_TOKENS: '256',
  FLASHBULB_RERANK_MAX_QUEUED: '64',
  FLASHBULB_RERANK_TIMEOUT_MS: '1000',
} as const satisfies Record<string, string>;

/**
 * Half the process's open-file limit (the rest is for the data files, the embedder and NATS),
 * between 64 and 10 000; 512 where the limit cannot be read (it is 1 024 on many systems).
 */
function defaultMaxConnections(): number {
  let soft = 1024;
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(
      readFileSync('/proc/self/limits', 'utf8'),
    );
    if (line?.[1] !== undefined) soft = line[1] === 'unlimited' ? Infinity : Number(line[1]);
  } catch {
    /* not Linux: keep the common limit */
  }
  return Math.max(64, Math.min(10_000, Math.floor(soft / 2)));
}

type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function read(env: Env, name: keyof typeof DEFAULTS): string {
  const v = env[name];
  return v === undefined || v === '' ? DEFAULTS[name] : v;
}

function url(env: Env, name: keyof typeof DEFAULTS): string {
  const text = read(env, name);
  if (text === '') return '';
  try {
    const u = new URL(text);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got '${text}'`);
  }
  return text.replace(/\/+$/, '');
}

function int(env: Env, name: keyof typeof DEFAULTS, min: number, max: number): number {
  const text = read(env, name);
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer in [${min}, ${max}], got '${text}'`);
  }
  return n;
}

/** 0 (no cap of our own), or a heap a shard can start in. */
function heapMb(env: Env, name: keyof typeof DEFAULTS): number {
  const n = int(env, name, 0, 1_048_576);
  if (n !== 0 && n < 32)
    throw new ConfigError(
      `${name} must be 0 (V8's own limit) or at least 32 (MB), got '${read(env, name)}'`,
    );
  return n;
}

function bool(env: Env, name: keyof typeof DEFAULTS): boolean {
  const text = read(env, name).toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(text)) return true;
  if (['false', '0', 'no', 'off'].includes(text)) return false;
  throw new ConfigError(`${name} must be true or false, got '${text}'`);
}

function oneOf<T extends string>(env: Env, name: keyof typeof DEFAULTS, values: readonly T[]): T {
  const text = read(env, name).toLowerCase();
  const found = values.find((v) => v === text);
  if (!found) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got '${text}'`);
  return found;
}

function natsUrls(env: Env): string[] {
  const text = read(env, 'FLASHBULB_NATS_URL');
  if (text === '') return [];
  return text.split(',').map((part) => {
    const u = part.trim();
    let ok = false;
    try {
      ok = ['nats:', 'tls:'].includes(new URL(u).protocol);
    } catch {
      ok = false;
    }
    if (!ok)
      throw new ConfigError(
        `FLASHBULB_NATS_URL must be comma-separated nats:// or tls:// URLs, got '${u}'`,
      );
    return u;
  });
}

function name(env: Env, key: keyof typeof DEFAULTS): string {
  const text = read(env, key);
  if (text !== '' && !/^[A-Za-z0-9_-]{1,64}$/.test(text)) {
    throw new ConfigError(`${key} must be 1 to 64 letters, digits, '-' or '_', got '${text}'`);
  }
  return text;
}

/** Builds the frozen Config from an environment (process.env by default) and overrides. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const config: Config = {
    httpPort: int(env, 'FLASHBULB_HTTP_PORT', 0, 65535),
    grpcPort: int(env, 'FLASHBULB_GRPC_PORT', 0, 65535),
    bind: read(env, 'FLASHBULB_BIND'),
    dataDir: resolve(read(env, 'FLASHBULB_DATA_DIR')),
    authEnabled: bool(env, 'FLASHBULB_AUTH_ENABLED'),
    publicHealth: bool(env, 'FLASHBULB_PUBLIC_HEALTH'),
    shards: int(env, 'FLASHBULB_SHARDS', 1, 256),
    durability: oneOf(env, 'FLASHBULB_DURABILITY', ['fsync', 'os'] as const),
    snapshotIntervalS: int(env, 'FLASHBULB_SNAPSHOT_INTERVAL_S', 1, 86_400),
    snapshotWalBytes: int(env, 'FLASHBULB_SNAPSHOT_WAL_BYTES', 1024, 2 ** 40),
    eraseWithinS: int(env, 'FLASHBULB_ERASE_WITHIN_S', 1, 86_400),
    embedder: oneOf(env, 'FLASHBULB_EMBEDDER', ['model', 'hash'] as const),
    modelDir: resolve(read(env, 'FLASHBULB_MODEL_DIR')),
    embedWorkers: int(env, 'FLASHBULB_EMBED_WORKERS', 1, 16),
    embedThreads: int(env, 'FLASHBULB_EMBED_THREADS', 1, 64),
    embedSpin: bool(env, 'FLASHBULB_EMBED_SPIN'),
    embedCacheSize: int(env, 'FLASHBULB_EMBED_CACHE', 0, 10_000_000),
    embedIdleS: int(env, 'FLASHBULB_EMBED_IDLE_S', 0, 86_400),
    rateLimitWrites: int(env, 'FLASHBULB_RATE_LIMIT_WRITES', 0, 1e9),
    rateLimitReads: int(env, 'FLASHBULB_RATE_LIMIT_READS', 0, 1e9),
    maxInflightPerShard: int(env, 'FLASHBULB_MAX_INFLIGHT_PER_SHARD', 1, 1e7),
    maxInflightPerWorkspace: int(env, 'FLASHBULB_MAX_INFLIGHT_PER_WORKSPACE', 1, 1e7),
    shardTimeoutMs: int(env, 'FLASHBULB_SHARD_TIMEOUT_MS', 100, 3_600_000),
    shardRestartS: int(env, 'FLASHBULB_SHARD_RESTART_S', 1, 3600),
    shardHeapMb: heapMb(env, 'FLASHBULB_SHARD_HEAP_MB'),
    contradictionsEnabled: bool(env, 'FLASHBULB_CONTRADICTIONS_ENABLED'),
    reflectEnabled: bool(env, 'FLASHBULB_REFLECT_ENABLED'),
    reflectMinNew: int(env, 'FLASHBULB_REFLECT_MIN_NEW', 1, 1e9),
    reflectIntervalS: int(env, 'FLASHBULB_REFLECT_INTERVAL_S', 1, 86_400 * 30),
    llmBaseUrl: url(env, 'FLASHBULB_LLM_BASE_URL'),
    llmModel: read(env, 'FLASHBULB_LLM_MODEL'),
    llmApiKey: read(env, 'FLASHBULB_LLM_API_KEY'),
    llmTimeoutMs: int(env, 'FLASHBULB_LLM_TIMEOUT_MS', 100, 600_000),
    shutdownTimeoutS: int(env, 'FLASHBULB_SHUTDOWN_TIMEOUT_S', 1, 3600),
    url: url(env, 'FLASHBULB_URL'),
    serverUrl:
      url(env, 'FLASHBULB_URL') || `http://127.0.0.1:${int(env, 'FLASHBULB_HTTP_PORT', 0, 65535)}`,
    apiKey: read(env, 'FLASHBULB_API_KEY'),
    webDir: resolve(read(env, 'FLASHBULB_WEB_DIR')),
    natsUrls: natsUrls(env),
    nodeId: name(env, 'FLASHBULB_NODE_ID'),
    clusterName: name(env, 'FLASHBULB_CLUSTER_NAME'),
    clusterPartitions: int(env, 'FLASHBULB_CLUSTER_PARTITIONS', 1, 1024),
    natsReplicas: int(env, 'FLASHBULB_NATS_REPLICAS', 1, 5),
    clusterLeaseMs: int(env, 'FLASHBULB_CLUSTER_LEASE_MS', 1000, 600_000),
    otelExporter: oneOf(env, 'FLASHBULB_OTEL_EXPORTER', ['none', 'otlp'] as const),
    maxConnections: int(env, 'FLASHBULB_MAX_CONNECTIONS', 2, 1_000_000),
    maxConnectionsPerClient: int(env, 'FLASHBULB_MAX_CONNECTIONS_PER_CLIENT', 0, 1_000_000),
    healthConnections: int(env, 'FLASHBULB_HEALTH_CONNECTIONS', 0, 1000),
    authTimeoutMs: int(env, 'FLASHBULB_AUTH_TIMEOUT_MS', 100, 600_000),
    maxUnauthenticatedConnections:
      read(env, 'FLASHBULB_MAX_UNAUTHENTICATED_CONNECTIONS') === ''
        ? Math.max(8, Math.floor(int(env, 'FLASHBULB_MAX_CONNECTIONS', 2, 1_000_000) / 4))
        : int(env, 'FLASHBULB_MAX_UNAUTHENTICATED_CONNECTIONS', 1, 1_000_000),
    maxUnauthenticatedPerClient: int(env, 'FLASHBULB_MAX_UNAUTHENTICATED_PER_CLIENT', 1, 1_000_000),
    headersTimeoutMs: int(env, 'FLASHBULB_HEADERS_TIMEOUT_MS', 100, 600_000),
    bodyTimeoutMs: int(env, 'FLASHBULB_BODY_TIMEOUT_MS', 100, 600_000),
    requestTimeoutS: int(env, 'FLASHBULB_REQUEST_TIMEOUT_S', 1, 3600),
    grpcMaxStreams: int(env, 'FLASHBULB_GRPC_MAX_STREAMS', 1, 1_000_000),
    grpcMaxMessageBytes: int(env, 'FLASHBULB_GRPC_MAX_MESSAGE_BYTES', 1024, 1024 * 1024 * 1024),
    maxReplyBytes: int(env, 'FLASHBULB_MAX_REPLY_BYTES', 64 * 1024, 2 ** 32),
    maxReplyBytesPerWorkspace: int(
      env,
      'FLASHBULB_MAX_REPLY_BYTES_PER_WORKSPACE',
      64 * 1024,
      2 ** 40,
    ),
    maxReplyBytesInFlight: int(env, 'FLASHBULB_MAX_REPLY_BYTES_IN_FLIGHT', 64 * 1024, 2 ** 40),
    rerank: {
      enabled: bool(env, 'FLASHBULB_RERANK_ENABLED'),
      modelDir:
        read(env, 'FLASHBULB_RERANK_MODEL_DIR') === ''
          ? ''
          : resolve(read(env, 'FLASHBULB_RERANK_MODEL_DIR')),
      candidates: int(env, 'FLASHBULB_RERANK_CANDIDATES', 1, 200),
      workers: int(env, 'FLASHBULB_RERANK_WORKERS', 1, 16),
      threads: int(env, 'FLASHBULB_RERANK_THREADS', 1, 64),
      batch: int(env, 'FLASHBULB_RERANK_BATCH', 1, 256),
      maxTokens: int(env, 'FLASHBULB_RERANK_MAX_TOKENS', 16, 8192),
      maxQueued: int(env, 'FLASHBULB_RERANK_MAX_QUEUED', 1, 100_000),
      timeoutMs: int(env, 'FLASHBULB_RERANK_TIMEOUT_MS', 1, 600_000),
    },
    ...overrides,
  };
  if (config.llmBaseUrl !== '' && config.llmModel === '') {
    throw new ConfigError('FLASHBULB_LLM_MODEL is required when FLASHBULB_LLM_BASE_URL is set');
  }
  if (config.healthConnections >= config.maxConnections) {
    throw new ConfigError(
      `FLASHBULB_HEALTH_CONNECTIONS (${config.healthConnections}) must be below FLASHBULB_MAX_CONNECTIONS (${config.maxConnections})`,
    );
  }
  if (config.rerank.enabled && config.rerank.modelDir === '') {
    throw new ConfigError(
      'FLASHBULB_RERANK_MODEL_DIR is required when FLASHBULB_RERANK_ENABLED is true (a cross-encoder directory)',
    );
  }
  if (config.natsUrls.length > 0 && config.nodeId === '') {
    throw new ConfigError(
      'FLASHBULB_NODE_ID is required when FLASHBULB_NATS_URL is set (cluster mode)',
    );
  }
  return Object.freeze(config);
}
