/**
 * @module app — composition root: config → data dir → auth → shards → embedder → REST (and gRPC);
 * `stop()` drains requests (up to `FLASHBULB_SHUTDOWN_TIMEOUT_S`), snapshots every shard and
 * releases everything.
 */
import { RateLimiter } from './auth/rate-limit.ts';
import { AuthStore, type AuthDirectory } from './auth/store.ts';
import { DEFAULT_WORKSPACE } from './auth/principal.ts';
import type { Config } from './config/index.ts';
import { VERSION } from './config/version.ts';
import { checkEmbedder, describeEmbedder, embedderRecord, lockDataDir, openDataDir, sameEmbedder, shardOptions, type EmbedderRecord } from './data-dir.ts';
import { createEmbedder } from './embedding/index.ts';
import { startHttp } from './http/server.ts';
import { ConnectionGate } from './http/connection-gate.ts';
import type { HttpServer } from './http/listener.ts';
import { startGrpc, type GrpcServer } from './grpc/server.ts';
import { backgroundBacklog, contradictionChecksSkipped, contradictionsFound, logSyncDuration, memoriesExpired, memoriesGauge, shardCrashes, shardHeapLimit, shardHeapLive, shardMemoryFull, shardStorageFailed, snapshotDuration } from './metrics/index.ts';
import { history } from './metrics/history.ts';
import { ShardPool } from './router/shard-client.ts';
import { shardFor } from './router/shard-map.ts';
import type { ShardRouter } from './router/router.ts';
import { ReplyBudget } from './router/reply-budget.ts';
import { ClusterNode } from './cluster/node.ts';
import { ClusterAuth } from './cluster/auth-sync.ts';
import type { ShardEvent, ShardHeap } from './protocol/shard.ts';
import type { Services } from './verbs/context.ts';
import { endRevokedStreams } from './verbs/subscribe.ts';
import { ActivityLog } from './verbs/activity-log.ts';
import { SubscriptionRegistry } from './subscribe/registry.ts';
import { ReflectionEngine } from './reflection/engine.ts';
import { ReflectSessions } from './reflection/sessions.ts';
import { createLlmClient } from './llm/client.ts';
import { startTracing, tracer, type TracingOptions } from './tracing/index.ts';
import type { Clock } from './model/clock.ts';

export interface RunningApp {
  readonly svc: Services;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** The admin key created on this start (first start with auth on), if any. */
  readonly createdAdminKey: string | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  log?: (line: string) => void;
  /** The router's clock: rate-limit refills, the reflection scheduler and reflect sessions' expiry (shards keep the real time in their threads). */
  clock?: Clock;
  /** The shard worker's entry, relative to src/ (default `shard/worker`): tests start one they can make crash. */
  shardWorker?: string;
  /** The command that makes another admin key, named under the first one (the CLI passes its own, as started, with the data directory). */
  lostKeyCommand?: string;
  /** Trace to this exporter (tests pass an in-memory one), as FLASHBULB_OTEL_EXPORTER=otlp traces to OTLP. */
  traceExporter?: TracingOptions['exporter'];
}

export { VERSION };

export async function startApp(config: Config, opts: StartOptions = {}): Promise<RunningApp> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const traceTo = opts.traceExporter ?? (config.otelExporter === 'otlp' ? 'otlp' : null);
  const tracing = traceTo !== null && !tracer().enabled;
  if (tracing) startTracing({ exporter: traceTo, serviceVersion: VERSION });
  const meta = openDataDir(config.dataDir, config.shards);
  const unlock = lockDataDir(config.dataDir);
  // Cluster mode: one key store for the whole cluster, in a JetStream KV bucket (it also waits
  // for JetStream to be ready, which a NATS cluster that has just started is not).
  const clusterAuth = config.natsUrls.length > 0 ? await ClusterAuth.start({ config, log }).catch((err: unknown) => {
    unlock();
    throw err;
  }) : null;
  const auth: AuthDirectory = clusterAuth ?? new AuthStore(config.dataDir);
  const release = async (): Promise<void> => {
    await clusterAuth?.close();
    unlock();
  };
  if (clusterAuth) await clusterAuth.ensureWorkspaceShared(DEFAULT_WORKSPACE, 'Default workspace').catch(async (err: unknown) => {
    await release();
    throw err;
  });
  else auth.ensureWorkspace(DEFAULT_WORKSPACE, 'Default workspace');
  const memories = new Array<number>(meta.shards).fill(0);
  let subscriptions: SubscriptionRegistry | null = null;
  const onEvent = (e: ShardEvent): void => {
    if (e.kind === 'push') subscriptions?.deliverPushes(e.pushes);
    else onShardEvent(e, memories, log);
  };
  const cluster = config.natsUrls.length > 0 ? await ClusterNode.start({ config, emit: onEvent, log }).catch(async (err: unknown) => {
    await release();
    throw err;
  }) : null;
  const shards: ShardRouter = cluster ?? await ShardPool.start({
    dataDir: config.dataDir,
    shards: shardOptions(config, meta.shards),
    maxInflight: config.maxInflightPerShard,
    maxInflightPerWorkspace: config.maxInflightPerWorkspace,
    timeoutMs: config.shardTimeoutMs,
    restartDelayMs: config.shardRestartS * 1000,
    ...(config.shardHeapMb > 0 ? { heapMb: config.shardHeapMb } : {}),
    ...(opts.shardWorker ? { workerEntry: opts.shardWorker } : {}),
    onEvent,
    log,
    onCrashed: (shard, why, restartInMs) => {
      shardCrashes.inc({ shard: String(shard) });
      log(`shard ${shard}: CRASHED (${why}); its requests in flight failed with 503; restarting it from its files in ${restartInMs / 1000} s`);
    },
    // A shard restarted after its log failed or it crashed knows none of the subscriptions it held:
    // they end (`event: closed`), and their readers open new ones.
    onRestarted: (shard) => void subscriptions?.closeWhere((ws) => shardFor(ws, meta.shards) === shard),
  }).catch(async (err: unknown) => {
    await release();
    throw err;
  });
  const embedder = await createEmbedder(config).catch(async (err: unknown) => {
    await shards.shutdown();
    await release();
    throw err;
  });
  try {
    const record = embedderRecord(embedder.name, embedder.dim, config.embedder === 'hash' ? null : config.modelDir);
    checkEmbedder(config.dataDir, meta, record, memories.some((n) => n > 0));
    if (cluster) {
      // The nodes share partitions, so one node's vectors are searched with another's cue vectors.
      const recorded = JSON.parse(await cluster.recordEmbedder(JSON.stringify(record))) as EmbedderRecord;
      if (!sameEmbedder(recorded, record)) {
        throw new Error(`cluster '${config.clusterName}' embeds with ${describeEmbedder(recorded)}; this node with ${describeEmbedder(record)}: every node must run the same model (FLASHBULB_MODEL_DIR / FLASHBULB_EMBEDDER)`);
      }
    }
  } catch (err) {
    await embedder.close();
    await shards.shutdown();
    await release();
    throw err;
  }
  if (embedder.name === 'hash') log('embedder: deterministic hash embedder (FLASHBULB_EMBEDDER=hash) — for tests, not for real recall');
  else log(`embedder: ${embedder.name} (${embedder.dim} dims) from ${config.modelDir}`);
  subscriptions = new SubscriptionRegistry(shards, embedder, cluster ? cluster.relay() : null);
  const llm = config.llmBaseUrl === '' ? null : createLlmClient({ baseUrl: config.llmBaseUrl, model: config.llmModel, apiKey: config.llmApiKey, timeoutMs: config.llmTimeoutMs });
  const reflection = new ReflectionEngine({ config, shards, embedder, llm, ...(opts.clock ? { clock: opts.clock } : {}) });
  const svc: Services = {
    subscriptions,
    reflection,
    reflectSessions: new ReflectSessions(reflection, { shards, embedder, ...(opts.clock ? { clock: opts.clock } : {}) }),
    config,
    shards,
    embedder,
    auth,
    limiter: new RateLimiter({ read: config.rateLimitReads, write: config.rateLimitWrites }, opts.clock),
    startedAt: Date.now(),
    version: VERSION,
    health: { ready: true, reason: '' },
    ...(cluster ? { cluster } : {}),
    activity: new ActivityLog(),
    replies: new ReplyBudget({ perRequest: config.maxReplyBytes, perWorkspace: config.maxReplyBytesPerWorkspace, total: config.maxReplyBytesInFlight }),
  };
  const stopRevoking = endRevokedStreams(svc);
  // One set of connection caps for both ports (docs/operations/limits.md).
  const gate = new ConnectionGate({
    max: config.maxConnections, perClient: config.maxConnectionsPerClient, healthReserve: config.healthConnections,
    authRequired: config.authEnabled, authTimeoutMs: config.authTimeoutMs,
    unauthenticated: config.maxUnauthenticatedConnections, unauthenticatedPerClient: config.maxUnauthenticatedPerClient,
  });
  const http = await startHttp(svc, gate);
  const charted = history.start({ problems: () => shards.problems(), shards: cluster ? cluster.partitions : meta.shards });
  const grpc = await startGrpc(svc, (socket) => gate.admit(socket, 'grpc', false) === 'open', (socket) => gate.authenticated(socket)).catch((err: unknown) => {
    http.close();
    throw err;
  });
  // Created only once everything is up, so a failed first start never swallows the key.
  let createdAdminKey: string | null = null;
  // In a cluster exactly one node creates it (compare-and-set in the key store) and prints it.
  if (config.authEnabled) createdAdminKey = await auth.firstAdminKey();
  log(`flashbulb ${VERSION} listening: REST http://${config.bind}:${http.port} · gRPC ${config.bind}:${grpc.port} · data ${config.dataDir} · ${cluster ? `cluster node ${config.nodeId}, ${cluster.partitions} partitions` : `${meta.shards} shards`} · auth ${config.authEnabled ? 'on' : 'off'}`);
  if (createdAdminKey) printAdminKey(log, createdAdminKey, http.port, cluster ? config.nodeId : null, opts.lostKeyCommand ?? `flashbulb keys create --role admin --data-dir ${config.dataDir}`);
  let stopping: Promise<void> | null = null;
  return {
    svc,
    httpPort: http.port,
    grpcPort: grpc.port,
    createdAdminKey,
    stop: () => {
      stopping ??= (async () => {
        svc.health.ready = false;
        svc.health.reason = 'shutting down';
        stopRevoking();
        await drain(svc, { http, grpc, log });
        history.stop(charted);
        // The final snapshot gets its own budget of the shutdown timeout; a failure is reported
        // (a non-zero exit) only after everything else is released.
        const stopped = await shards.shutdown(config.shutdownTimeoutS * 1000).then(() => null, (err: unknown) => err);
        await embedder.close();
        await release();
        if (tracing) await tracer().shutdown(); // flushes the spans still batched
        if (stopped !== null) throw stopped;
      })();
      return stopping;
    },
  };
}

/**
 * Stops taking work and lets the work in flight finish, for at most the shutdown timeout; then
 * closes every connection. Closing only the listening sockets is not enough: keep-alive clients
 * would go on sending requests on the connections they hold, and the drain would never end.
 */
async function drain(svc: Services, parts: { http: HttpServer; grpc: GrpcServer; log: (line: string) => void }): Promise<void> {
  const { http, grpc, log } = parts;
  http.drain(); // new connections refused; requests on open ones answered 503 with Connection: close
  const grpcDrained = grpc.drain(); // GOAWAY: new calls fail with UNAVAILABLE
  const inFlight = (async () => {
    await svc.subscriptions.closeAll(); // SSE streams get `event: closed`, gRPC streams end
    await svc.reflection.close();
    await Promise.all([http.idle(), grpcDrained]);
    while (svc.shards.inflight() > 0) await new Promise((r) => setTimeout(r, 5));
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeoutS = svc.config.shutdownTimeoutS;
  const expired = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutS * 1000)));
  if (await Promise.race([inFlight.then(() => false), expired])) {
    log(`shutdown: requests still running after ${timeoutS} s (FLASHBULB_SHUTDOWN_TIMEOUT_S); closing their connections`);
  }
  clearTimeout(timer);
  await svc.subscriptions.closeAll(); // any opened by a request that was in flight
  http.close();
  grpc.close();
}

function onShardEvent(e: ShardEvent, memories: number[], log: (line: string) => void): void {
  if (e.kind === 'ready') {
    memories[e.shard] = e.memories;
    shardStorageFailed.set({ shard: String(e.shard) }, 0);
    log(`shard ${e.shard}: ${e.memories} memories recovered (${e.replayedRecords} log records replayed) in ${e.recoveryMs.toFixed(0)} ms`);
    if (e.truncatedTail) log(`shard ${e.shard}: truncated a torn log tail: ${e.truncatedTail}`);
  } else if (e.kind === 'metrics') {
    memories[e.shard] = e.memories;
    if (e.heap) heapGauges(e.shard, e.heap);
    for (const ms of e.syncMs) logSyncDuration.observe(ms / 1000);
    for (const ms of e.snapshotMs) snapshotDuration.observe(ms / 1000);
    contradictionsFound.inc(e.contradictions);
    contradictionChecksSkipped.inc(e.checksSkipped);
    memoriesExpired.inc(e.expired);
    backgroundBacklog.set({ shard: String(e.shard), work: 'contradiction_checks' }, e.checkBacklog);
    backgroundBacklog.set({ shard: String(e.shard), work: 'vector_index' }, e.indexBacklog);
  } else if (e.kind === 'fatal') {
    log(`shard ${e.shard}: FATAL ${e.message}`);
  } else if (e.kind === 'heap') {
    heapChanged(e.shard, e, log);
  } else if (e.kind === 'storage-failed') {
    shardStorageFailed.set({ shard: String(e.shard) }, 1);
  }
  memoriesGauge.set(memories.reduce((a, b) => a + b, 0));
}

function heapGauges(shard: number, heap: ShardHeap): void {
  const labels = { shard: String(shard) };
  shardHeapLive.set(labels, heap.liveBytes);
  shardHeapLimit.set(labels, heap.limitBytes);
  shardMemoryFull.set(labels, heap.full ? 1 : 0);
}

/** A shard's heap started or stopped refusing writes. */
function heapChanged(shard: number, heap: ShardHeap, log: (line: string) => void): void {
  heapGauges(shard, heap);
  const mb = (bytes: number): number => Math.round(bytes / 2 ** 20);
  if (heap.full) log(`shard ${shard}: memory full (${mb(heap.liveBytes)} of ${mb(heap.limitBytes)} MB live): writes refused until memory is freed (forget) or the heap is raised (FLASHBULB_SHARD_HEAP_MB)`);
  else log(`shard ${shard}: memory no longer full: writes accepted again`);
}

function printAdminKey(log: (line: string) => void, key: string, port: number, clusterNode: string | null, lostKeyCommand: string): void {
  log('');
  log('================================================================================');
  if (clusterNode) log(` First start of the cluster: node ${clusterNode} created its admin API key (valid on every node). It is shown only this once.`);
  else log(' First start: an admin API key was created. It is shown only this once.');
  log(`   ${key}`);
  log(' Use it as a bearer token, for example:');
  log(`   curl -H "Authorization: Bearer ${key}" http://localhost:${port}/v1/auth/whoami`);
  if (clusterNode) log(` Lost it? \`${lostKeyCommand}\` with this node's FLASHBULB_NATS_URL makes another.`);
  else log(` Lost it? \`${lostKeyCommand}\` makes another.`);
  log('================================================================================');
  log('');
}
