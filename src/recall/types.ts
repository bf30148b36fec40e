/** @module recall/types — recall requests and results as the shard sees them (protocol-neutral). */
import type { Edge, EdgeType } from '../model/edge.ts';
import type { JsonObject, MemoryRecord, MemoryView } from '../model/memory.ts';
import type { FilterNode } from './filter.ts';

export const STRATEGIES = ['similarity', 'temporal', 'causal', 'analogical'] as const;
export type StrategyName = (typeof STRATEGIES)[number];

export interface StrategySpec {
  strategy: StrategyName;
  topK: number;
  efSearch: number;
  entityId: string | null;
  timeRange: { startUs: number | null; endUs: number | null } | null;
  seedId: string | null;
  edgeTypes: EdgeType[] | null;
  maxDepth: number;
  alpha: number;
}

export interface ScoringWeights {
  w_relevance: number;
  w_recency: number;
  w_importance: number;
  w_reinforcement: number;
  max_age_us: number;
  reinforcement_cap: number;
}

export const DEFAULT_WEIGHTS: ScoringWeights = {
  w_relevance: 0.5,
  w_recency: 0.2,
  w_importance: 0.2,
  w_reinforcement: 0.1,
  max_age_us: 30 * 86_400_000_000,
  reinforcement_cap: 100,
};

export const SIMILARITY_MODES = ['hybrid', 'dense', 'lexical'] as const;
/** How similarity finds and ranks: vector and lexical fused (default), vector only, or lexical only. */
export type SimilarityMode = (typeof SIMILARITY_MODES)[number];

export type StrategyDetail =
  | {
      strategy: 'similarity';
      relevance: number;
      distance: number;
      cosine: number;
      lexical: number;
      named?: number;
      reply?: number;
    }
  | { strategy: 'temporal'; timestamp: number; rank: number }
  | { strategy: 'causal'; depth: number; edge_type: EdgeType; seed_id: string }
  | { strategy: 'analogical'; embedding_similarity: number; structural_similarity: number };

export interface RecallHit {
  memory: MemoryView;
  score: number;
  relevance: number;
  strategy_details: StrategyDetail[];
  /** Ids of memories this one contradicts (linked by `contradicts` edges), when there are any. */
  contradicted_by?: string[];
}

export interface StrategyError {
  strategy: StrategyName;
  message: string;
}

export interface RecallInput {
  /** Metadata filter every result must pass, applied inside the search. */
  filter?: FilterNode | null;
  cue: Float32Array;
  /** The cue as the caller wrote it (without its context): what the lexical index and time-aware recall read. */
  cueText: string;
  similarityMode: SimilarityMode;
  cueContext: JsonObject | null;
  strategies: StrategySpec[];
  weights: ScoringWeights;
  /** When the cue is asked (µs): what "now" means for the cue's relative times and for recency; null: the clock. */
  askedAtUs?: number | null;
  withEmbedding: boolean;
  /** Results whose relevance is below it are dropped (0: none are). */
  minRelevance?: number;
  /** The caller counts the access of the answer's first result itself (it reorders the results). */
  deferAccess?: boolean;
}

export interface RecallOutput {
  results: RecallHit[];
  strategy_errors: StrategyError[];
}

export interface PrimeInput {
  filter?: FilterNode | null;
  entityId: string | null;
  maxMemories: number;
  cue: Float32Array | null;
  recencyWindowUs: number;
  weights: ScoringWeights;
  withEmbedding: boolean;
  /** Similarity candidates whose relevance (cosine) is below it are dropped; the recent half is kept (0: none are). */
  minRelevance?: number;
}

export interface PrimeOutput {
  results: RecallHit[];
  temporal_count: number;
  similarity_count: number;
}

/** What strategies read: a workspace's live memories, seen through its indexes. */
export interface RecallSource {
  memory(id: string): MemoryRecord | undefined;
  /**
   * Whether a memory may be a result (the request's metadata filter; always true without one).
   * nearest() and newestFirst() apply it inside their search; walks check it per memory.
   */
  accepts(m: MemoryRecord): boolean;
  /** Live accepted memories most similar to `query` (entity-scoped when given), best first. */
  nearest(
    query: Float32Array,
    opts: { k: number; ef: number; entityId: string | null },
  ): Array<{ id: string; sim: number }>;
  /** Live accepted memories, latest event (occurred_at) first (entity-scoped when given). */
  newestFirst(entityId: string | null): Iterable<MemoryRecord>;
  /** Live memories that happened (occurred_at) in [startUs, endUs), latest first, at most `limit`. */
  occurredBetween(
    startUs: number,
    endUs: number,
    entityId: string | null,
    limit: number,
  ): MemoryRecord[];
  /**
   * At least how many live memories (entity-scoped when given) happened outside [startUs, endUs):
   * counted from the event order without reading a memory, so it may count more (removed ones not
   * yet compacted), never fewer.
   */
  countOutside(startUs: number, endUs: number, entityId: string | null): number;
  /**
   * The memories just before and after this one in the same stretch of conversation, in event
   * order (occurred_at, then id): for a turn of a conversation (`conversationId`), the nearest
   * turns of that conversation; for any other memory, the nearest live memory on each side with
   * the same kind and entity that is not a turn; each kept when it happened within an hour of it
   * (at most 2).
   */
  neighbours(memory: MemoryRecord): MemoryRecord[];
  /**
   * The thread a memory belongs to (a key equal for the memories of one thread): the stretch of
   * conversation its neighbours, their neighbours and so on form (a turn's: within its
   * conversation); null when that stretch is longer than a session (a stream written without
   * pauses). A recall remembers the threads it found.
   */
  thread(memory: MemoryRecord): string | null;
  /**
   * How crowded the stretch of embedding space a live memory was written into is: the mean of its
   * 10 highest cosines with the live memories written before it (null when none was). Computed
   * once per memory and remembered; it never changes while the memories before it stay.
   */
  density(memory: MemoryRecord): number | null;
  /** The lexical index, prepared for one query text. */
  lexical(text: string): LexicalMatcher;
  /** Live memories whose content names a date among `keys` (see recall/dates.ts), at most `limit`. */
  withDateKeys(keys: readonly string[], limit: number, entityId: string | null): MemoryRecord[];
  outgoing(id: string): readonly Edge[];
  incoming(id: string): readonly Edge[];
}

/** A query against a workspace's lexical index. `norm` is BM25 over its bound for the query, in [0, 1]. */
export interface LexicalMatcher {
  /** True when no query term occurs in any memory. */
  readonly empty: boolean;
  search(k: number, entityId: string | null): Array<{ id: string; norm: number }>;
  /** The normalised score of one memory (0 when it shares no term with the query). */
  normOf(id: string): number;
  /** The match of several memories read as one text: the IDF-weighted share of the query's terms one of them holds. */
  unionOf(ids: Iterable<string>): number;
}
