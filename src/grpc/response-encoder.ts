/**
 * @module grpc/response-encoder — the replies that carry memories (Remember, Get, Revise, Recall,
 * Prime, GetInsights, Subscribe pushes), written by hand with grpc/proto-writer.ts instead of by
 * protobufjs so that each 384-float embedding goes out as one block copy, in the bytes protobufjs
 * writes for the same message (field numbers from proto/hebbs.proto, enum numbers from the loaded
 * schema).
 */
import type * as protoLoader from '@grpc/proto-loader';
import type {
  GetInsightsResponseMsg,
  MemoryMsg,
  MemoryResponseMsg,
  PrimeResponseMsg,
  RecallResponseMsg,
  RecallResultMsg,
  StrategyDetailMsg,
  Struct,
  StructValue,
  SubscribePushMsg,
} from './messages.ts';
import { ProtoWriter } from './proto-writer.ts';

type EnumNumbers = ReadonlyMap<string, number>;

interface Enums {
  kind: EnumNumbers;
  edge: EnumNumbers;
  strategy: EnumNumbers;
}

function enumNumbers(def: protoLoader.PackageDefinition, name: string): EnumNumbers {
  const type = (def[`hebbs.v1.${name}`] as protoLoader.EnumTypeDefinition | undefined)?.type as
    | { value?: Array<{ name: string; number: number }> }
    | undefined;
  if (!type?.value) throw new Error(`hebbs.proto has no enum ${name}`);
  return new Map(type.value.map((v) => [v.name, v.number]));
}

function enumValue(numbers: EnumNumbers, name: string): number {
  const n = numbers.get(name);
  if (n === undefined) throw new Error(`no enum value named ${name}`);
  return n;
}

// ─── google.protobuf.Struct ──────────────────────────────────────────────────────────────

function struct(w: ProtoWriter, s: Struct): void {
  // map<string, Value> fields = 1: one entry message per key (key = 1, value = 2).
  for (const [key, value] of Object.entries(s.fields ?? {}))
    w.message(1, { key, value }, structEntry);
}

function structEntry(w: ProtoWriter, e: { key: string; value: StructValue }): void {
  w.string(1, e.key);
  w.message(2, e.value, structValue);
}

function structValue(w: ProtoWriter, v: StructValue): void {
  if (v.nullValue != null) w.varint(1, 0);
  if (v.numberValue != null) w.double(2, v.numberValue);
  if (v.stringValue != null) w.string(3, v.stringValue);
  if (v.boolValue != null) w.varint(4, v.boolValue ? 1 : 0);
  if (v.structValue != null) w.message(5, v.structValue, struct);
  if (v.listValue != null) w.message(6, v.listValue, listValue);
}

function listValue(w: ProtoWriter, l: { values?: StructValue[] }): void {
  for (const v of l.values ?? []) w.message(1, v, structValue);
}

// ─── hebbs.v1 messages ───────────────────────────────────────────────────────────────────

function encoders(enums: Enums) {
  const memory = (w: ProtoWriter, m: MemoryMsg): void => {
    w.bytes(1, m.memory_id);
    w.string(2, m.content);
    w.float(3, m.importance);
    if (m.context !== undefined) w.message(4, m.context, struct);
    if (m.entity_id !== undefined) w.string(5, m.entity_id);
    w.packedFloats(6, m.embedding);
    w.varint(7, m.created_at);
    w.varint(8, m.updated_at);
    w.varint(9, m.last_accessed_at);
    w.varint(10, m.access_count);
    w.float(11, m.decay_score);
    w.varint(12, enumValue(enums.kind, m.kind));
    // 13 device_id: never set.
    w.varint(14, m.logical_clock);
    for (const id of m.source_memory_ids) w.bytes(15, id);
    if (m.expires_at_us !== undefined) w.varint(16, m.expires_at_us);
    w.varint(17, m.occurred_at);
    if (m.speaker !== undefined) w.string(18, m.speaker);
    if (m.conversation_id !== undefined) w.string(19, m.conversation_id);
    if (m.message_id !== undefined) w.string(20, m.message_id);
  };
  const detail = (w: ProtoWriter, d: StrategyDetailMsg): void => {
    w.varint(1, enumValue(enums.strategy, d.strategy_type));
    w.float(2, d.relevance);
    if (d.distance !== undefined) w.float(3, d.distance);
    if (d.timestamp !== undefined) w.varint(4, d.timestamp);
    if (d.rank !== undefined) w.varint(5, d.rank);
    if (d.depth !== undefined) w.varint(6, d.depth);
    if (d.causal_edge_type !== undefined) w.varint(7, enumValue(enums.edge, d.causal_edge_type));
    if (d.seed_id !== undefined) w.bytes(8, d.seed_id);
    if (d.embedding_similarity !== undefined) w.float(9, d.embedding_similarity);
    if (d.structural_similarity !== undefined) w.float(10, d.structural_similarity);
    if (d.cosine !== undefined) w.float(16, d.cosine);
    if (d.lexical !== undefined) w.float(17, d.lexical);
  };
  const result = (w: ProtoWriter, r: RecallResultMsg): void => {
    w.message(1, r.memory, memory);
    w.float(2, r.score);
    for (const d of r.strategy_details) w.message(3, d, detail);
  };
  const strategyError = (w: ProtoWriter, e: { strategy: string; message: string }): void => {
    w.varint(1, enumValue(enums.strategy, e.strategy));
    w.string(2, e.message);
  };
  return {
    memoryResponse: (w: ProtoWriter, r: MemoryResponseMsg): void => w.message(1, r.memory, memory),
    recallResponse: (w: ProtoWriter, r: RecallResponseMsg): void => {
      for (const x of r.results) w.message(1, x, result);
      for (const e of r.strategy_errors) w.message(2, e, strategyError);
    },
    primeResponse: (w: ProtoWriter, r: PrimeResponseMsg): void => {
      for (const x of r.results) w.message(1, x, result);
      w.varint(2, r.temporal_count);
      w.varint(3, r.similarity_count);
    },
    insightsResponse: (w: ProtoWriter, r: GetInsightsResponseMsg): void => {
      for (const m of r.insights) w.message(1, m, memory);
    },
    push: (w: ProtoWriter, p: SubscribePushMsg): void => {
      w.varint(1, p.subscription_id);
      if (p.memory !== undefined) w.message(2, p.memory, memory);
      if (p.confidence !== undefined) w.float(3, p.confidence);
      if (p.push_timestamp_us !== undefined) w.varint(4, p.push_timestamp_us);
      w.varint(5, p.sequence_number);
      if (p.score !== undefined) w.float(6, p.score);
      if (p.strategy !== undefined) w.string(7, p.strategy);
      if (p.chunk_offset !== undefined) w.varint(8, p.chunk_offset);
    },
  };
}

/**
 * One writer for every reply, reused: a serializer runs synchronously to the end, and its result
 * is copied out, so a reply never grows a buffer from scratch. One that grew past `KEEP_BYTES`
 * (a reply of many large memories) is let go afterwards.
 */
const KEEP_BYTES = 1024 * 1024;
let scratch = new ProtoWriter(64 * 1024);

function serializer<T>(write: (w: ProtoWriter, value: T) => void): (value: T) => Buffer {
  return (value) => {
    const w = scratch;
    w.reset();
    write(w, value);
    const bytes = w.finish();
    const out = Buffer.allocUnsafe(bytes.length);
    bytes.copy(out);
    if (w.capacity > KEEP_BYTES) scratch = new ProtoWriter(64 * 1024);
    return out;
  };
}

/**
 * The serializers written here. Their strings go through Buffer#write, which already writes a lone
 * surrogate as U+FFFD, so grpc/server.ts does not repair their values first.
 */
export const HAND_WRITTEN = new WeakSet<object>();

/**
 * Replaces `responseSerialize` of every method whose reply carries memories, in the package
 * definition the server loads (clients only use the request serializers and reply deserializers).
 */
export function useResponseEncoders(def: protoLoader.PackageDefinition): void {
  const e = encoders({
    kind: enumNumbers(def, 'MemoryKind'),
    edge: enumNumbers(def, 'EdgeType'),
    strategy: enumNumbers(def, 'RecallStrategyType'),
  });
  const memoryResponse = serializer(e.memoryResponse);
  const replace: Record<string, Record<string, (value: never) => Buffer>> = {
    MemoryService: {
      Remember: memoryResponse,
      Get: memoryResponse,
      Revise: memoryResponse,
      Recall: serializer(e.recallResponse),
      Prime: serializer(e.primeResponse),
    },
    ReflectService: { GetInsights: serializer(e.insightsResponse) },
    SubscribeService: { Subscribe: serializer(e.push) },
  };
  for (const [service, methods] of Object.entries(replace)) {
    const definition = def[`hebbs.v1.${service}`] as protoLoader.ServiceDefinition | undefined;
    if (!definition) throw new Error(`hebbs.proto has no service ${service}`);
    for (const [method, serialize] of Object.entries(methods)) {
      const m = definition[method];
      if (!m) throw new Error(`hebbs.proto has no method ${service}.${method}`);
      definition[method] = { ...m, responseSerialize: serialize as (value: unknown) => Buffer };
      HAND_WRITTEN.add(serialize);
    }
  }
}
