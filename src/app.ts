/**
 * @module app — composition root: config → tracing → backend (data directory, auth, shards or a
 * cluster node: app/backend) → embedder → services → REST, metrics history, gRPC, each opened
 * resource's release pushed on one cleanup stack (app/cleanup), which a failed start runs for what
 * it opened and `stop()` runs for everything, after draining requests (up to
 * `FLASHBULB_SHUTDOWN_TIMEOUT_S`) and snapshotting every shard.
 */
import { RateLimiter } from './auth/rate-limit.ts';
import type { Config } from './config/index.ts';
import { VERSION } from './config/version.ts';
import { embedderRecord, type EmbedderRecord } from './data-dir.ts';
import { createEmbedder } from './embedding/index.ts';
import type { Embedder } from './embedding/embedder.ts';
import { createReranker, type Reranker } from './embedding/reranker.ts';
import { startHttp } from './http/server.ts';
import { ConnectionGate } from './http/connection-gate.ts';
import type { HttpServer } from './http/exchange.ts';
import { startGrpc, type GrpcServer } from './grpc/server.ts';
import { history } from './metrics/history.ts';
import { ShardEventMetrics } from './metrics/shard-events.ts';
import { ReplyBudget } from './router/reply-budget.ts';
import type { Services } from './verbs/context.ts';
import { endRevokedStreams } from './verbs/subscribe.ts';
import { ActivityLog } from './verbs/activity-log.ts';
import { SubscriptionRegistry } from './subscribe/registry.ts';
import { ReflectionEngine } from './reflection/engine.ts';
import { ReflectSessions } from './reflection/sessions.ts';
import { createLlmClient } from './llm/client.ts';
import { startTracing, tracer, type TracingOptions } from './tracing/index.ts';
import type { Clock } from './model/clock.ts';
import { openBackend, type Backend, type StartStep } from './app/backend.ts';
import { CleanupStack } from './app/cleanup.ts';

export { START_STEPS, type StartStep } from './app/backend.ts';

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
  /** Runs before each step of the start (START_STEPS); a step that throws fails the start, releasing what was opened. */
  beforeStep?: (step: StartStep) => void | Promise<void>;
}

export { VERSION };

export async function startApp(config: Config, opts: StartOptions = {}): Promise<RunningApp> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const step = async (name: StartStep): Promise<void> => opts.beforeStep?.(name);
  const stack = new CleanupStack();
  try {
    await step('tracing');
    startTracingFor(config, opts, stack);
    const events = new ShardEventMetrics(log);
    let subs: SubscriptionRegistry | null = null;
    const backend = await openBackend(config, stack, {
      log,
      step,
      onEvent: (e) => (e.kind === 'push' ? subs?.deliverPushes(e.pushes) : events.record(e)),
      onCrashed: (shard, why, restartInMs) => events.crashed(shard, why, restartInMs),
      // A shard restarted after its log failed or it crashed knows none of the subscriptions it
      // held: they end (`event: closed`), and their readers open new ones.
      onRestarted: (owns) => void subs?.closeWhere(owns),
      ...(opts.shardWorker ? { shardWorker: opts.shardWorker } : {}),
    });
    await step('embedder');
    const embedder = await createEmbedder(config);
    stack.defer('embedder', () => embedder.close());
    await step('model-check');
    await backend.checkEmbedder(modelRecord(config, embedder), events.anyMemories);
    logEmbedder(log, config, embedder);
    const reranker = await createReranker(config);
    if (reranker !== null) {
      stack.defer('reranker', () => reranker.close());
      log(`reranker: ${config.rerank.modelDir} (${rerankSummary(config)})`);
    }
    await step('services');
    subs = new SubscriptionRegistry(backend.shards, embedder, backend.relay);
    const svc = services(config, opts, { backend, embedder, reranker, subscriptions: subs }, stack);
    const gate = connectionGate(config);
    await step('http');
    const http = await startHttp(svc, gate);
    stack.defer('REST listener', () => http.close());
    await step('history');
    const problems = (): readonly string[] => backend.shards.problems();
    const charted = history.start({ problems, shards: backend.units });
    stack.defer('metrics history', () => history.stop(charted));
    await step('grpc');
    const grpc = await listenGrpc(svc, gate);
    stack.defer('gRPC listener', () => grpc.close());
    // Runs first on stop: requests in flight finish before anything under them is released.
    stack.defer('drain', () => drain(svc, { http, grpc, log }));
    await step('admin-key');
    // Created only once everything is up, so a failed first start never swallows the key; in a
    // cluster exactly one node creates it (compare-and-set in the key store) and prints it.
    const createdAdminKey = config.authEnabled ? await backend.auth.firstAdminKey() : null;
    const ports = { httpPort: http.port, grpcPort: grpc.port };
    announce(log, config, { backend, ...ports, createdAdminKey }, opts.lostKeyCommand);
    return { svc, ...ports, createdAdminKey, stop: () => stack.disposeAsync() };
  } catch (err) {
    await releaseAfterFailure(stack, log);
    throw err;
  }
}

/** Closes what a failed start opened; a failure to close is logged, the start's error thrown. */
async function releaseAfterFailure(
  stack: CleanupStack,
  log: (line: string) => void,
): Promise<void> {
  try {
    await stack.disposeAsync();
  } catch (err) {
    log(
      `releasing what the failed start opened failed too: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The reranker's settings in one line, for the start-up log. */
function rerankSummary(config: Config): string {
  const r = config.rerank;
  return `${r.candidates} candidates, ${r.workers} worker(s) × ${r.threads} thread(s), batches of ${r.batch}, ${r.maxTokens} tokens, timeout ${r.timeoutMs} ms`;
}

/** What the data directory (and a cluster) records of the model, to refuse another one. */
function modelRecord(config: Config, embedder: Embedder): EmbedderRecord {
  return embedderRecord(
    embedder.name,
    embedder.dim,
    config.embedder === 'hash' ? null : config.modelDir,
  );
}

/** Traces to the exporter a test passes, or to OTLP when configured (unless tracing runs already). */
function startTracingFor(config: Config, opts: StartOptions, stack: CleanupStack): void {
  const traceTo = opts.traceExporter ?? (config.otelExporter === 'otlp' ? 'otlp' : null);
  if (traceTo === null || tracer().enabled) return;
  startTracing({ exporter: traceTo, serviceVersion: VERSION });
  stack.defer('tracing', () => tracer().shutdown()); // flushes the spans still batched
}

/** The services the verbs are given, with the background work they start (reflection, revocation). */
function services(
  config: Config,
  opts: StartOptions,
  parts: {
    backend: Backend;
    embedder: Embedder;
    reranker: Reranker | null;
    subscriptions: SubscriptionRegistry;
  },
  stack: CleanupStack,
): Services {
  const { backend, embedder, reranker, subscriptions } = parts;
  const { shards, auth, cluster } = backend;
  const clock = opts.clock ? { clock: opts.clock } : {};
  const llm =
    config.llmBaseUrl === ''
      ? null
      : createLlmClient({
          baseUrl: config.llmBaseUrl,
          model: config.llmModel,
          apiKey: config.llmApiKey,
          timeoutMs: config.llmTimeoutMs,
        });
  const reflection = new ReflectionEngine({ config, shards, embedder, llm, ...clock });
  stack.defer('reflection', () => reflection.close());
  const svc: Services = {
    subscriptions,
    reflection,
    reflectSessions: new ReflectSessions(reflection, { shards, embedder, ...clock }),
    config,
    shards,
    embedder,
    reranker,
    auth,
    limiter: new RateLimiter(
      { read: config.rateLimitReads, write: config.rateLimitWrites },
      opts.clock,
    ),
    startedAt: Date.now(),
    version: VERSION,
    health: { ready: true, reason: '' },
    ...(cluster ? { cluster } : {}),
    activity: new ActivityLog(),
    replies: new ReplyBudget({
      perRequest: config.maxReplyBytes,
      perWorkspace: config.maxReplyBytesPerWorkspace,
      total: config.maxReplyBytesInFlight,
    }),
  };
  stack.defer('revoked streams watch', endRevokedStreams(svc));
  return svc;
}

/** One set of connection caps for both ports, strangers' places among them (docs/operations/limits.md). */
function connectionGate(config: Config): ConnectionGate {
  return new ConnectionGate({
    max: config.maxConnections,
    perClient: config.maxConnectionsPerClient,
    healthReserve: config.healthConnections,
    authRequired: config.authEnabled,
    authTimeoutMs: config.authTimeoutMs,
    unauthenticated: config.maxUnauthenticatedConnections,
    unauthenticatedPerClient: config.maxUnauthenticatedPerClient,
  });
}

/** gRPC behind the same gate as REST: a call's key authenticates its connection. */
function listenGrpc(svc: Services, gate: ConnectionGate): Promise<GrpcServer> {
  return startGrpc(
    svc,
    (socket) => gate.admit(socket, 'grpc', false) === 'open',
    (socket) => gate.authenticated(socket),
  );
}

function logEmbedder(log: (line: string) => void, config: Config, embedder: Embedder): void {
  if (embedder.name === 'hash')
    log(
      'embedder: deterministic hash embedder (FLASHBULB_EMBEDDER=hash) — for tests, not for real recall',
    );
  else log(`embedder: ${embedder.name} (${embedder.dim} dims) from ${config.modelDir}`);
}

/** The start-up line, and the admin key when this start created one. */
function announce(
  log: (line: string) => void,
  config: Config,
  o: { backend: Backend; httpPort: number; grpcPort: number; createdAdminKey: string | null },
  lostKeyCommand: string | undefined,
): void {
  const where = `REST http://${config.bind}:${o.httpPort} · gRPC ${config.bind}:${o.grpcPort} · data ${config.dataDir}`;
  log(
    `flashbulb ${VERSION} listening: ${where} · ${o.backend.description} · auth ${config.authEnabled ? 'on' : 'off'}`,
  );
  if (!o.createdAdminKey) return;
  const lost = lostKeyCommand ?? `flashbulb keys create --role admin --data-dir ${config.dataDir}`;
  printAdminKey(log, o.createdAdminKey, o.httpPort, o.backend.cluster ? config.nodeId : null, lost);
}

/**
 * Stops taking work and lets the work in flight finish, for at most the shutdown timeout; then
 * closes every connection. Closing only the listening sockets is not enough: keep-alive clients
 * would go on sending requests on the connections they hold, and the drain would never end.
 */
async function drain(
  svc: Services,
  parts: { http: HttpServer; grpc: GrpcServer; log: (line: string) => void },
): Promise<void> {
  const { http, grpc, log } = parts;
  svc.health.ready = false;
  svc.health.reason = 'shutting down';
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
  const expired = new Promise<boolean>(
    (resolve) => (timer = setTimeout(() => resolve(true), timeoutS * 1000)),
  );
  if (await Promise.race([inFlight.then(() => false), expired])) {
    log(
      `shutdown: requests still running after ${timeoutS} s (FLASHBULB_SHUTDOWN_TIMEOUT_S); closing their connections`,
    );
  }
  clearTimeout(timer);
  await svc.subscriptions.closeAll(); // any opened by a request that was in flight
  http.close();
  grpc.close();
}

function printAdminKey(
  log: (line: string) => void,
  key: string,
  port: number,
  clusterNode: string | null,
  lostKeyCommand: string,
): void {
  log('');
  log('================================================================================');
  if (clusterNode)
    log(
      ` First start of the cluster: node ${clusterNode} created its admin API key (valid on every node). It is shown only this once.`,
    );
  else log(' First start: an admin API key was created. It is shown only this once.');
  log(`   ${key}`);
  log(' Use it as a bearer token, for example:');
  log(`   curl -H "Authorization: Bearer ${key}" http://localhost:${port}/v1/auth/whoami`);
  if (clusterNode)
    log(` Lost it? \`${lostKeyCommand}\` with this node's FLASHBULB_NATS_URL makes another.`);
  else log(` Lost it? \`${lostKeyCommand}\` makes another.`);
  log('================================================================================');
  log('');
}
