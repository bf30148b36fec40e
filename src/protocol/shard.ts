/**
 * @module protocol/shard — the only contract between the router and the shards: typed commands
 * in, results (or errors as data) out. Types only, importing nothing of the shard (the
 * subscription shapes it carries are declared here, the browsing and reflection ones in
 * protocol/browse and protocol/reflection), so both sides import it freely.
 */
import type { EdgeType, Edge } from '../model/edge.ts';
import type { JsonObject, MemoryKind, MemoryRecord, MemoryView } from '../model/memory.ts';
import type { ErrorCode } from '../errors/codes.ts';
import type { PrimeInput, PrimeOutput, RecallInput, RecallOutput } from '../recall/types.ts';
import type { FilterNode } from '../recall/filter.ts';
import type {
  EntitySummariesInput,
  EntitySummary,
  ListOutput,
  ListSort,
  OverviewInput,
  OverviewOutput,
  TimelineInput,
  TimelineOutput,
} from './browse.ts';
import type {
  PendingContradiction,
  ContradictionsOutput,
  GatherInput,
  GatherOutput,
  InsightWrite,
  Verdicts,
  VerdictResult,
} from './reflection.ts';

export type * from './browse.ts';

export interface SubscriptionSpec {
  id: number;
  entityId: string | null;
  kinds: MemoryKind[];
  threshold: number;
  timeScopeUs: number | null;
  /** Metadata filter a memory must pass to be pushed (applied inside the search). */
  filter?: FilterNode | null;
  /** Most pushes one chunk (or one batch of new writes) may produce, best first. */
  maxPushes: number;
  /**
   * Cluster mode: state carried from the previous owner of the workspace's partition when the
   * subscription is registered with a new one (cluster/follow.ts).
   */
  resume?: {
    recent: Array<{ vector: Float32Array; offset: number }>;
    pushed: string[];
    /** Memories created from this time on are matched against `recent` at once (writes the subscription may have missed while it moved). */
    sinceUs: number;
  };
}

export interface Push {
  subscription: number;
  memory: MemoryView;
  confidence: number;
  score: number;
  chunkOffset: number | null;
}

export interface EdgeInput {
  targetId: string;
  edgeType: EdgeType;
  confidence: number;
}

export interface RememberItem {
  content: string;
  importance: number;
  context: JsonObject;
  entityId: string | null;
  kind: MemoryKind;
  embedding: Float32Array;
  edges: EdgeInput[];
  /** µs since the epoch; null or absent: never expires. */
  expiresAt?: number | null;
  /** Expires this many µs after it is written (wins over expiresAt). */
  ttlUs?: number;
  /** When it happened (µs); absent: when it is written. A time past the shard's clock is written as now. */
  occurredAt?: number;
  /** Who said it; null or absent: nobody named. */
  speaker?: string | null;
  /** The conversation it is a turn of: linked `followed_by` to the turn before it. */
  conversationId?: string | null;
  /** The writer's id for the message in its conversation (ingest skips one the conversation holds). */
  messageId?: string | null;
}

/** What ingest answers: per message, in order, its memory id and whether this call wrote it. */
export interface IngestOutput {
  ids: string[];
  created: boolean[];
}

export interface ReviseInput {
  id: string;
  content?: string;
  importance?: number;
  context?: JsonObject;
  contextMode: 'merge' | 'replace';
  /** undefined keeps the entity, null clears it. */
  entityId?: string | null;
  /** undefined keeps the expiry, null removes it. */
  expiresAt?: number | null;
  /** Expires this many µs after the revise (wins over expiresAt). */
  ttlUs?: number;
  embedding?: Float32Array;
  edges: EdgeInput[];
  withEmbedding?: boolean;
}

export interface ForgetCriteria {
  memoryIds?: string[];
  entityId?: string;
  stalenessThresholdUs?: number;
  accessCountFloor?: number;
  memoryKind?: MemoryKind;
  decayScoreFloor?: number;
}

export interface ForgetResult {
  forgotten_count: number;
  cascade_count: number;
  truncated: boolean;
  tombstone_count: number;
}

export interface ListInput {
  /** Metadata filter; a page holds `limit` matching memories whenever that many remain. */
  filter?: FilterNode | null;
  entityId: string | null;
  /** Only memories said by this speaker (null: any). */
  speaker?: string | null;
  /** Only this conversation's turns (null: any). */
  conversationId?: string | null;
  kind: MemoryKind | null;
  cursor: string | null;
  limit: number;
  includeSuperseded: boolean;
  /** What a page is ordered by (default created_at, whose cursor is a bare id). */
  sort?: ListSort;
  /** Default asc (oldest first). */
  order?: 'asc' | 'desc';
  /** Only memories holding every word of this text (as the lexical index reads words). */
  text?: string | null;
  /** Creation time at least `since` and before `until` (µs). */
  since?: number | null;
  until?: number | null;
  /** Also count every match (`total`). */
  withTotal?: boolean;
  /**
   * A page stops before the memory that would take its memories past this many bytes (as the
   * reply budget counts them), holding at least one, and its next_cursor goes on from there: a
   * page of large memories comes back shorter instead of over the reply budget (absent: no bound).
   */
  maxBytes?: number;
}

export interface GraphInput {
  centerId: string;
  depth: number;
  maxNodes: number;
  edgeTypes: EdgeType[] | null;
  direction: 'out' | 'in' | 'both';
}

export interface UploadFile {
  filePath: string;
  content: string;
  contentHash: string;
  entityId: string | null;
  embedding: Float32Array;
  propositions: Array<{ text: string; embedding: Float32Array }>;
}

export interface UploadFileResult {
  file_path: string;
  document_id: string;
  propositions: number;
  status: 'created' | 'updated' | 'unchanged';
}

export interface ShardStats {
  memories: number;
  workspaces: number;
  edges: number;
  walSeq: number;
}

export interface ExportPageInput {
  cursor: string | null;
  limit: number;
  withEmbedding: boolean;
}

/** One line of an export: a live memory, its superseded versions and the edges placed on its line. */
export interface ExportLine {
  memory: MemoryView;
  versions: MemoryView[];
  edges: Edge[];
}

/** One line of an import, validated: records with their embeddings, and edges. */
export interface ImportItem {
  memory: MemoryRecord;
  versions: MemoryRecord[];
  edges: Edge[];
}

export type ImportOutcome =
  | { status: 'imported' | 'skipped' | 'expired' }
  | { status: 'error'; message: string };

export interface BackupResult {
  memories: number;
  /** Bytes written: the snapshot and the log segment copied beside it. */
  bytes: number;
}

/** Method name → input and output. */
export interface ShardMethods {
  remember: { input: { items: RememberItem[]; withEmbedding?: boolean }; output: MemoryView[] };
  /** A conversation's messages (items with conversationId), in order, idempotent by messageId. */
  ingest: { input: { items: RememberItem[] }; output: IngestOutput };
  get: { input: { id: string; withEmbedding: boolean }; output: MemoryView };
  batchGet: { input: { ids: string[]; withEmbedding: boolean }; output: MemoryView[] };
  list: { input: ListInput; output: ListOutput };
  revise: { input: ReviseInput; output: MemoryView };
  forget: { input: ForgetCriteria; output: ForgetResult };
  recall: { input: RecallInput; output: RecallOutput };
  /** One access of each memory named (a reranked recall's first result: verbs/recall-rerank). */
  access: { input: { ids: string[] }; output: { accessed: number } };
  /** `ttlUs`: the workspace's default TTL, for the memories the upload creates. */
  upload: { input: { files: UploadFile[]; ttlUs?: number }; output: UploadFileResult[] };
  subOpen: { input: SubscriptionSpec; output: { opened: true } };
  reflectGather: { input: GatherInput; output: GatherOutput };
  writeInsights: {
    input: { insights: InsightWrite[] };
    output: { created: string[]; refreshed: string[] };
  };
  pendingContradictions: { input: Record<string, never>; output: PendingContradiction[] };
  commitVerdicts: { input: Verdicts; output: VerdictResult };
  subMatch: { input: { id: number; vector: Float32Array; offset: number }; output: Push[] };
  subClose: { input: { id: number }; output: { closed: boolean } };
  prime: { input: PrimeInput; output: PrimeOutput };
  entities: { input: Record<string, never>; output: string[] };
  insights: {
    input: {
      entityId: string | null;
      minConfidence: number;
      maxResults: number;
      withEmbedding: boolean;
    };
    output: MemoryView[];
  };
  edges: { input: { id: string }; output: { outgoing: Edge[]; incoming: Edge[] } };
  graph: { input: GraphInput; output: { nodes: MemoryView[]; edges: Edge[]; truncated: boolean } };
  count: { input: Record<string, never>; output: number };
  dropWorkspace: { input: Record<string, never>; output: { memories: number } };
  stats: { input: Record<string, never>; output: ShardStats };
  snapshot: { input: Record<string, never>; output: { records: number } };
  backup: { input: { dir: string }; output: BackupResult };
  exportPage: {
    input: ExportPageInput;
    output: { lines: ExportLine[]; nextCursor: string | null };
  };
  importItems: { input: { items: ImportItem[] }; output: ImportOutcome[] };
  timeline: { input: TimelineInput; output: TimelineOutput };
  entitySummaries: {
    input: EntitySummariesInput;
    output: { entities: EntitySummary[]; total: number };
  };
  graphOverview: { input: OverviewInput; output: OverviewOutput };
  contradictions: {
    input: { entityId: string | null; limit: number };
    output: ContradictionsOutput;
  };
}

export type ShardMethod = keyof ShardMethods;
export type ShardInput<M extends ShardMethod> = ShardMethods[M]['input'];
export type ShardOutput<M extends ShardMethod> = ShardMethods[M]['output'];

export interface ShardRequest<M extends ShardMethod = ShardMethod> {
  kind: 'request';
  id: number;
  method: M;
  ws: string;
  input: ShardInput<M>;
  /** Tracing is on: the reply carries `took`, when the shard started and ended the work. */
  trace?: true;
  /** A reply larger than this (protocol/reply-size `replyBytes`) is answered with `tooLarge(bytes)` instead. */
  maxReplyBytes?: number;
  /** With `maxReplyBytes`: a reply over it but within this many bytes is kept for a second ask (protocol/reply-size). */
  parkBelow?: number;
  /** The second ask of a reply kept under this token (answered from it, or run again if it is gone). */
  claim?: number;
}

export type ShardReply =
  | {
      kind: 'reply';
      id: number;
      ok: true;
      value: unknown;
      took?: readonly [startMs: number, endMs: number];
      bytes?: number;
    }
  | { kind: 'reply'; id: number; ok: false; code: ErrorCode; message: string };

/** A shard worker's heap (shard/heap-watch). */
export interface ShardHeap {
  /** The old generation in use after the last full collection (0 before the first). */
  liveBytes: number;
  limitBytes: number;
  /** Writes that add to the store are refused. */
  full: boolean;
}

/** Messages a shard sends without being asked. */
/** A shard's figures for the metrics, taken once a second (Shard.takeMetrics). */
export interface ShardMetrics {
  memories: number;
  /** Group commits' and snapshots' durations since the last take. */
  syncMs: number[];
  snapshotMs: number[];
  contradictions: number;
  checksSkipped: number;
  checkBacklog: number;
  indexBacklog: number;
  /** Memories forgotten on expiry since the last take. */
  expired: number;
}

export type ShardEvent =
  | {
      kind: 'ready';
      shard: number;
      memories: number;
      replayedRecords: number;
      recoveryMs: number;
      truncatedTail: string | null;
      /** How long each step of the recovery took (shard/storage RecoveryPhases), when it was local. */
      phasesMs?: Record<string, number>;
    }
  | { kind: 'fatal'; shard: number; message: string }
  /** The shard's local log failed: it refuses every request until it is restarted on its files. */
  | { kind: 'storage-failed'; shard: number; message: string }
  | ({
      kind: 'metrics';
      shard: number;
      /** A shard worker's heap (shard/heap-watch): live after the last full collection, its limit, whether writes are refused. */
      heap?: ShardHeap;
    } & ShardMetrics)
  /** Its heap started or stopped refusing writes (shard/heap-watch). */
  | ({ kind: 'heap'; shard: number } & ShardHeap)
  /** The shard has stopped; `error` says why its final snapshot could not be written. */
  | { kind: 'stopped'; shard: number; error?: string }
  | { kind: 'push'; ws: string; pushes: Push[] };

export type ShardControl = { kind: 'shutdown' };

export interface ShardWorkerData {
  shard: number;
  dir: string;
  durability: 'fsync' | 'os';
  snapshotIntervalS: number;
  snapshotWalBytes: number;
  eraseWithinS: number;
  /** Run the contradiction check after writes (off when absent). */
  contradictions?: boolean;
}
