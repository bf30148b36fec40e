/**
 * @module metrics — every metric of the service, declared once. Names carry the `flashbulb_`
 * prefix; there is no per-workspace label (unbounded cardinality).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
// The event loop's delay is sampled every 100 ms (prom-client's default, 10 ms, is a timer that
// wakes an idle server 100 times a second: 5–8 ms of CPU a second doing nothing, and a wake-up
// between a one-client read's request and its reply; docs/benchmarks.md).
collectDefaultMetrics({
  register: registry,
  prefix: 'flashbulb_',
  eventLoopMonitoringPrecision: 100,
});

const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

export const requestDuration = new Histogram({
  name: 'flashbulb_request_duration_seconds',
  help: 'Request duration by operation, protocol and outcome',
  labelNames: ['operation', 'protocol', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const memoriesGauge = new Gauge({
  name: 'flashbulb_memories',
  help: 'Memories stored (all workspaces, superseded versions included)',
  registers: [registry],
});

export const embeddingDuration = new Histogram({
  name: 'flashbulb_embedding_duration_seconds',
  help: 'Time to embed one batch',
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const embeddingQueue = new Gauge({
  name: 'flashbulb_embedding_queue',
  help: 'Texts waiting for the embedding model (not yet sent to a worker)',
  registers: [registry],
});

export const embeddingBatchSize = new Histogram({
  name: 'flashbulb_embedding_batch_size',
  help: 'Texts per embedding batch',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128],
  registers: [registry],
});

export const logSyncDuration = new Histogram({
  name: 'flashbulb_log_sync_duration_seconds',
  help: 'Duration of one group commit (write + fdatasync) of a shard log',
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const snapshotDuration = new Histogram({
  name: 'flashbulb_snapshot_duration_seconds',
  help: 'Duration of one shard snapshot',
  buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const rateLimited = new Counter({
  name: 'flashbulb_rate_limited_total',
  help: 'Requests refused by a workspace rate limit',
  labelNames: ['class'] as const,
  registers: [registry],
});

export const openSubscriptions = new Gauge({
  name: 'flashbulb_open_subscriptions',
  help: 'Open subscriptions',
  registers: [registry],
});

export const subscriptionPushes = new Counter({
  name: 'flashbulb_subscription_pushes_total',
  help: 'Memories pushed to subscribers',
  registers: [registry],
});

export const subscriptionDropped = new Counter({
  name: 'flashbulb_subscription_dropped_total',
  help: 'Pushes dropped because a subscriber was not reading (oldest first, past the queue bound)',
  registers: [registry],
});

export const reflectionRuns = new Counter({
  name: 'flashbulb_reflection_runs_total',
  help: 'Reflection runs',
  registers: [registry],
});

export const llmFailures = new Counter({
  name: 'flashbulb_llm_failures_total',
  help: 'Language-model calls that failed and fell back to the heuristic path',
  labelNames: ['purpose'] as const,
  registers: [registry],
});

export const contradictionsFound = new Counter({
  name: 'flashbulb_contradictions_found_total',
  help: 'Contradictions found by the checker',
  registers: [registry],
});

export const shardCrashes = new Counter({
  name: 'flashbulb_shard_crashes_total',
  help: 'Shard workers that ended on their own (an uncaught error, a full heap); each is restarted from its files',
  labelNames: ['shard'] as const,
  registers: [registry],
});

export const shardHeapLive = new Gauge({
  name: 'flashbulb_shard_heap_live_bytes',
  help: "A shard worker's old generation in use after its last full collection (what its data holds)",
  labelNames: ['shard'] as const,
  registers: [registry],
});

export const shardHeapLimit = new Gauge({
  name: 'flashbulb_shard_heap_limit_bytes',
  help: "A shard worker's old-generation limit (FLASHBULB_SHARD_HEAP_MB, or V8's own)",
  labelNames: ['shard'] as const,
  registers: [registry],
});

export const shardMemoryFull = new Gauge({
  name: 'flashbulb_shard_memory_full',
  help: '1 while a shard refuses writes because its heap is nearly full (reads and forget go on)',
  labelNames: ['shard'] as const,
  registers: [registry],
});

export const shardStorageFailed = new Gauge({
  name: 'flashbulb_shard_storage_failed',
  help: '1 while a shard cannot write its log (a full disk, an I/O error): it refuses every request until it is restarted from its files',
  labelNames: ['shard'] as const,
  registers: [registry],
});

export const backgroundBacklog = new Gauge({
  name: 'flashbulb_background_backlog',
  help: 'Work waiting in the shards off the request path: new memories not yet checked for contradictions (work="contradiction_checks") and vectors not yet in an HNSW graph, searched exactly meanwhile (work="vector_index")',
  labelNames: ['shard', 'work'] as const,
  registers: [registry],
});

export const memoriesExpired = new Counter({
  name: 'flashbulb_memories_expired_total',
  help: 'Memories forgotten because their expiry (ttl_s, expires_at_us or the workspace default TTL) was reached, superseded versions included',
  registers: [registry],
});

export const contradictionChecksSkipped = new Counter({
  name: 'flashbulb_contradiction_checks_skipped_total',
  help: 'New memories not checked for contradictions because the check backlog overflowed',
  registers: [registry],
});

export const connectionsOpen = new Gauge({
  name: 'flashbulb_connections_open',
  help: 'Open client connections by protocol (rest, grpc)',
  labelNames: ['protocol'] as const,
  registers: [registry],
});

export const connectionsRefused = new Counter({
  name: 'flashbulb_connections_refused_total',
  help: 'Connections refused by a cap: reason="total" (FLASHBULB_MAX_CONNECTIONS), "per_client" (FLASHBULB_MAX_CONNECTIONS_PER_CLIENT), "reserved" (a request other than a health check on a place kept for health checks), "unauthenticated" (a connection without a valid key closed to make room for a newcomer past FLASHBULB_MAX_UNAUTHENTICATED_CONNECTIONS / _PER_CLIENT)',
  labelNames: ['protocol', 'reason'] as const,
  registers: [registry],
});

export const connectionsTimedOut = new Counter({
  name: 'flashbulb_connections_timed_out_total',
  help: 'Connections closed because the client was too slow: phase="request" (REST headers or the whole request past FLASHBULB_HEADERS_TIMEOUT_MS / FLASHBULB_REQUEST_TIMEOUT_S), "body" (REST: no body bytes for FLASHBULB_BODY_TIMEOUT_MS), "grpc_preface" (gRPC: nothing sent within FLASHBULB_HEADERS_TIMEOUT_MS), "auth" (no request with a valid key within FLASHBULB_AUTH_TIMEOUT_MS)',
  labelNames: ['phase'] as const,
  registers: [registry],
});

export const requestsRejectedBeforeBody = new Counter({
  name: 'flashbulb_requests_rejected_before_body_total',
  help: 'REST requests answered from their headers alone (401/403/404/405 before any body byte was read), their connection closed',
  registers: [registry],
});

export const rerankDuration = new Histogram({
  name: 'flashbulb_rerank_duration_seconds',
  help: "Time from a recall's candidates reaching the reranker to their scores (recalls that were reranked)",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const rerankOutcomes = new Counter({
  name: 'flashbulb_rerank_total',
  help: 'Recalls sent to the reranker, by outcome: "reranked"; "timeout" (past FLASHBULB_RERANK_TIMEOUT_MS), "busy" (its queue full) or "failed" (the model raised), each of which answers in the unreranked order',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
