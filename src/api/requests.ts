/** @module api/requests — one schema per REST body (types only; value limits live in verbs/validate). */
import { Type as T } from '@sinclair/typebox';
import { EDGE_TYPES } from '../model/edge.ts';
import { MEMORY_KINDS } from '../model/memory.ts';
import { NullableTime, Time } from './time.ts';
import { ACTIVITY_ACTIONS } from '../model/activity.ts';

const Kind = T.Union(MEMORY_KINDS.map((k) => T.Literal(k)));

/** A metadata filter; its grammar is checked by recall/filter.ts, which names the offending place. */
const Filter = T.Record(T.String(), T.Unknown(), {
  description:
    'Metadata filter: {FIELD: value} for equality, {FIELD: {$eq|$ne|$in|$nin|$gt|$gte|$lt|$lte|$exists: …}}, {$and: [filter…]}, {$or: [filter…]}; ' +
    'several keys combine with AND. FIELD: importance, created_at, occurred_at, updated_at, last_accessed_at, access_count, kind, entity_id, speaker, conversation_id, message_id or context.KEY[.KEY…]. ' +
    'The four times compare as integer microseconds; a string given for one of them is read as an ISO 8601 time (as in time_range).',
});
const Json = T.Record(T.String(), T.Unknown());
void EDGE_TYPES;

const EdgeSpec = T.Object({
  target_id: T.String(),
  edge_type: T.String(),
  confidence: T.Optional(T.Number()),
});

/** Expiry on remember and revise: seconds from now, or an absolute time; null: never expires. */
const Expiry = {
  ttl_s: T.Optional(T.Union([T.Number(), T.Null()])),
  expires_at_us: T.Optional(NullableTime('When the memory expires (in the future; null: never)')),
  expires_at: T.Optional(NullableTime('Alias of expires_at_us, the name replies use')),
};

/** Event time, speaker and conversation of a write (remember; a message of conversation ingest takes the first two). */
const OccurredAt = Time('When the remembered thing happened (default: now; up to 5 minutes ahead counts as now, later is a 400)');
const Speaker = T.Union([T.String(), T.Null()], { description: 'Who said it (a turn of a conversation)' });

export const RememberBody = T.Object({
  ...Expiry,
  content: T.String(),
  importance: T.Optional(T.Number()),
  context: T.Optional(T.Union([Json, T.Null()])),
  entity_id: T.Optional(T.Union([T.String(), T.Null()])),
  edges: T.Optional(T.Array(EdgeSpec)),
  occurred_at: T.Optional(OccurredAt),
  speaker: T.Optional(Speaker),
  conversation_id: T.Optional(T.Union([T.String(), T.Null()], { description: 'The conversation this is a turn of: linked followed_by to the turn before it' })),
});

export const ExportQuery = T.Object({ embeddings: T.Optional(T.Boolean()) });

/** A memory on an export/import line: the memory JSON, plus its embedding when exported with one. */
const LineMemory = T.Object({
  memory_id: T.Optional(T.String()),
  content: T.String(),
  importance: T.Optional(T.Number()),
  context: T.Optional(T.Union([Json, T.Null()])),
  entity_id: T.Optional(T.Union([T.String(), T.Null()])),
  kind: T.Optional(Kind),
  created_at: T.Optional(Time('Creation time')),
  updated_at: T.Optional(Time('Last revision')),
  last_accessed_at: T.Optional(Time('Last read')),
  access_count: T.Optional(T.Integer({ minimum: 0 })),
  logical_clock: T.Optional(T.Integer({ minimum: 0 })),
  source_memory_ids: T.Optional(T.Array(T.String())),
  superseded_by: T.Optional(T.String()),
  expires_at: T.Optional(NullableTime('Expiry (null: never)')),
  occurred_at: T.Optional(Time('When it happened (default: created_at)')),
  speaker: T.Optional(T.Union([T.String(), T.Null()])),
  conversation_id: T.Optional(T.Union([T.String(), T.Null()])),
  message_id: T.Optional(T.Union([T.String(), T.Null()])),
  /** Base64 of the little-endian float32 vector. */
  embedding: T.Optional(T.String()),
});

/** One NDJSON line of GET /v1/export and POST /v1/import. */
export const TransferLine = T.Object({
  memory: LineMemory,
  versions: T.Optional(T.Array(LineMemory)),
  edges: T.Optional(
    T.Array(
      T.Object({
        source_id: T.String(),
        target_id: T.String(),
        edge_type: T.String(),
        confidence: T.Optional(T.Number()),
        timestamp_us: T.Optional(Time('When the edge was made')),
        reason: T.Optional(T.String({ maxLength: 1000 })),
      }),
    ),
  ),
});

export const BackupBody = T.Object({ to: T.String({ minLength: 1 }) });

export const ImportQuery = T.Object({ first_line: T.Optional(T.Integer({ minimum: 1 })) });

export const BatchBody = T.Object({ memory_ids: T.Array(T.String()) });

/** One message of a conversation ingest. */
const Message = T.Object({
  speaker: T.String({ description: 'Who said it' }),
  content: T.String(),
  occurred_at: T.Optional(OccurredAt),
  importance: T.Optional(T.Number()),
  context: T.Optional(T.Union([Json, T.Null()])),
  message_id: T.Optional(T.Union([T.String(), T.Null()], { description: 'Your id for the message, unique in the conversation: a message whose id the conversation holds is not written again (retries are safe)' })),
});

/** POST /v1/conversations/{conversation_id}/messages: the conversation's new messages, in order. */
export const IngestBody = T.Object({
  ...Expiry,
  messages: T.Array(Message, { description: 'In the order they were said (at most 10,000 a call)' }),
  entity_id: T.Optional(T.Union([T.String(), T.Null()], { description: 'Every message is about this entity' })),
});

export const ReviseBody = T.Object({
  ...Expiry,
  content: T.Optional(T.String()),
  importance: T.Optional(T.Number()),
  context: T.Optional(Json),
  context_mode: T.Optional(T.Union([T.Literal('merge'), T.Literal('replace')])),
  entity_id: T.Optional(T.Union([T.String(), T.Null()])),
  edges: T.Optional(T.Array(EdgeSpec)),
});

export const ForgetBody = T.Object({
  memory_ids: T.Optional(T.Array(T.String())),
  entity_id: T.Optional(T.String()),
  staleness_threshold_us: T.Optional(Time('Forget memories last read before this time (an absolute cutoff)')),
  access_count_floor: T.Optional(T.Number()),
  memory_kind: T.Optional(Kind),
  decay_score_floor: T.Optional(T.Number()),
});

export const CreateWorkspaceBody = T.Object({
  slug: T.String(),
  name: T.Optional(T.String({ maxLength: 200 })),
  default_ttl_s: T.Optional(T.Union([T.Number(), T.Null()])),
});

export const UpdateWorkspaceBody = T.Object({
  name: T.Optional(T.String({ maxLength: 200 })),
  default_ttl_s: T.Optional(T.Union([T.Number(), T.Null()])),
});

export const CreateKeyBody = T.Object({
  workspace: T.String(),
  role: T.Union([T.Literal('admin'), T.Literal('workspace')]),
  label: T.Optional(T.String({ maxLength: 200 })),
});

/** What a list, its total and its timeline match besides entity, kind, superseded versions and filter. */
const ListMatch = {
  q: T.Optional(T.String({ description: "Only memories holding every word of q (whole words, stemmed, as recall's lexical match reads them; current texts only)" })),
  since_us: T.Optional(Time('Created at or after this time')),
  until_us: T.Optional(Time('Created before this time')),
};

export const ListQuery = T.Object({
  filter: T.Optional(T.String({ description: 'A metadata filter as JSON text (see the recall body).' })),
  entity_id: T.Optional(T.String()),
  speaker: T.Optional(T.String({ description: 'Only memories said by this speaker' })),
  conversation_id: T.Optional(T.String({ description: "Only this conversation's turns" })),
  kind: T.Optional(Kind),
  cursor: T.Optional(T.String()),
  limit: T.Optional(T.Integer()),
  include_superseded: T.Optional(T.Boolean()),
  ...ListMatch,
  sort: T.Optional(
    T.Union([T.Literal('created_at'), T.Literal('updated_at'), T.Literal('importance'), T.Literal('access_count'), T.Literal('last_accessed_at')], {
      description: 'What pages are ordered by (default created_at); ties go by id, which sorts by creation',
    }),
  ),
  order: T.Optional(T.Union([T.Literal('asc'), T.Literal('desc')], { description: 'asc (default: oldest or lowest first) or desc' })),
  with_total: T.Optional(T.Boolean({ description: 'Also count every match (total); costs a pass over the matches' })),
});

const Weights = T.Object({
  w_relevance: T.Optional(T.Number()),
  w_recency: T.Optional(T.Number()),
  w_importance: T.Optional(T.Number()),
  w_reinforcement: T.Optional(T.Number()),
  max_age_us: T.Optional(T.Number()),
  reinforcement_cap: T.Optional(T.Number()),
});

const TimeRange = T.Object({
  start_us: T.Optional(Time('Earliest creation time, inclusive')),
  end_us: T.Optional(Time('Latest creation time, inclusive')),
  start: T.Optional(Time('Alias of start_us')),
  end: T.Optional(Time('Alias of end_us')),
});

const StrategyOptions = {
  top_k: T.Optional(T.Integer()),
  ef_search: T.Optional(T.Integer()),
  entity_id: T.Optional(T.String()),
  time_range: T.Optional(TimeRange),
  seed_memory_id: T.Optional(T.String()),
  edge_types: T.Optional(T.Array(T.String())),
  max_depth: T.Optional(T.Integer()),
  analogical_alpha: T.Optional(T.Number()),
};

const MIN_RELEVANCE =
  'Results whose relevance is below it are dropped, so a cue nothing matches can return nothing (default 0). ' +
  'Recalls made only of temporal, or causal from a seed, report relevance 0: a floor drops all of them.';

export const RecallBody = T.Object({
  cue: T.String(),
  filter: T.Optional(Filter),
  strategies: T.Optional(
    T.Array(T.Union([T.String(), T.Object({ strategy: T.String(), ...StrategyOptions })]), {
      description: 'Strategies to run and merge, by name or with options of their own (default ["similarity"])',
    }),
  ),
  strategy: T.Optional(T.String({ description: 'One strategy: an alias of strategies: [strategy] (strategies wins when both are given)' })),
  scoring_weights: T.Optional(Weights),
  cue_context: T.Optional(T.Union([T.String(), Json])),
  similarity_mode: T.Optional(T.Unsafe<'hybrid' | 'dense' | 'lexical'>({ type: 'string', enum: ['hybrid', 'dense', 'lexical'] })),
  min_relevance: T.Optional(T.Number({ minimum: 0, maximum: 1, description: MIN_RELEVANCE })),
  asked_at_us: T.Optional(Time('When the cue is asked (default: now): "last week", "in January" and the recency term are read from it. Memories written later are not hidden')),
  speaker: T.Optional(T.String({ description: 'Only memories said by this speaker (with filter: both must hold)' })),
  conversation_id: T.Optional(T.String({ description: "Only this conversation's turns (with filter: both must hold)" })),
  ...StrategyOptions,
});

export const PrimeBody = T.Object({
  filter: T.Optional(Filter),
  entity_id: T.Optional(T.String()),
  max_memories: T.Optional(T.Integer()),
  similarity_cue: T.Optional(T.String()),
  scoring_weights: T.Optional(Weights),
  recency_window_us: T.Optional(T.Number()),
  context: T.Optional(Json),
  min_relevance: T.Optional(T.Number({ minimum: 0, maximum: 1, description: 'Memories of the similar half whose relevance (cosine) is below it are left out; their places go to recent memories (default 0)' })),
});

export const GraphBody = T.Object({
  center_id: T.String(),
  depth: T.Optional(T.Integer()),
  edge_types: T.Optional(T.Array(T.String())),
  max_nodes: T.Optional(T.Integer()),
  direction: T.Optional(T.Union([T.Literal('out'), T.Literal('in'), T.Literal('both')])),
});

export const InsightsQuery = T.Object({
  entity_id: T.Optional(T.String()),
  min_confidence: T.Optional(T.Number()),
  max_results: T.Optional(T.Integer()),
});

export const SubscribeBody = T.Object({
  filter: T.Optional(Filter),
  entity_id: T.Optional(T.String()),
  kind_filter: T.Optional(T.Array(T.String())),
  confidence_threshold: T.Optional(T.Number()),
  time_scope_us: T.Optional(T.Number()),
  max_pushes_per_chunk: T.Optional(T.Integer()),
});

export const FeedBody = T.Object({ text: T.String() });

export const ScopeBody = T.Object({
  entity_id: T.Optional(T.String()),
  since_us: T.Optional(Time('Only memories created at or after this time (0: all)')),
  since: T.Optional(Time('Alias of since_us')),
});

export const ReflectCommitBody = T.Object({
  session_id: T.String(),
  insights: T.Array(
    T.Object({
      content: T.String(),
      confidence: T.Number(),
      source_memory_ids: T.Array(T.String()),
      tags: T.Optional(T.Array(T.String())),
      cluster_id: T.Optional(T.Integer()),
    }),
  ),
});

export const VerdictsBody = T.Object({
  verdicts: T.Array(
    T.Object({
      pending_id: T.String(),
      verdict: T.String(),
      confidence: T.Number(),
      reasoning: T.Optional(T.String()),
    }),
  ),
});

/** GET /v1/memories/timeline: the list's criteria, counted per hour or day. */
export const TimelineQuery = T.Object({
  filter: T.Optional(T.String({ description: 'A metadata filter as JSON text (see the recall body).' })),
  entity_id: T.Optional(T.String()),
  speaker: T.Optional(T.String({ description: 'Only memories said by this speaker' })),
  conversation_id: T.Optional(T.String({ description: "Only this conversation's turns" })),
  kind: T.Optional(Kind),
  include_superseded: T.Optional(T.Boolean()),
  ...ListMatch,
  bucket: T.Optional(T.Union([T.Literal('hour'), T.Literal('day')], { description: 'Bucket width (default day)' })),
  utc_offset_min: T.Optional(T.Integer({ description: "Minutes east of UTC of the reader's clock, so that days start at local midnight (default 0)" })),
});

export const EntitySummaryQuery = T.Object({
  q: T.Optional(T.String({ description: 'Only entity ids containing this text (case-insensitive)' })),
  sort: T.Optional(T.Union([T.Literal('recent'), T.Literal('memories'), T.Literal('name')], { description: 'recent (default: latest activity first), memories (most first) or name' })),
  limit: T.Optional(T.Integer()),
});

export const GraphOverviewBody = T.Object({
  entity_id: T.Optional(T.String({ description: "An entity's memories and their direct neighbours, instead of the whole workspace" })),
  kind: T.Optional(Kind),
  max_nodes: T.Optional(T.Integer({ description: 'At most this many memories (default 100, at most 500), the most important first' })),
  edge_types: T.Optional(T.Array(T.String())),
});

export const ContradictionsQuery = T.Object({
  entity_id: T.Optional(T.String({ description: 'Only pairs with at least one memory about this entity' })),
  limit: T.Optional(T.Integer({ description: 'At most this many confirmed pairs and this many candidates (default 50, at most 500)' })),
});

export const ActivityQuery = T.Object({
  workspace: T.Optional(T.String({ description: 'Only changes in this workspace' })),
  action: T.Optional(T.Union(ACTIVITY_ACTIONS.map((a) => T.Literal(a)), { description: 'Only this kind of change' })),
  key_id: T.Optional(T.String({ description: 'Only changes made with this key' })),
  cursor: T.Optional(T.String({ description: 'next_cursor of the previous page (older entries)' })),
  limit: T.Optional(T.Integer({ description: 'Entries per page (default 50, at most 500)' })),
});

export const MetricsHistoryQuery = T.Object({
  since_us: T.Optional(Time('Only points starting at or after this time')),
});
