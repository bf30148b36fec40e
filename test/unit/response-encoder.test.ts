/**
 * grpc/response-encoder.ts writes the replies that carry memories by hand. Its bytes must be the
 * bytes @grpc/proto-loader's own serializer (protobufjs) writes for the same message, for every
 * field, every optional one present and absent, lengths that need 1, 2 and 3 varint bytes, and
 * every value kind of a context Struct.
 */
import * as protoLoader from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import { hitToProto, memoryToProto } from '../../src/grpc/codec.ts';
import { useResponseEncoders } from '../../src/grpc/response-encoder.ts';
import { LOADER_OPTIONS, PROTO_PATH } from '../../src/grpc/server.ts';
import type { MemoryView } from '../../src/model/memory.ts';
import type { RecallHit } from '../../src/recall/types.ts';

type Serialize = (value: unknown) => Buffer;

const reference = protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS);
const ours = protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS);
useResponseEncoders(ours);

function serializer(
  def: protoLoader.PackageDefinition,
  service: string,
  method: string,
): Serialize {
  const fn = (def[`hebbs.v1.${service}`] as protoLoader.ServiceDefinition)[method]
    ?.responseSerialize;
  if (!fn) throw new Error(`no ${service}.${method}`);
  return fn as Serialize;
}

/** The same message for protobufjs, whose `fromObject` takes `repeated float` only as an Array. */
function withArrays(value: unknown): unknown {
  if (value instanceof Float32Array) return Array.from(value);
  if (Buffer.isBuffer(value) || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withArrays);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withArrays(v)]));
}

function expectSameBytes(service: string, method: string, message: unknown): void {
  const want = serializer(reference, service, method)(withArrays(message));
  const got = serializer(ours, service, method)(message);
  expect(got.toString('hex')).toBe(want.toString('hex'));
}

function vector(seed: number, dim = 384): Float32Array {
  return Float32Array.from(
    { length: dim },
    (_, j) => Math.sin(seed * 13 + j) * (j % 2 === 0 ? 1 : -1e-3),
  );
}

function view(over: Partial<MemoryView> = {}): MemoryView {
  return {
    id: '0123456789abcdef0123456789abcdef',
    content: 'the invoice for March was wrong',
    importance: 0.7,
    context: {},
    entityId: null,
    kind: 'episode',
    createdAt: 1_732_000_000_123_456,
    occurredAt: 1_732_000_000_123_456,
    updatedAt: 1_732_000_000_223_456,
    lastAccessedAt: 1_732_000_001_000_000,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    speaker: null,
    conversationId: null,
    messageId: null,
    embedding: vector(1),
    ...over,
  };
}

const RICH_CONTEXT = {
  source: 'chat',
  turn: 12,
  ratio: -0.125,
  big: 2 ** 60,
  active: true,
  off: false,
  gone: null,
  tags: ['billing', 3, null, false, { deep: ['x'] }],
  empty: {},
  nothing: [],
  owner: { name: 'Zoë 🚀', nested: { level: 2 } },
};

const MEMORIES: Array<[string, MemoryView]> = [
  ['plain, no context or entity', view()],
  [
    'every value kind in the context, an entity',
    view({ context: RICH_CONTEXT, entityId: 'acme', accessCount: 42, logicalClock: 3 }),
  ],
  [
    'no embedding, empty content',
    view({ embedding: undefined as unknown as Float32Array, content: '' }),
  ],
  ['a 200-byte content (2-byte length)', view({ content: 'é'.repeat(100) })],
  ['a 40 KiB content (3-byte lengths)', view({ content: 'x'.repeat(40 * 1024), kind: 'document' })],
  [
    'an insight with sources',
    view({ kind: 'insight', sourceMemoryIds: ['aa'.repeat(16), 'bb'.repeat(16)] }),
  ],
  ['a revision', view({ kind: 'revision' })],
  ['a proposition, importance 0', view({ kind: 'proposition', importance: 0 })],
  ['a memory that expires', view({ expiresAt: 1_732_000_600_000_000 })],
];

function hit(m: MemoryView, i: number): RecallHit {
  const details: RecallHit['strategy_details'][] = [
    [{ strategy: 'similarity', relevance: 0.9, distance: 0.1, cosine: 0.8, lexical: 0.35 }],
    [{ strategy: 'temporal', timestamp: m.createdAt, rank: 0 }],
    [{ strategy: 'causal', depth: 2, edge_type: 'caused_by', seed_id: 'cd'.repeat(16) }],
    [
      { strategy: 'analogical', embedding_similarity: 0.5, structural_similarity: 0.25 },
      { strategy: 'temporal', timestamp: m.createdAt, rank: 7 },
    ],
  ];
  return {
    memory: m,
    score: 0.5 + i / 100,
    relevance: 0.75,
    strategy_details: details[i % details.length] ?? [],
  };
}

describe('hand-written gRPC replies are byte-identical to protobufjs', () => {
  for (const [name, m] of MEMORIES) {
    it(`Get / Remember / Revise: ${name}`, () => {
      for (const method of ['Get', 'Remember', 'Revise'])
        expectSameBytes('MemoryService', method, { memory: memoryToProto(m, { sources: false }) });
    });
  }

  it('Recall: every strategy detail kind, strategy errors, sources filled', () => {
    const results = MEMORIES.map(([, m], i) => hitToProto(hit(m, i)));
    expectSameBytes('MemoryService', 'Recall', {
      results,
      strategy_errors: [{ strategy: 'CAUSAL', message: 'no seed memory found' }],
    });
    expectSameBytes('MemoryService', 'Recall', { results: [], strategy_errors: [] });
  });

  it('Prime: results and counts', () => {
    const results = MEMORIES.slice(0, 3).map(([, m], i) => hitToProto(hit(m, i)));
    expectSameBytes('MemoryService', 'Prime', { results, temporal_count: 2, similarity_count: 1 });
    expectSameBytes('MemoryService', 'Prime', {
      results: [],
      temporal_count: 0,
      similarity_count: 0,
    });
  });

  it('GetInsights', () => {
    expectSameBytes('ReflectService', 'GetInsights', {
      insights: MEMORIES.map(([, m]) => memoryToProto(m, { sources: true })),
    });
    expectSameBytes('ReflectService', 'GetInsights', { insights: [] });
  });

  it('Subscribe: the handshake, and pushes with and without chunk_offset', () => {
    expectSameBytes('SubscribeService', 'Subscribe', {
      subscription_id: 9_007_199_254_740_991,
      sequence_number: 0,
    });
    const push = {
      subscription_id: 17,
      memory: memoryToProto(view({ entityId: 'acme' }), { sources: false }),
      confidence: 0.91,
      push_timestamp_us: 1_732_000_000_999_999,
      sequence_number: 300,
      score: 0.88,
      strategy: 'similarity',
    };
    expectSameBytes('SubscribeService', 'Subscribe', push);
    expectSameBytes('SubscribeService', 'Subscribe', { ...push, chunk_offset: 0 });
    expectSameBytes('SubscribeService', 'Subscribe', { ...push, chunk_offset: 70_000 });
  });

  it('an embedding that is a view into a larger buffer is written from its own offset', () => {
    const big = vector(5, 1000);
    const m = memoryToProto(view({ embedding: big.subarray(100, 484) }), { sources: false });
    expectSameBytes('MemoryService', 'Get', { memory: m });
  });

  it('an enum name the schema does not have is an error, not a silently missing field', () => {
    const m = { ...memoryToProto(view(), { sources: false }), kind: 'MEMORY_KIND_NOPE' };
    expect(() => serializer(ours, 'MemoryService', 'Get')({ memory: m })).toThrow(
      /MEMORY_KIND_NOPE/,
    );
  });
});
