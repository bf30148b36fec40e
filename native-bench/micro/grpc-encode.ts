/**
 * @module native-bench/micro/grpc-encode — what a gRPC reply that carries memories costs the
 * router, and how that compares with REST.
 *
 *   node --import tsx native-bench/micro/grpc-encode.ts [--quick] [--rounds 3] [--memories 500]
 *
 * 1. Encode: a Recall reply of 10 memories, a Get reply of 1, and a Subscribe push (memories with
 *    a 384-float embedding and a small context): the codec (grpc/codec.ts) plus the
 *    `responseSerialize` the server installs for the method. Reference row: the same objects
 *    through @grpc/proto-loader's own serializer (protobufjs `fromObject` + `encode`) with the
 *    embedding as a plain array, as every reply was encoded before the hand-written encoder.
 * 2. Round trip: an in-process server (hash embedder, auth on) answering recall with a cached
 *    cue (top 10) over gRPC and over REST, 1 and 16 calls in flight. The gRPC client keeps the
 *    reply as bytes and the REST client does not parse the JSON, so the client's work is the
 *    transport alone. Client and router share the main thread here: "main ms/op" is that
 *    thread's busy time per call (both sides), "cpu ms/op" the process's CPU per call (every
 *    thread). Rounds alternate REST and gRPC so drift on a shared machine hits both alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { numberFlag } from '../lib/args.ts';
import { RestClient } from '../lib/rest-client.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { startApp, type RunningApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { hitToProto, memoryToProto } from '../../src/grpc/codec.ts';
import { LOADER_OPTIONS, PROTO_PATH, loadHebbs } from '../../src/grpc/server.ts';
import type { MemoryView } from '../../src/model/memory.ts';
import type { RecallHit } from '../../src/recall/types.ts';
import { microFlags, report } from './flags.ts';
import { measure, measureConcurrent, type Measured } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';

const DIM = 384;
const TOP_K = 10;
const CUE = 'What did the customer report about the invoice for March?';

type Serialize = (value: unknown) => Buffer;

// ─── 1. encode ───────────────────────────────────────────────────────────────────────────

function memoryView(i: number): MemoryView {
  const embedding = new Float32Array(DIM);
  for (let j = 0; j < DIM; j++) embedding[j] = Math.sin(i * 7 + j) / 20;
  const t = 1_700_000_000_000_000 + i * 1000;
  return {
    id: (i % 256).toString(16).padStart(2, '0').repeat(16),
    content: `Customer ${i} reported that the invoice for March was wrong and asked for a corrected copy by Friday.`,
    importance: 0.5,
    context: { source: 'chat', session: `s-${i % 7}`, turn: i % 12, tags: ['billing', 'invoice'] },
    entityId: 'acme',
    kind: 'episode',
    createdAt: t,
    occurredAt: t,
    updatedAt: t,
    lastAccessedAt: t,
    accessCount: 3,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    speaker: null,
    conversationId: null,
    messageId: null,
    embedding,
  };
}

function recallHit(i: number): RecallHit {
  return {
    memory: memoryView(i),
    score: 0.8 - i / 100,
    relevance: 0.7,
    strategy_details: [
      { strategy: 'similarity', relevance: 0.7, distance: 0.3, cosine: 0.6, lexical: 0.4 },
    ],
  };
}

/**
 * The embedding as a plain array, as protobufjs `fromObject` takes `repeated float` (it rejects a
 * Float32Array). Only the wrappers around each memory are copied; the rest is shared.
 */
function withArrays(message: unknown): unknown {
  const msg = message as {
    memory?: { embedding?: unknown };
    results?: Array<{ memory: { embedding?: unknown } }>;
  };
  const memory = <T extends { embedding?: unknown }>(m: T): T =>
    m.embedding instanceof Float32Array ? { ...m, embedding: Array.from(m.embedding) } : m;
  if (msg.results)
    return { ...msg, results: msg.results.map((r) => ({ ...r, memory: memory(r.memory) })) };
  if (msg.memory) return { ...msg, memory: memory(msg.memory) };
  return msg;
}

function serializers(service: string, method: string): { server: Serialize; reference: Serialize } {
  const pkg = loadHebbs();
  const server = (pkg[service] as grpc.ServiceClientConstructor).service[method]
    ?.responseSerialize as Serialize | undefined;
  const def = protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS)[
    `hebbs.v1.${service}`
  ] as protoLoader.ServiceDefinition;
  const reference = def[method]?.responseSerialize as Serialize | undefined;
  if (!server || !reference) throw new Error(`no serializer for ${service}.${method}`);
  return { server, reference };
}

interface EncodeCase {
  name: string;
  service: string;
  method: string;
  /** The codec's part: domain objects → message objects. */
  message: () => unknown;
}

async function encodeRows(timeMs: number): Promise<Cell[][]> {
  const hits = Array.from({ length: TOP_K }, (_, i) => recallHit(i));
  const one = memoryView(3);
  const cases: EncodeCase[] = [
    {
      name: `Recall reply, ${TOP_K} memories`,
      service: 'MemoryService',
      method: 'Recall',
      message: () => ({ results: hits.map(hitToProto), strategy_errors: [] }),
    },
    {
      name: 'Get reply, 1 memory',
      service: 'MemoryService',
      method: 'Get',
      message: () => ({ memory: memoryToProto(one, { sources: false }) }),
    },
    {
      name: 'Subscribe push, 1 memory',
      service: 'SubscribeService',
      method: 'Subscribe',
      message: () => ({
        subscription_id: 42,
        memory: memoryToProto(one, { sources: false }),
        confidence: 0.9,
        push_timestamp_us: 1_700_000_000_000_000,
        sequence_number: 7,
        score: 0.9,
        strategy: 'similarity',
      }),
    },
  ];
  const rows: Cell[][] = [];
  for (const c of cases) {
    const { server, reference } = serializers(c.service, c.method);
    const bytes = server(c.message()).length;
    const ref = await measure(
      `${c.name} (protobufjs)`,
      () => void reference(withArrays(c.message())),
      { timeMs, iterations: 200 },
    );
    const now = await measure(`${c.name} (server)`, () => void server(c.message()), {
      timeMs,
      iterations: 200,
    });
    rows.push([
      c.name,
      'protobufjs fromObject + encode',
      ref.p50Ms * 1000,
      ref.meanMs * 1000,
      bytes,
      loadCell(ref.quiet),
    ]);
    rows.push([
      c.name,
      'as the server encodes it',
      now.p50Ms * 1000,
      now.meanMs * 1000,
      bytes,
      loadCell(now.quiet),
    ]);
  }
  return rows;
}

// ─── 2. round trip ───────────────────────────────────────────────────────────────────────

interface Transports {
  grpc: () => Promise<void>;
  rest: () => Promise<void>;
  close: () => void;
}

async function seed(rest: RestClient, memories: number): Promise<void> {
  for (let i = 0; i < memories; i++) {
    const reply = await rest.post('/v1/memories', {
      content: memoryView(i).content,
      entity_id: `e${i % 20}`,
      context: { source: 'chat', turn: i % 12 },
    });
    if (reply.status !== 201)
      throw new Error(
        `remember: HTTP ${reply.status} ${reply.body.toString('utf8').slice(0, 200)}`,
      );
  }
}

function transports(app: RunningApp, key: string): Transports {
  const pkg = loadHebbs();
  const recallDef = (pkg['MemoryService'] as grpc.ServiceClientConstructor).service['Recall'];
  if (!recallDef) throw new Error('no MemoryService.Recall');
  const client = new grpc.Client(`127.0.0.1:${app.grpcPort}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${key}`);
  const grpcReq = { cue: CUE, top_k: TOP_K, strategies: [{ strategy_type: 'SIMILARITY' }] };
  const rest = new RestClient({
    host: '127.0.0.1',
    port: app.httpPort,
    apiKey: key,
    maxSockets: 64,
  });
  const restReq = { cue: CUE, top_k: TOP_K, strategies: [{ strategy: 'similarity' }] };
  return {
    grpc: () =>
      new Promise<void>((resolve, reject) => {
        const serialize = recallDef.requestSerialize as (v: object) => Buffer;
        client.makeUnaryRequest(
          '/hebbs.v1.MemoryService/Recall',
          serialize,
          (b: Buffer) => b,
          grpcReq,
          md,
          {},
          (err, res) => {
            if (err) reject(err);
            else if (!res || res.length < DIM * 4)
              reject(new Error(`short gRPC reply (${res?.length ?? 0} bytes)`));
            else resolve();
          },
        );
      }),
    rest: async () => {
      const reply = await rest.post('/v1/recall', restReq);
      if (reply.status !== 200) throw new Error(`recall: HTTP ${reply.status}`);
    },
    close: () => {
      client.close();
      rest.close();
    },
  };
}

/** Runs `run`, adding the main thread's busy time and the process's CPU time per call. */
async function withCpu(
  run: () => Promise<Measured>,
): Promise<{ m: Measured; mainMs: number; cpuMs: number; calls: number }> {
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const m = await run();
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = process.cpuUsage(cpu0);
  const calls = m.samples;
  return { m, mainMs: elu.active / calls, cpuMs: (cpu.user + cpu.system) / 1000 / calls, calls };
}

async function roundTripRows(rounds: number, timeMs: number, memories: number): Promise<Cell[][]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-grpc-encode-'));
  const config = loadConfig(
    {
      FLASHBULB_EMBEDDER: 'hash',
      FLASHBULB_HTTP_PORT: '0',
      FLASHBULB_GRPC_PORT: '0',
      FLASHBULB_BIND: '127.0.0.1',
      FLASHBULB_SHARDS: '2',
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
      FLASHBULB_RATE_LIMIT_READS: '0',
      FLASHBULB_RATE_LIMIT_WRITES: '0',
      FLASHBULB_DURABILITY: 'os',
    },
    { dataDir },
  );
  const app = await startApp(config, { log: () => {} });
  const rows: Cell[][] = [];
  try {
    const key = app.createdAdminKey ?? '';
    const t = transports(app, key);
    await seed(
      new RestClient({ host: '127.0.0.1', port: app.httpPort, apiKey: key, maxSockets: 1 }),
      memories,
    );
    for (let round = 1; round <= rounds; round++) {
      for (const protocol of ['rest', 'grpc'] as const) {
        for (const inFlight of [1, 16]) {
          const name = `${protocol} recall x${inFlight} round ${round}`;
          const fn = t[protocol];
          const r = await withCpu(() =>
            inFlight === 1
              ? measure(name, fn, { timeMs, iterations: 100 })
              : measureConcurrent(name, fn, { concurrency: inFlight, timeMs }),
          );
          rows.push([
            protocol,
            inFlight,
            round,
            r.m.perS,
            r.m.p50Ms,
            r.mainMs,
            r.cpuMs,
            loadCell(r.m.quiet),
          ]);
        }
      }
    }
    t.close();
  } finally {
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

async function main(): Promise<void> {
  const { quick, values } = microFlags(['rounds', 'memories']);
  const rounds = numberFlag(values, 'rounds', quick ? 1 : 3);
  const memories = numberFlag(values, 'memories', quick ? 200 : 500);
  const timeMs = quick ? 1000 : 3000;
  report(
    'gRPC reply encoding (codec + serializer), µs per reply',
    formatTable(
      ['reply', 'encoder', 'p50 µs', 'mean µs', 'bytes', 'load'],
      await encodeRows(timeMs),
    ),
    'what building and serializing one reply that carries memories costs the router thread.',
    [BUSY_NOTE],
  );
  report(
    `Recall round trip in one process (cached cue, top ${TOP_K}, ${memories} memories, hash embedder, auth on)`,
    formatTable(
      ['protocol', 'in flight', 'round', 'calls/s', 'p50 ms', 'main ms/op', 'cpu ms/op', 'load'],
      await roundTripRows(rounds, timeMs, memories),
    ),
    'what one recall costs over each protocol, client and server together; compare the protocols within a round.',
    [
      BUSY_NOTE,
      'main ms/op: the main thread (router and client) busy per call; cpu ms/op: all threads (shards too)',
    ],
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
