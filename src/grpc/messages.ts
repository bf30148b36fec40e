/**
 * @module grpc/messages — the shapes @grpc/proto-loader decodes hebbs.v1 requests into, with the
 * loader options of grpc/server.ts (keepCase, longs as strings, enums as strings, bytes as Buffer,
 * proto3 `optional` fields absent when unset).
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
}

export interface PrimeRequestMsg {
  entity_id: string;
  context?: Struct | null;
  max_memories?: number;
  recency_window_us?: U64;
  similarity_cue?: string;
  scoring_weights?: ScoringWeightsMsg | null;
  tenant_id?: string;
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
