/**
 * @module grpc/codec — every conversion between hebbs.v1 messages and Flashbulb's types, done
 * once: Struct ⇄ JSON, 16-byte ids ⇄ hex, enums ⇄ names, uint64 ⇄ number. uint64 inputs above
 * 2^53 are clamped to Number.MAX_SAFE_INTEGER (every stored value is far below, so comparisons
 * are unchanged); outputs are exact because stored values are safe integers.
 */
import { invalid } from '../errors/codes.ts';
import { JSON_LIMITS } from '../model/json-shape.ts';
import { EDGE_TYPES, type Edge, type EdgeType } from '../model/edge.ts';
import {
  MEMORY_KINDS,
  decayScore,
  nowUs,
  type JsonObject,
  type JsonValue,
  type MemoryKind,
  type MemoryView,
} from '../model/memory.ts';
import type { RecallHit, StrategyDetail, StrategyName } from '../recall/types.ts';
import type {
  MemoryMsg,
  RecallResultMsg,
  StrategyDetailMsg,
  Struct,
  StructValue,
  U64,
} from './messages.ts';

export function idFromBytes(field: string, b: Buffer | undefined): string {
  if (b?.length !== 16) throw invalid(`${field} must be 16 bytes, got ${b?.length ?? 0}`);
  return b.toString('hex');
}

export function idToBytes(hex: string): Buffer {
  return Buffer.from(hex, 'hex');
}

export function u64(v: U64 | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? Math.min(n, Number.MAX_SAFE_INTEGER) : undefined;
}

/**
 * Struct → JSON object, refusing values that break JSON_LIMITS (depth, keys per object) with
 * INVALID_ARGUMENT naming the field, as REST does for its bodies.
 */
export function structToJson(
  s: Struct | null | undefined,
  field = 'context',
): JsonObject | undefined {
  return s?.fields ? structAt(s, field, 1) : undefined;
}

function structAt(s: Struct, path: string, depth: number): JsonObject {
  if (depth > JSON_LIMITS.depth)
    throw invalid(
      `${path} nests objects and arrays deeper than the limit of ${JSON_LIMITS.depth} levels`,
    );
  const entries = Object.entries(s.fields ?? {});
  if (entries.length > JSON_LIMITS.keysPerObject)
    throw invalid(
      `${path} has ${entries.length} keys; the limit is ${JSON_LIMITS.keysPerObject} keys per object`,
    );
  const out: JsonObject = {};
  for (const [k, v] of entries) out[k] = valueToJson(v, `${path}.${k}`, depth + 1);
  return out;
}

function valueToJson(v: StructValue, path: string, depth: number): JsonValue {
  if (v.structValue !== undefined && v.structValue !== null)
    return structAt(v.structValue, path, depth);
  if (v.listValue !== undefined && v.listValue !== null) {
    if (depth > JSON_LIMITS.depth)
      throw invalid(
        `${path} nests objects and arrays deeper than the limit of ${JSON_LIMITS.depth} levels`,
      );
    return (v.listValue.values ?? []).map((x, i) => valueToJson(x, `${path}[${i}]`, depth + 1));
  }
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.numberValue !== undefined && v.numberValue !== null) return v.numberValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  return null;
}

export function jsonToStruct(obj: JsonObject): Struct {
  const fields: Record<string, StructValue> = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = jsonToValue(v);
  return { fields };
}

function jsonToValue(v: JsonValue): StructValue {
  if (v === null) return { nullValue: 'NULL_VALUE' };
  if (Array.isArray(v)) return { listValue: { values: v.map(jsonToValue) } };
  if (typeof v === 'object') return { structValue: jsonToStruct(v) };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'number') return { numberValue: v };
  return { boolValue: v };
}

const KIND_NAMES: Record<MemoryKind, string> = {
  episode: 'MEMORY_KIND_EPISODE',
  insight: 'MEMORY_KIND_INSIGHT',
  revision: 'MEMORY_KIND_REVISION',
  document: 'MEMORY_KIND_DOCUMENT',
  proposition: 'MEMORY_KIND_PROPOSITION',
};

export function kindFromEnum(field: string, name: string | undefined): MemoryKind | undefined {
  if (name === undefined || name === 'MEMORY_KIND_UNSPECIFIED') return undefined;
  const kind = MEMORY_KINDS.find((k) => KIND_NAMES[k] === name);
  if (!kind) throw invalid(`${field}: unknown memory kind ${name}`);
  return kind;
}

export function edgeTypeToEnum(t: EdgeType): string {
  return `EDGE_TYPE_${t.toUpperCase()}`;
}

export function edgeTypeFromEnum(field: string, name: string): string {
  if (name === 'EDGE_TYPE_UNSPECIFIED' || !/^EDGE_TYPE_/.test(name))
    throw invalid(`${field}: edge type must be set (got ${name})`);
  return name;
}

const STRATEGY_NAMES: Record<StrategyName, string> = {
  similarity: 'SIMILARITY',
  temporal: 'TEMPORAL',
  causal: 'CAUSAL',
  analogical: 'ANALOGICAL',
};

export function strategyFromEnum(field: string, name: string): StrategyName {
  const found = (Object.keys(STRATEGY_NAMES) as StrategyName[]).find(
    (s) => STRATEGY_NAMES[s] === name,
  );
  if (!found)
    throw invalid(
      `${field}: strategy_type must be SIMILARITY, TEMPORAL, CAUSAL or ANALOGICAL (got ${name})`,
    );
  return found;
}

export function strategyToEnum(s: StrategyName): string {
  return STRATEGY_NAMES[s];
}

const NO_EMBEDDING = new Float32Array(0);

/**
 * Memory → hebbs.v1 Memory. `sources`: fill source_memory_ids (Recall, Prime, GetInsights). The
 * embedding stays a Float32Array: grpc/response-encoder.ts writes it as one block.
 */
export function memoryToProto(m: MemoryView, opts: { sources: boolean }): MemoryMsg {
  const out: MemoryMsg = {
    memory_id: idToBytes(m.id),
    content: m.content,
    importance: m.importance,
    embedding: m.embedding ?? NO_EMBEDDING,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    last_accessed_at: m.lastAccessedAt,
    access_count: m.accessCount,
    decay_score: decayScore(m, nowUs()),
    kind: KIND_NAMES[m.kind],
    logical_clock: m.logicalClock,
    source_memory_ids: opts.sources && m.sourceMemoryIds ? m.sourceMemoryIds.map(idToBytes) : [],
    occurred_at: m.occurredAt,
  };
  if (Object.keys(m.context).length > 0) out.context = jsonToStruct(m.context);
  if (m.entityId !== null) out.entity_id = m.entityId;
  if (m.expiresAt !== null) out.expires_at_us = m.expiresAt;
  if (m.speaker !== null) out.speaker = m.speaker;
  if (m.conversationId !== null) out.conversation_id = m.conversationId;
  if (m.messageId !== null) out.message_id = m.messageId;
  return out;
}

/** Each shape written out: `{ ...base, more }` took V8 ~2.5 µs a detail, a literal ~30 ns. */
function detailToProto(d: StrategyDetail, relevance: number): StrategyDetailMsg {
  const strategy_type = strategyToEnum(d.strategy);
  switch (d.strategy) {
    case 'similarity':
      return {
        strategy_type,
        relevance,
        distance: d.distance,
        cosine: d.cosine,
        lexical: d.lexical,
      };
    case 'temporal':
      return { strategy_type, relevance, timestamp: d.timestamp, rank: d.rank };
    case 'causal':
      return {
        strategy_type,
        relevance,
        depth: d.depth,
        causal_edge_type: edgeTypeToEnum(d.edge_type),
        seed_id: idToBytes(d.seed_id),
      };
    case 'analogical':
      return {
        strategy_type,
        relevance,
        embedding_similarity: d.embedding_similarity,
        structural_similarity: d.structural_similarity,
      };
  }
}

export function hitToProto(h: RecallHit): RecallResultMsg {
  // hebbs.v1 has no field for contradictions; gRPC clients find them through the edges.
  return {
    memory: memoryToProto(h.memory, { sources: true }),
    score: h.score,
    strategy_details: h.strategy_details.map((d) => detailToProto(d, h.relevance)),
  };
}

export function edgeToProto(e: Edge): Record<string, unknown> {
  return {
    target_id: idToBytes(e.target_id),
    edge_type: edgeTypeToEnum(e.edge_type),
    confidence: e.confidence,
  };
}

export const EDGE_ENUM_NAMES = EDGE_TYPES.map(edgeTypeToEnum);
