/**
 * @module grpc/messages — the shapes @grpc/proto-loader decodes hebbs.v1 requests into, with the
 * loader options of grpc/server.ts (keepCase, longs as strings, enums as strings, bytes as Buffer,
 * proto3 `optional` fields absent when unset); and, at the end, the replies that carry memories,
 * as grpc/codec.ts builds them and grpc/response-encoder.ts writes them.
 */

export interface StructValue {
  nullValue?: string;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: Struct;
  listValue?: { values?: StructValue[] };
  kind?: string;
}

export interface Struct {
  fields?: Record<string, StructValue>;
}

export type U64 = string | number;

export interface EdgeMsg {
  target_id: Buffer;
  edge_type: string;
  confidence?: number;
}

export interface ScoringWeightsMsg {
  w_relevance: number;
  w_recency: number;
  w_importance: number;
  w_reinforcement: number;
  max_age_us: U64;
  reinforcement_cap: U64;
}

export interface RememberRequestMsg {
  content: string;
  importance?: number;
  context?: Struct | null;
  entity_id?: string;
  edges: EdgeMsg[];
  tenant_id?: string;
  kind?: string;
  ttl_s?: number;
  expires_at_us?: U64;
  occurred_at?: U64;
  speaker?: string;
  conversation_id?: string;
}

export interface ConversationMessageMsg {
  speaker: string;
  content: string;
  occurred_at?: U64;
  importance?: number;
  context?: Struct | null;
  message_id?: string;
}

export interface IngestMessagesRequestMsg {
  conversation_id: string;
  messages: ConversationMessageMsg[];
  entity_id?: string;
  tenant_id?: string;
  ttl_s?: number;
  expires_at_us?: U64;
}

export interface IngestMessagesResponseMsg {
  memory_ids: Buffer[];
  created: number;
  existing: number;
}

export interface GetRequestMsg {
  memory_id: Buffer;
  tenant_id?: string;
}

export interface StrategyConfigMsg {
  strategy_type: string;
  top_k?: number;
  ef_search?: number;
  entity_id?: string;
  time_range?: { start_us: U64; end_us: U64 } | null;
  seed_memory_id?: Buffer;
  edge_types: string[];
  max_depth?: number;
  analogical_alpha?: number;
}

export interface RecallRequestMsg {
  cue: string;
  strategies: StrategyConfigMsg[];
  top_k?: number;
  scoring_weights?: ScoringWeightsMsg | null;
  cue_context?: Struct | null;
  tenant_id?: string;
  /** An enum name; a number when the client sent a value this schema does not define. */
  similarity_mode?: string | number;
  filter?: Struct | null;
  /** Flashbulb addition: false skips the reranker, true requires it; unset: the server's choice. */
  rerank?: boolean;
}

export interface PrimeRequestMsg {
  entity_id: string;
  context?: Struct | null;
  max_memories?: number;
  recency_window_us?: U64;
  similarity_cue?: string;
  scoring_weights?: ScoringWeightsMsg | null;
  tenant_id?: string;
  filter?: Struct | null;
}

export interface ReviseRequestMsg {
  memory_id: Buffer;
  content?: string;
  importance?: number;
  context?: Struct | null;
  context_mode: string;
  entity_id?: string;
  edges: EdgeMsg[];
  tenant_id?: string;
  ttl_s?: number;
  expires_at_us?: U64;
  clear_expiry?: boolean;
}

export interface ForgetRequestMsg {
  memory_ids: Buffer[];
  entity_id?: string;
  staleness_threshold_us?: U64;
  access_count_floor?: U64;
  memory_kind?: string;
  decay_score_floor?: number;
  tenant_id?: string;
}

export interface GetInsightsRequestMsg {
  entity_id?: string;
  min_confidence?: number;
  max_results?: number;
  tenant_id?: string;
}

export interface TenantOnly {
  tenant_id?: string;
}

// ─── replies that carry memories (uint64 as numbers, enums as names, absent = unset) ─────

export interface MemoryMsg {
  memory_id: Buffer;
  content: string;
  importance: number;
  context?: Struct;
  entity_id?: string;
  /** Packed on the wire as one block of little-endian floats. */
  embedding: Float32Array;
  created_at: number;
  updated_at: number;
  last_accessed_at: number;
  access_count: number;
  decay_score: number;
  kind: string;
  logical_clock: number;
  source_memory_ids: Buffer[];
  expires_at_us?: number;
  occurred_at: number;
  speaker?: string;
  conversation_id?: string;
  message_id?: string;
}

export interface StrategyDetailMsg {
  strategy_type: string;
  relevance: number;
  distance?: number;
  timestamp?: number;
  rank?: number;
  depth?: number;
  causal_edge_type?: string;
  seed_id?: Buffer;
  embedding_similarity?: number;
  cosine?: number;
  lexical?: number;
  structural_similarity?: number;
}

export interface RecallResultMsg {
  memory: MemoryMsg;
  score: number;
  strategy_details: StrategyDetailMsg[];
}

export interface RecallResponseMsg {
  results: RecallResultMsg[];
  strategy_errors: Array<{ strategy: string; message: string }>;
}

export interface PrimeResponseMsg {
  results: RecallResultMsg[];
  temporal_count: number;
  similarity_count: number;
}

/** RememberResponse, GetResponse and ReviseResponse. */
export interface MemoryResponseMsg {
  memory: MemoryMsg;
}

export interface GetInsightsResponseMsg {
  insights: MemoryMsg[];
}

/** A push, or the handshake: only `subscription_id` and `sequence_number` 0. */
export interface SubscribePushMsg {
  subscription_id: number;
  memory?: MemoryMsg;
  confidence?: number;
  push_timestamp_us?: number;
  sequence_number: number;
  score?: number;
  strategy?: string;
  chunk_offset?: number;
}
