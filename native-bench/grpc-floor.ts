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
 *   node --import tsx native-bench/grpc-floor.ts --port 47103 [--hop none|worker] [--bind 127.0.0.1]
 */
import { randomBytes } from 'node:crypto';
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

function main(): void {
  const { values } = parseArgs({
    options: { port: { type: 'string' }, hop: { type: 'string' }, bind: { type: 'string' } },
  });
  const port = numberFlag(values, 'port', 47103);
  const hop = stringFlag(values, 'hop') ?? 'none';
  if (hop !== 'none' && hop !== 'worker')
    throw new Error(`--hop takes none or worker, got '${hop}'`);
  const store = hop === 'worker' ? workerStore() : localStore();
  const pkg = loadHebbs();
  const service = (pkg['MemoryService'] as grpc.ServiceClientConstructor).service;
  const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
  server.addService(service, {
    Remember: (
      call: grpc.ServerUnaryCall<RememberMsg, unknown>,
      cb: grpc.sendUnaryData<unknown>,
    ) => {
      const m = memoryOf(call.request);
      void Promise.resolve(store.put(m)).then(() => cb(null, { memory: m }));
    },
    Get: (
      call: grpc.ServerUnaryCall<{ memory_id: Buffer }, unknown>,
      cb: grpc.sendUnaryData<unknown>,
    ) => {
      void Promise.resolve(store.get(call.request.memory_id.toString('hex'))).then((m) =>
        m
          ? cb(null, { memory: m })
          : cb({ code: grpc.status.NOT_FOUND, details: 'no such memory' }),
      );
    },
    Recall: (call: grpc.ServerUnaryCall<RecallMsg, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const s = call.request.strategies[0];
      if (call.request.strategies.length !== 1 || s?.strategy_type !== 'TEMPORAL') {
        return cb({
          code: grpc.status.UNIMPLEMENTED,
          details: 'the floor answers one temporal strategy only',
        });
      }
      void Promise.resolve(
        store.newest(s.entity_id ?? '', s.top_k ?? call.request.top_k ?? 10),
      ).then((list) => cb(null, { results: temporalResults(list), strategy_errors: [] }));
    },
  });
  server.bindAsync(
    `${stringFlag(values, 'bind') ?? '127.0.0.1'}:${port}`,
    grpc.ServerCredentials.createInsecure(),
    (err) => {
      if (err) throw err;
      console.log(`grpc floor (hop: ${hop}) on :${port}`);
    },
  );
  process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
}

main();
