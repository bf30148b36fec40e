/**
 * @module native-bench/grpc-floor — the least a gRPC get can cost here: a hebbs.v1 server on
 * grpc-js with the same proto, loader options and reply encoders as Flashbulb's, whose Remember
 * and Get only keep and return messages from a Map (no verbs, no auth, no metrics, no log). With
 * `--hop worker` the Map lives in a worker thread and each call crosses to it and back (one
 * postMessage each way), as a Flashbulb call crosses to its shard. Recall answers a temporal
 * strategy only: the newest `top_k` (10) memories of the entity, newest first, as Flashbulb's
 * temporal recall does (side-by-side's `recall_temporal`). Drive it beside a real server
 * with side-by-side.ts (`--ops get,recall_temporal`): what Flashbulb spends above this floor is what its own code
 * costs; the floor itself is grpc-js, Node's HTTP/2 and the thread crossing.
 *
 * `--server http2` serves the same methods on `node:http2` without grpc-js's server (see
 * {@link serveHttp2}): what a unary call costs below grpc-js.
 *
 *   node --import tsx native-bench/grpc-floor.ts --port 47103 [--hop none|worker] [--server grpc-js|http2]
 *     [--bind 127.0.0.1]
 */
import { randomBytes } from 'node:crypto';
import * as http2 from 'node:http2';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import * as grpc from '@grpc/grpc-js';
import { loadHebbs } from '../src/grpc/server.ts';
import type { MemoryMsg } from '../src/grpc/messages.ts';
import { numberFlag, stringFlag } from './lib/args.ts';

const DIM = 384;

interface RememberMsg {
  content: string;
  importance?: number;
  entity_id?: string;
}

interface RecallMsg {
  strategies: Array<{ strategy_type: string; entity_id?: string; top_k?: number }>;
  top_k?: number;
}

/** A temporal recall's results: newest first, with the detail Flashbulb's temporal strategy gives. */
function temporalResults(newest: readonly MemoryMsg[]): object[] {
  return newest.map((memory, rank) => ({
    memory,
    score: memory.importance,
    strategy_details: [
      { strategy_type: 'TEMPORAL', relevance: 0, timestamp: memory.created_at, rank },
    ],
  }));
}

/** The memory a Remember of `req` would return: a fresh id and a vector of the model's size. */
function memoryOf(req: RememberMsg): MemoryMsg {
  const now = Date.now() * 1000;
  const embedding = new Float32Array(DIM).map(() => Math.random() - 0.5);
  return {
    memory_id: randomBytes(16),
    content: req.content,
    importance: req.importance ?? 0.5,
    ...(req.entity_id ? { entity_id: req.entity_id } : {}),
    embedding,
    created_at: now,
    occurred_at: now,
    updated_at: now,
    last_accessed_at: now,
    access_count: 0,
    decay_score: 1,
    kind: 'MEMORY_KIND_EPISODE',
    logical_clock: 0,
    source_memory_ids: [],
  };
}

/** The store: in this thread, or behind one postMessage each way to a worker. */
interface Store {
  put(m: MemoryMsg): Promise<void> | void;
  get(id: string): Promise<MemoryMsg | undefined> | MemoryMsg | undefined;
  /** The newest `k` memories of `entity` ('' for those without one), newest first. */
  newest(entity: string, k: number): Promise<MemoryMsg[]> | MemoryMsg[];
}

/** The store's state; the same code runs in this thread or (as source text) in the worker. */
class Memories {
  readonly byId = new Map<string, MemoryMsg>();
  readonly byEntity = new Map<string, MemoryMsg[]>();

  put(key: string, m: MemoryMsg): void {
    this.byId.set(key, m);
    const entity = m.entity_id ?? '';
    const list = this.byEntity.get(entity);
    if (list) list.push(m);
    else this.byEntity.set(entity, [m]);
  }

  newest(entity: string, k: number): MemoryMsg[] {
    return (this.byEntity.get(entity) ?? []).slice(-k).reverse();
  }
}

function localStore(): Store {
  const memories = new Memories();
  return {
    put: (m) => memories.put(m.memory_id.toString('hex'), m),
    get: (id) => memories.byId.get(id),
    newest: (e, k) => memories.newest(e, k),
  };
}

// tsx names classes with an __name helper that the worker's eval'd source does not have.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const __name = (target) => target;
const memories = new (${Memories.toString()})();
parentPort.on('message', (m) => {
  if (m.op === 'put') { memories.put(m.key, m.memory); parentPort.postMessage({ seq: m.seq }); }
  else if (m.op === 'get') parentPort.postMessage({ seq: m.seq, memory: memories.byId.get(m.key) });
  else parentPort.postMessage({ seq: m.seq, list: memories.newest(m.entity, m.k) });
});
`;

function workerStore(): Store {
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  const pending = new Map<number, (r: Answer) => void>();
  let seq = 0;
  interface Answer {
    seq: number;
    memory?: MemoryMsg;
    list?: MemoryMsg[];
  }
  // Buffers arrive as plain Uint8Arrays after the clone. The message is the clone's own, so it is
  // mended in place (a `{ ...m }` copy would cost the floor the slow path Flashbulb avoids).
  const revive = (m: MemoryMsg): MemoryMsg => {
    m.memory_id = Buffer.from(m.memory_id.buffer, m.memory_id.byteOffset, m.memory_id.byteLength);
    return m;
  };
  worker.on('message', (r: Answer) => {
    const done = pending.get(r.seq);
    pending.delete(r.seq);
    done?.(r);
  });
  const call = (msg: object): Promise<Answer> =>
    new Promise((resolve) => {
      seq += 1;
      pending.set(seq, resolve);
      worker.postMessage({ ...msg, seq });
    });
  return {
    put: async (m) => void (await call({ op: 'put', key: m.memory_id.toString('hex'), memory: m })),
    get: async (id) => {
      const r = await call({ op: 'get', key: id });
      return r.memory && revive(r.memory);
    },
    newest: async (entity, k) => ((await call({ op: 'newest', entity, k })).list ?? []).map(revive),
  };
}

/** A call's outcome: the reply message, or a gRPC status with its detail. */
type Outcome = { reply: unknown } | { code: grpc.status; details: string };

/** The floor's three methods over `store`, whichever server carries them. */
function answers(store: Store): Record<string, (request: never) => Promise<Outcome>> {
  return {
    Remember: async (request: RememberMsg) => {
      const m = memoryOf(request);
      await store.put(m);
      return { reply: { memory: m } };
    },
    Get: async (request: { memory_id: Buffer }) => {
      const m = await store.get(request.memory_id.toString('hex'));
      return m
        ? { reply: { memory: m } }
        : { code: grpc.status.NOT_FOUND, details: 'no such memory' };
    },
    Recall: async (request: RecallMsg) => {
      const s = request.strategies[0];
      if (request.strategies.length !== 1 || s?.strategy_type !== 'TEMPORAL') {
        return {
          code: grpc.status.UNIMPLEMENTED,
          details: 'the floor answers one temporal strategy only',
        };
      }
      const list = await store.newest(s.entity_id ?? '', s.top_k ?? request.top_k ?? 10);
      return { reply: { results: temporalResults(list), strategy_errors: [] } };
    },
  };
}

function serveGrpcJs(service: grpc.ServiceDefinition, store: Store, address: string): () => void {
  const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const [method, answer] of Object.entries(answers(store))) {
    const unary: grpc.handleUnaryCall<unknown, unknown> = (call, cb) =>
      void answer(call.request as never).then((o) =>
        'reply' in o ? cb(null, o.reply) : cb({ code: o.code, details: o.details }),
      );
    handlers[method] = unary;
  }
  server.addService(service, handlers);
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
  });
  return () => server.tryShutdown(() => process.exit(0));
}

/**
 * The same methods on `node:http2` alone, without grpc-js's server: one length-prefixed,
 * uncompressed message in, one out, the status in the trailers (what a unary gRPC call is on the
 * wire); no deadlines, metadata, compression or flow control of its own. What grpc-js's server
 * machinery costs is the difference between this and `--server grpc-js`.
 */
function serveHttp2(
  service: grpc.ServiceDefinition,
  store: Store,
  host: string,
  port: number,
): () => void {
  const table = answers(store);
  const byPath = new Map(
    Object.entries(service).map(([method, def]) => [def.path, { def, answer: table[method] }]),
  );
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const route = byPath.get(String(headers[':path']));
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      if (!route?.answer) {
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' },
          { endStream: true },
        );
        return;
      }
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const request = route.def.requestDeserialize(body.subarray(5, 5 + body.readUInt32BE(1)));
      void route.answer(request as never).then((o) => {
        if (stream.destroyed) return;
        if (!('reply' in o)) {
          stream.respond(
            {
              ':status': 200,
              'content-type': 'application/grpc',
              'grpc-status': String(o.code),
              'grpc-message': encodeURIComponent(o.details),
            },
            { endStream: true },
          );
          return;
        }
        const message = route.def.responseSerialize(o.reply);
        const frame = Buffer.allocUnsafe(5 + message.length);
        frame[0] = 0;
        frame.writeUInt32BE(message.length, 1);
        message.copy(frame, 5);
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc' },
          { waitForTrailers: true },
        );
        stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(frame);
      });
    });
  });
  server.listen(port, host);
  return () => server.close(() => process.exit(0));
}

function main(): void {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      hop: { type: 'string' },
      bind: { type: 'string' },
      server: { type: 'string' },
    },
  });
  const port = numberFlag(values, 'port', 47103);
  const hop = stringFlag(values, 'hop') ?? 'none';
  if (hop !== 'none' && hop !== 'worker')
    throw new Error(`--hop takes none or worker, got '${hop}'`);
  const kind = stringFlag(values, 'server') ?? 'grpc-js';
  if (kind !== 'grpc-js' && kind !== 'http2')
    throw new Error(`--server takes grpc-js or http2, got '${kind}'`);
  const store = hop === 'worker' ? workerStore() : localStore();
  const service = (loadHebbs()['MemoryService'] as grpc.ServiceClientConstructor).service;
  const host = stringFlag(values, 'bind') ?? '127.0.0.1';
  const stop =
    kind === 'http2'
      ? serveHttp2(service, store, host, port)
      : serveGrpcJs(service, store, `${host}:${port}`);
  console.log(`grpc floor (server: ${kind}, hop: ${hop}) on :${port}`);
  process.on('SIGTERM', stop);
}

main();
