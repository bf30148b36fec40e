/**
 * @module api/replies — what each REST route answers, as TypeBox schemas. They feed the
 * OpenAPI document (and through it the TypeScript client) and the MCP tools' output schemas.
 * Objects stay open (extra properties allowed), so a field added to a reply never breaks a client
 * that validates replies against an older document.
 */
import { Type as T, type TSchema } from '@sinclair/typebox';
import { ERRORS } from '../errors/codes.ts';
import { EDGE_TYPES } from '../model/edge.ts';
import { MEMORY_KINDS } from '../model/memory.ts';
import { IsoTime } from './time.ts';
import { ACTIVITY_ACTIONS } from '../model/activity.ts';

const literals = (values: readonly string[]): TSchema => T.Union(values.map((v) => T.Literal(v)));
const Nullable = <S extends TSchema>(s: S): TSchema => T.Union([s, T.Null()]);
/** A time in whole microseconds (every one the server writes is an integer: clock ms × 1000, or a written time, which must be whole). */
const Us = (description: string): TSchema => T.Integer({ description: `${description} (microseconds since the Unix epoch)` });

export const ErrorBody = T.Object(
  {
    error_code: literals(Object.keys(ERRORS)),
    message: T.String({ description: 'What went wrong, naming the field or value at fault.' }),
  },
  { $id: 'ErrorBody', description: 'Every error answer has this body; the HTTP status follows error_code.' },
);

export const Memory = T.Object(
  {
    memory_id: T.String({ description: '32 lower-case hex characters' }),
    content: T.String(),
    importance: T.Number({ minimum: 0, maximum: 1 }),
    context: T.Record(T.String(), T.Unknown()),
    entity_id: Nullable(T.String()),
    kind: literals(MEMORY_KINDS),
    created_at: Us('When it was written (ids, list order and cursors follow it)'),
    occurred_at: Us('When the remembered thing happened (event time; created_at unless the writer gave one): time windows, recency and temporal recall read it'),
    updated_at: Us('Last revision'),
    last_accessed_at: Us('Last read by recall, prime or get'),
    access_count: T.Integer({ minimum: 0 }),
    decay_score: T.Number({ description: 'importance · 0.5^(days since last access / 30)' }),
    logical_clock: T.Integer({ minimum: 0 }),
    source_memory_ids: T.Optional(T.Array(T.String(), { description: 'Insights: the memories they were drawn from' })),
    superseded_by: T.Optional(T.String({ description: 'Set once a revision replaced this memory' })),
    expires_at: Nullable(Us('When the memory expires and is forgotten (null: never)')),
    created_at_iso: IsoTime('created_at'),
    updated_at_iso: IsoTime('updated_at'),
    last_accessed_at_iso: IsoTime('last_accessed_at'),
    expires_at_iso: Nullable(IsoTime('expires_at (null: never)')),
    occurred_at_iso: IsoTime('occurred_at'),
    speaker: Nullable(T.String({ description: 'Who said it' })),
    conversation_id: Nullable(T.String({ description: 'The conversation it is a turn of' })),
    message_id: Nullable(T.String({ description: "The writer's id for the message in its conversation (conversation ingest)" })),
  },
  { $id: 'Memory' },
);

export const Edge = T.Object(
  {
    source_id: T.String(),
    target_id: T.String(),
    edge_type: literals(EDGE_TYPES),
    confidence: T.Number(),
    timestamp_us: Us('When the edge was made'),
    timestamp_iso: IsoTime('timestamp_us'),
    reason: T.Optional(T.String({ description: 'Edges the contradiction check made: the rule that fired, e.g. "negation scope: one statement says there is no such thing"' })),
  },
  { $id: 'Edge' },
);

const ref = (s: { $id?: string }): TSchema => T.Ref(s.$id ?? '');

export const MemoryList = T.Array(ref(Memory));
export const MemoryPage = T.Object({
  memories: T.Array(ref(Memory)),
  next_cursor: Nullable(T.String()),
  total: T.Optional(T.Integer({ description: 'Every memory the query matches (with_total=true)' })),
});
export const Edges = T.Object({ outgoing: T.Array(ref(Edge)), incoming: T.Array(ref(Edge)) });
export const ForgetResult = T.Object({
  forgotten_count: T.Integer(),
  cascade_count: T.Integer({ description: 'Derived memories removed with them (insights, propositions)' }),
  truncated: T.Boolean(),
  tombstone_count: T.Integer(),
});

const StrategyDetail = T.Union(
  [
    T.Object({
      strategy: T.Literal('similarity'),
      relevance: T.Number({ description: 'The similarity relevance in [0, 1] (hybrid: the calibrated blend; dense: the cosine; lexical: the lexical share)' }),
      distance: T.Number({ description: '1 − relevance' }),
      cosine: T.Number({ description: 'Cosine of cue and memory, clamped to [0, 1]' }),
      lexical: T.Number({ description: "IDF-weighted share of the cue's words the memory holds, in [0, 1]" }),
      named: T.Optional(T.Number({ description: "Hybrid, when the cue names an entity or context value of some candidate: 1 when it names this memory's entity or a context value written like a name, else 0" })),
      reply: T.Optional(T.Number({ description: 'Hybrid, when some candidate follows a question (a memory asking something, written just before it) that matches the cue better than it does: by how much that question matches better, in [0, 1]; 0 for the others' })),
    }),
    T.Object({ strategy: T.Literal('temporal'), timestamp: T.Integer({ description: "The memory's created_at (µs)" }), timestamp_iso: IsoTime('timestamp'), rank: T.Integer() }),
    T.Object({ strategy: T.Literal('causal'), depth: T.Integer(), edge_type: T.String(), seed_id: T.String() }),
    T.Object({ strategy: T.Literal('analogical'), embedding_similarity: T.Number(), structural_similarity: T.Number() }),
  ],
  { description: 'Per-strategy evidence, one object per strategy that found the memory.' },
);

export const RecallHit = T.Object(
  {
    memory: ref(Memory),
    score: T.Number(),
    relevance: T.Number(),
    strategy_details: T.Array(StrategyDetail),
    contradicted_by: T.Optional(T.Array(T.String())),
  },
  { $id: 'RecallHit' },
);

export const RecallResult = T.Object({
  results: T.Array(ref(RecallHit)),
  strategy_errors: T.Array(T.Object({ strategy: T.String(), message: T.String() })),
});

export const PrimeResult = T.Object({
  results: T.Array(ref(RecallHit)),
  temporal_count: T.Integer(),
  similarity_count: T.Integer(),
});

export const GraphResult = T.Object({ nodes: T.Array(ref(Memory)), edges: T.Array(ref(Edge)), truncated: T.Boolean() });

export const UploadResult = T.Object({
  uploaded: T.Integer(),
  files: T.Array(
    T.Object({
      file_path: T.String(),
      document_id: T.String(),
      propositions: T.Integer(),
      status: literals(['created', 'updated', 'unchanged']),
    }),
  ),
});

export const Empty = T.Object({});

export const ReflectResult = T.Object({
  insights_created: T.Integer(),
  insights_refreshed: T.Integer(),
  clusters_found: T.Integer(),
  clusters_processed: T.Integer(),
  memories_processed: T.Integer(),
});

export const ReflectPrepareResult = T.Object({
  session_id: T.String(),
  memories_processed: T.Integer(),
  existing_insight_count: T.Integer(),
  clusters: T.Array(
    T.Object({
      cluster_id: T.Integer(),
      member_count: T.Integer(),
      proposal_system_prompt: T.String(),
      proposal_user_prompt: T.String(),
      memory_ids: T.Array(T.String()),
      validation_context: T.String(),
      memories: T.Array(T.Object({ memory_id: T.String(), content: T.String(), importance: T.Number(), entity_id: Nullable(T.String()), created_at: T.Number(), created_at_iso: IsoTime('created_at') })),
    }),
  ),
});

export const ReflectCommitResult = T.Object({ insights_created: T.Integer() });

export const PendingContradictions = T.Array(
  T.Object({
    pending_id: T.String(),
    memory_id_a: T.String(),
    memory_id_b: T.String(),
    content_a_snippet: T.String(),
    content_b_snippet: T.String(),
    classifier_score: T.Number(),
    classifier_method: literals(['heuristic', 'llm']),
    similarity: T.Number(),
    created_at: T.Number(),
    created_at_iso: IsoTime('created_at'),
    proposed: literals(['contradiction', 'revision']),
    reason: T.Optional(T.String({ description: 'The rule that fired, e.g. "antonyms (WordNet): \'warm\' versus \'cold\'"' })),
  }),
);

export const VerdictResult = T.Object({ contradictions_confirmed: T.Integer(), revisions_created: T.Integer(), dismissed: T.Integer() });

export const Entities = T.Array(T.String());

const Role = literals(['admin', 'workspace']);
export const Workspace = T.Object(
  { slug: T.String(), name: T.String(), created_at: Us('Creation time'), created_at_iso: IsoTime('created_at'), default_ttl_s: T.Optional(Nullable(T.Number({ description: 'Default time to live of new memories, in seconds' }))) },
  { $id: 'Workspace' },
);
export const IngestResult = T.Object({
  conversation_id: T.String(),
  memory_ids: T.Array(T.String(), { description: 'One per message, in the order sent: the memory written, or the one a message with the same message_id already is' }),
  created: T.Integer({ description: 'Messages this call wrote' }),
  existing: T.Integer({ description: 'Messages whose message_id the conversation already held (not written again)' }),
});

export const ImportSummary = T.Object({
  lines: T.Integer(),
  imported: T.Integer(),
  skipped: T.Integer({ description: 'Memories already present (same id)' }),
  expired: T.Integer({ description: 'Lines whose memory had already expired' }),
  error_count: T.Integer(),
  errors: T.Array(T.Object({ line: T.Integer(), message: T.String() })),
});
export const BackupSummary = T.Object({
  to: T.String(),
  started_at: T.Integer(),
  started_at_iso: IsoTime('started_at'),
  finished_at: T.Integer(),
  finished_at_iso: IsoTime('finished_at'),
  shards: T.Array(T.Object({ shard: T.Integer(), memories: T.Integer(), bytes: T.Integer() })),
});
export const WorkspaceWithCount = T.Object({
  slug: T.String(),
  name: T.String(),
  created_at: Us('Creation time'),
  created_at_iso: IsoTime('created_at'),
  default_ttl_s: T.Optional(Nullable(T.Number())),
  memory_count: T.Integer(),
});
export const WorkspaceList = T.Object({ workspaces: T.Array(WorkspaceWithCount) });
export const WorkspaceCreated = T.Object({ workspace: ref(Workspace), api_key: T.String({ description: 'Shown only in this answer' }), key_id: T.String() });
export const WorkspaceDeleted = T.Object({ deleted: T.String(), memories_deleted: T.Integer(), keys_revoked: T.Integer() });

export const KeyInfo = T.Object(
  { key_id: T.String(), role: Role, workspace: T.String(), label: Nullable(T.String()), created_at: Us('Creation time'), created_at_iso: IsoTime('created_at') },
  { $id: 'KeyInfo' },
);
export const KeyList = T.Object({ keys: T.Array(ref(KeyInfo)) });
export const KeyCreated = T.Intersect([ref(KeyInfo), T.Object({ api_key: T.String({ description: 'Shown only in this answer' }) })]);
export const KeyRevoked = T.Object({ revoked: ref(KeyInfo) });

export const Whoami = T.Object({
  key_id: Nullable(T.String()),
  role: Role,
  workspace: T.Object({ slug: T.String(), name: T.String() }),
  can_access: T.Union([T.Literal('all'), T.Array(T.String())]),
  auth_enabled: T.Boolean(),
});

const PartitionStatus = literals(['recovering', 'ready', 'releasing', 'unowned', 'unknown']);
export const ClusterStatus = T.Object({
  node: T.String({ description: 'The node that answered' }),
  cluster: T.String(),
  partitions: T.Integer(),
  replicas: T.Integer(),
  lease_ms: T.Integer(),
  nodes: T.Array(T.Object({ id: T.String(), started_at: T.String(), partitions: T.Array(T.Integer()), self: T.Boolean() })),
  partition_owners: T.Array(
    T.Object({
      partition: T.Integer(),
      owner: Nullable(T.String()),
      status: PartitionStatus,
      stream_last_seq: T.Integer({ description: 'Last sequence of the partition stream (its write-ahead log)' }),
      applied_seq: Nullable(T.Integer({ description: 'Last sequence the owner has applied, as of its last heartbeat' })),
      lag: Nullable(T.Integer()),
    }),
  ),
});

export const Health = T.Object({ status: literals(['alive', 'ready', 'not_ready']), reason: T.Optional(T.String()) });

/** The events of a subscription's SSE stream, by SSE event name (`message` is the unnamed push). */
export const SubscribeEvents = {
  subscribed: T.Object({ subscription_id: T.Integer() }),
  message: T.Object(
    {
      subscription_id: T.Integer(),
      memory: ref(Memory),
      score: T.Number(),
      confidence: T.Number(),
      strategy: T.Literal('similarity'),
      chunk_offset: Nullable(T.Integer()),
      sequence_number: T.Integer(),
      push_timestamp_us: T.Number(),
      push_timestamp_iso: IsoTime('push_timestamp_us'),
    },
    { $id: 'Push' },
  ),
  closed: T.Object({ reason: literals(['closed', 'shutdown', 'revoked']) }),
} as const;

export const Timeline = T.Object({
  bucket: literals(['hour', 'day']),
  bucket_us: T.Integer({ description: 'Bucket width in microseconds' }),
  buckets: T.Array(T.Object({ start_us: Us('Start of the bucket'), start_iso: IsoTime('start_us'), count: T.Integer() }), { description: 'Buckets holding at least one match, oldest first' }),
  total: T.Integer(),
});

export const EntitySummaries = T.Object({
  entities: T.Array(
    T.Object({
      entity_id: T.String(),
      memory_count: T.Integer({ description: 'Live memories about the entity (superseded versions not counted)' }),
      first_at: Us('The oldest one was created'),
      last_at: Us('The latest creation or revision among them'),
      first_at_iso: IsoTime('first_at'),
      last_at_iso: IsoTime('last_at'),
      kinds: T.Record(T.String(), T.Integer(), { description: 'Memories by kind' }),
    }),
  ),
  total: T.Integer({ description: 'Entities matching q (the page holds at most limit)' }),
});

export const GraphOverview = T.Object({
  nodes: T.Array(ref(Memory)),
  edges: T.Array(ref(Edge)),
  total_nodes: T.Integer({ description: 'Memories the overview chose from: the workspace, or the entity and its neighbours' }),
  truncated: T.Boolean({ description: 'Fewer nodes than total_nodes (max_nodes reached)' }),
});

export const Contradictions = T.Object({
  confirmed: T.Array(
    T.Object({ a: ref(Memory), b: ref(Memory), confidence: T.Number(), reason: Nullable(T.String({ description: 'The rule that made the edge, when the checker did' })), timestamp_us: Us('When the edge was made'), timestamp_iso: IsoTime('timestamp_us') }),
  ),
  pending: T.Array(
    T.Object({
      pending_id: T.String(),
      a: ref(Memory),
      b: ref(Memory),
      classifier_score: T.Number(),
      classifier_method: literals(['heuristic', 'llm']),
      similarity: T.Number(),
      proposed: literals(['contradiction', 'revision']),
      reason: Nullable(T.String({ description: 'The rule that raised the candidate' })),
      created_at: Us('When the candidate was raised'),
      created_at_iso: IsoTime('created_at'),
    }),
  ),
  truncated: T.Boolean({ description: 'More pairs or candidates exist than limit' }),
});

export const Activity = T.Object({
  entries: T.Array(
    T.Object({
      seq: T.Integer({ description: 'Position in the log (newer entries have higher numbers)' }),
      at_us: Us('When the change was made'),
      at_iso: IsoTime('at_us'),
      action: literals(ACTIVITY_ACTIONS),
      workspace: T.String(),
      key_id: Nullable(T.String({ description: 'The key that made the change (null: authentication off)' })),
      key_label: Nullable(T.String()),
      count: T.Integer({ description: 'Memories (or keys, workspaces) the change touched' }),
      memories: T.Array(
        T.Object({
          memory_id: T.String(),
          content: T.Optional(Nullable(T.String({ description: 'The content now, clipped to 200 characters; null once forgotten; absent where the key may not read the workspace' }))),
        }),
        { description: 'The first 20 memories the change touched' },
      ),
      detail: Nullable(T.String({ description: 'Criteria, key ids, file names: never memory content' })),
    }),
  ),
  next_cursor: Nullable(T.String()),
  capacity: T.Integer({ description: 'Entries the log keeps (the oldest go first); it lives in memory and starts empty at each start' }),
});

const HistoryPoint = T.Object({
  start_us: Us('Start of the interval'),
  start_iso: IsoTime('start_us'),
  seconds: T.Number({ description: 'Length of the interval (the open one: so far)' }),
  ops: T.Record(
    T.String(),
    T.Object({
      count: T.Integer(),
      errors: T.Integer({ description: 'Requests answered with an error' }),
      p50_ms: T.Number(),
      p95_ms: T.Number(),
      p99_ms: T.Number(),
      max_ms: T.Number(),
    }),
    { description: "Requests by operation (gRPC ones prefixed 'grpc '), with percentiles and maximum of the successful ones' own durations (every one, or a uniform sample of 1,000 in a busier interval)" },
  ),
  gauges: T.Record(T.String(), T.Number(), {
    description: 'At the end of the interval: memories, embedding_queue, contradiction_checks, vector_index, open_subscriptions, connections, shards, shards_down, shards_storage_failed, shards_memory_full, rss_mb',
  }),
});

export const MetricsHistory = T.Object({
  interval_s: T.Number(),
  capacity: T.Integer({ description: 'Points kept (an hour); the history lives in memory and starts empty at each start' }),
  points: T.Array(HistoryPoint, { description: 'Closed intervals, oldest first' }),
  current: HistoryPoint,
});

/** Schemas with an `$id`, published under components/schemas and referenced by name. */
export const NAMED_SCHEMAS: readonly TSchema[] = [ErrorBody, Memory, Edge, RecallHit, Workspace, KeyInfo, SubscribeEvents.message];

export const JsonRpcReply = T.Object(
  { jsonrpc: T.Literal('2.0'), id: T.Optional(T.Union([T.String(), T.Number(), T.Null()])) },
  { description: 'A JSON-RPC 2.0 answer (an MCP result or error); 202 with no body for notifications.' },
);

export const OpenApiDocument = T.Object({ openapi: T.String(), info: T.Object({ title: T.String(), version: T.String() }), paths: T.Record(T.String(), T.Unknown()) });
