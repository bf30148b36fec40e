/**
 * @module api/requests — one schema per REST body and query. Each states the limits the server
 * enforces (ranges, lengths, patterns, enums, required and exclusive fields, item counts: the
 * numbers are model/limits'), so the OpenAPI document generated from them is the validation; what
 * JSON Schema cannot say (UTF-8 byte limits, a time that must be in the future, start before end)
 * is in the description, and verbs/validate checks it, naming the field.
 */
import { Type as T } from '@sinclair/typebox';
import { LIMITS, RANGES, SLUG_RE } from '../model/limits.ts';
import { MEMORY_KINDS } from '../model/memory.ts';
import { EdgeTypeName, EdgeTypes, JsonObject, MemoryId, Name, NameOrNone, StrategyName, Text, Ttl, Unit } from './fields.ts';
import { NullableTime, Time } from './time.ts';
import { ACTIVITY_ACTIONS } from '../model/activity.ts';

const Kind = T.Union(MEMORY_KINDS.map((k) => T.Literal(k)));

/** A metadata filter; its grammar is checked by recall/filter.ts, which names the offending place. */
const Filter = T.Record(T.String(), T.Unknown(), {
  description:
    'Metadata filter: {FIELD: value} for equality, {FIELD: {$eq|$ne|$in|$nin|$gt|$gte|$lt|$lte|$exists: …}}, {$and: [filter…]}, {$or: [filter…]}; ' +
    'several keys combine with AND. FIELD: importance, created_at, occurred_at, updated_at, last_accessed_at, access_count, kind, entity_id, speaker, conversation_id, message_id or context.KEY[.KEY…]. ' +
    'The four times compare as integer microseconds; a string given for one of them is read as an ISO 8601 time (as in time_range). ' +
    'The server checks the grammar and names the place at fault (the schema leaves it open: spelled out, it would be most of this document).',
});
const Json = JsonObject('Context');
/** The filter in a query string: its JSON text (the server parses and checks it). */
const FilterText = T.String({ description: "A metadata filter as JSON text (the grammar of the recall body's filter); the server checks it and names the place at fault" });

const EdgeSpec = T.Object({
  target_id: MemoryId,
  edge_type: EdgeTypeName,
  confidence: T.Optional(Unit('How sure the edge is (default 1)')),
});

/** Expiry on remember and revise: seconds from now, or an absolute time; null: never expires. */
const Expiry = {
  ttl_s: T.Optional(T.Union([Ttl('Time to live'), T.Null()])),
  expires_at_us: T.Optional(NullableTime('When the memory expires (in the future, within 100 years; null: never)')),
  expires_at: T.Optional(NullableTime('Alias of expires_at_us, the name replies use')),
};

/**
 * (Constraints between fields sit in `allOf`: a generator that reads an object's own `anyOf` as
 * other shapes, as openapi-typescript does, still sees the object.)
 *
 * Fields of which at most one may be given (as a non-null value): ttl_s and the expiry, a field and
 * its alias. JSON Schema states it with `not`; the server's message names both.
 */
function notBoth(a: string, b: string, nullMeansUnset = false): Record<string, unknown> {
  const given = nullMeansUnset ? { not: { type: 'null' } } : {};
  return { not: { required: [a, b], properties: { [a]: given, [b]: given } } };
}
const EXPIRY_RULES = [notBoth('ttl_s', 'expires_at_us', true), notBoth('ttl_s', 'expires_at', true), notBoth('expires_at_us', 'expires_at')];

/** Event time, speaker and conversation of a write (remember; a message of conversation ingest takes the first two). */
const OccurredAt = Time('When the remembered thing happened (default: now; up to 5 minutes ahead counts as now, later is a 400)');
const Speaker = T.Union([Name(), T.Null()], { description: 'Who said it (a turn of a conversation)' });

export const RememberBody = T.Object({
  ...Expiry,
  content: Text('The memory'),
  importance: T.Optional(Unit('Importance (default 0.5)')),
  context: T.Optional(T.Union([Json, T.Null()])),
  entity_id: T.Optional(T.Union([Name('Who or what it is about'), T.Null()])),
  edges: T.Optional(T.Array(EdgeSpec)),
  occurred_at: T.Optional(OccurredAt),
  speaker: T.Optional(Speaker),
  conversation_id: T.Optional(T.Union([Name(), T.Null()], { description: 'The conversation this is a turn of: linked followed_by to the turn before it' })),
}, { allOf: EXPIRY_RULES });

export const ExportQuery = T.Object({ embeddings: T.Optional(T.Boolean()) });

/** A memory on an export/import line: the memory JSON, plus its embedding when exported with one. */
const LineMemory = T.Object({
  memory_id: T.Optional(MemoryId),
  content: Text('The memory'),
  importance: T.Optional(Unit()),
  context: T.Optional(T.Union([Json, T.Null()])),
  entity_id: T.Optional(T.Union([Name(), T.Null()])),
  kind: T.Optional(Kind),
  created_at: T.Optional(Time('Creation time')),
  updated_at: T.Optional(Time('Last revision')),
  last_accessed_at: T.Optional(Time('Last read')),
  access_count: T.Optional(T.Integer({ minimum: 0 })),
  logical_clock: T.Optional(T.Integer({ minimum: 0 })),
  source_memory_ids: T.Optional(T.Array(MemoryId)),
  superseded_by: T.Optional(MemoryId),
  expires_at: T.Optional(NullableTime('Expiry (null: never)')),
  occurred_at: T.Optional(Time('When it happened (default: created_at)')),
  speaker: T.Optional(T.Union([Name(), T.Null()])),
  conversation_id: T.Optional(T.Union([Name(), T.Null()])),
  message_id: T.Optional(T.Union([Name(), T.Null()])),
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
        source_id: MemoryId,
        target_id: MemoryId,
        edge_type: EdgeTypeName,
        confidence: T.Optional(Unit()),
        timestamp_us: T.Optional(Time('When the edge was made')),
        reason: T.Optional(T.String({ maxLength: 1000 })),
      }),
    ),
  ),
});

export const BackupBody = T.Object({ to: T.String({ minLength: 1, pattern: '^/', description: "An absolute path on the server's machine: an empty directory, or one to create" }) });

export const ImportQuery = T.Object({ first_line: T.Optional(T.Integer({ minimum: 1 })) });

export const BatchBody = T.Object({ memory_ids: T.Array(T.String({ description: 'A memory id (unknown and malformed ids are skipped)' }), { maxItems: LIMITS.batchIds }) });

/** What revise needs at least one of (edges: at least one edge). */
const REVISABLE = ['content', 'importance', 'context', 'entity_id', 'ttl_s', 'expires_at_us', 'expires_at'].map((f) => ({ required: [f] }));

/** One message of a conversation ingest. */
const Message = T.Object({
  speaker: Name('Who said it'),
  content: Text('The message'),
  occurred_at: T.Optional(OccurredAt),
  importance: T.Optional(Unit('Importance (default 0.5)')),
  context: T.Optional(T.Union([Json, T.Null()])),
  message_id: T.Optional(T.Union([Name(), T.Null()], { description: 'Your id for the message, unique in the conversation (and in the call): a message whose id the conversation holds is not written again (retries are safe)' })),
});

/** POST /v1/conversations/{conversation_id}/messages: the conversation's new messages, in order. */
export const IngestBody = T.Object({
  ...Expiry,
  messages: T.Array(Message, { minItems: 1, maxItems: LIMITS.messagesPerCall, description: `In the order they were said (1 to ${LIMITS.messagesPerCall.toLocaleString('en')} a call)` }),
  entity_id: T.Optional(T.Union([Name(), T.Null()], { description: 'Every message is about this entity' })),
}, { allOf: EXPIRY_RULES });

export const ReviseBody = T.Object({
  ...Expiry,
  content: T.Optional(Text('The new content')),
  importance: T.Optional(Unit()),
  context: T.Optional(Json),
  context_mode: T.Optional(T.Union([T.Literal('merge'), T.Literal('replace')])),
  entity_id: T.Optional(T.Union([Name(), T.Null()], { description: 'The new entity (null clears it)' })),
  edges: T.Optional(T.Array(EdgeSpec)),
}, { allOf: [{ anyOf: [...REVISABLE, { required: ['edges'], properties: { edges: { minItems: 1 } } }] }, ...EXPIRY_RULES], description: 'At least one of content, importance, context, entity_id, edges (one or more), ttl_s, expires_at_us / expires_at' });

const FORGET_CRITERIA = ['memory_ids', 'entity_id', 'staleness_threshold_us', 'access_count_floor', 'memory_kind', 'decay_score_floor'];

export const ForgetBody = T.Object({
  memory_ids: T.Optional(T.Array(MemoryId, { maxItems: LIMITS.forgetPerCall })),
  entity_id: T.Optional(Name()),
  staleness_threshold_us: T.Optional(Time('Forget memories last read before this time (an absolute cutoff)')),
  access_count_floor: T.Optional(T.Number({ minimum: 0, description: 'Forget memories read fewer times than this' })),
  memory_kind: T.Optional(Kind),
  decay_score_floor: T.Optional(T.Number({ minimum: 0, description: 'Forget memories whose decay score is below this' })),
}, { allOf: [{ anyOf: FORGET_CRITERIA.map((f) => ({ required: [f] })) }], description: 'Memories matching every criterion given; at least one criterion' });

const Slug = T.String({ pattern: SLUG_RE.source, description: 'A workspace slug: lower-case letters, digits, _ and -, 1 to 63 characters, starting with a letter or digit' });

export const CreateWorkspaceBody = T.Object({
  slug: Slug,
  name: T.Optional(T.String({ maxLength: 200 })),
  default_ttl_s: T.Optional(T.Union([Ttl('Default time to live of new memories'), T.Null()])),
});

export const UpdateWorkspaceBody = T.Object({
  name: T.Optional(T.String({ maxLength: 200 })),
  default_ttl_s: T.Optional(T.Union([Ttl('Default time to live of new memories'), T.Null()], { description: 'null removes it' })),
}, { allOf: [{ anyOf: [{ required: ['name'] }, { required: ['default_ttl_s'] }] }], description: 'At least one of name and default_ttl_s' });

export const CreateKeyBody = T.Object({
  workspace: Slug,
  role: T.Union([T.Literal('admin'), T.Literal('workspace')]),
  label: T.Optional(T.String({ maxLength: 200 })),
});

/** What a list, its total and its timeline match besides entity, kind, superseded versions and filter. */
const ListMatch = {
  q: T.Optional(T.String({ maxLength: LIMITS.cueBytes, description: "Only memories holding every word of q (whole words, stemmed, as recall's lexical match reads them; current texts only)" })),
  since_us: T.Optional(Time('Created at or after this time')),
  until_us: T.Optional(Time('Created before this time')),
};

export const ListQuery = T.Object({
  filter: T.Optional(FilterText),
  entity_id: T.Optional(Name()),
  speaker: T.Optional(Name('Only memories said by this speaker')),
  conversation_id: T.Optional(Name("Only this conversation's turns")),
  kind: T.Optional(Kind),
  cursor: T.Optional(T.String({ maxLength: 200, description: 'next_cursor of the previous page of the same query (sorted by created_at: a memory id)' })),
  limit: T.Optional(T.Integer({ minimum: 1, description: `Memories per page (default ${LIMITS.listDefault}; above ${LIMITS.listLimit} counts as ${LIMITS.listLimit})` })),
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
  w_relevance: T.Optional(T.Number({ minimum: 0 })),
  w_recency: T.Optional(T.Number({ minimum: 0 })),
  w_importance: T.Optional(T.Number({ minimum: 0 })),
  w_reinforcement: T.Optional(T.Number({ minimum: 0 })),
  max_age_us: T.Optional(T.Number({ minimum: 0, description: 'Age at which recency reaches 0, in µs (0: the default, 30 days)' })),
  reinforcement_cap: T.Optional(T.Number({ minimum: 0, description: 'Access count at which reinforcement saturates (0: the default)' })),
});

const TimeRange = T.Object({
  start_us: T.Optional(Time('Earliest creation time, inclusive')),
  end_us: T.Optional(Time('Latest creation time, inclusive')),
  start: T.Optional(Time('Alias of start_us')),
  end: T.Optional(Time('Alias of end_us')),
}, { allOf: [notBoth('start_us', 'start'), notBoth('end_us', 'end')], description: 'A window of creation times (start not after end: the server checks)' });

const StrategyOptions = {
  top_k: T.Optional(T.Integer({ minimum: RANGES.topK[0], maximum: RANGES.topK[1], description: 'Results (default 10)' })),
  ef_search: T.Optional(T.Integer({ minimum: RANGES.efSearch[0], maximum: RANGES.efSearch[1], description: 'HNSW search breadth (default 50)' })),
  entity_id: T.Optional(Name('Only memories about this entity')),
  time_range: T.Optional(TimeRange),
  seed_memory_id: T.Optional(MemoryId),
  edge_types: T.Optional(EdgeTypes),
  max_depth: T.Optional(T.Integer({ minimum: 1, description: 'Causal hops (default 5; above 10 counts as 10)' })),
  analogical_alpha: T.Optional(Unit('Analogical: weight of the embedding against structure (default 0.5)')),
};

const MIN_RELEVANCE =
  'Results whose relevance is below it are dropped, so a cue nothing matches can return nothing (default 0). ' +
  'Recalls made only of temporal, or causal from a seed, report relevance 0: a floor drops all of them.';

export const RecallBody = T.Object({
  cue: Text('The cue', LIMITS.cueBytes),
  filter: T.Optional(Filter),
  strategies: T.Optional(
    T.Array(T.Union([StrategyName, T.Object({ strategy: StrategyName, ...StrategyOptions })]), {
      minItems: 1,
      description: 'Strategies to run and merge, by name or with options of their own (default ["similarity"])',
    }),
  ),
  strategy: T.Optional(T.Unsafe<string>({ ...StrategyName, description: 'One strategy: an alias of strategies: [strategy] (strategies wins when both are given)' })),
  scoring_weights: T.Optional(Weights),
  cue_context: T.Optional(T.Union([T.String(), JsonObject('Cue context')])),
  similarity_mode: T.Optional(T.Unsafe<'hybrid' | 'dense' | 'lexical'>({ type: 'string', enum: ['hybrid', 'dense', 'lexical'] })),
  min_relevance: T.Optional(T.Number({ minimum: 0, maximum: 1, description: MIN_RELEVANCE })),
  asked_at_us: T.Optional(Time('When the cue is asked (default: now): "last week", "in January" and the recency term are read from it. Memories written later are not hidden')),
  speaker: T.Optional(Name('Only memories said by this speaker (with filter: both must hold)')),
  conversation_id: T.Optional(Name("Only this conversation's turns (with filter: both must hold)")),
  ...StrategyOptions,
});

export const PrimeBody = T.Object({
  filter: T.Optional(Filter),
  entity_id: T.Optional(NameOrNone()),
  max_memories: T.Optional(T.Integer({ minimum: RANGES.maxMemories[0], maximum: RANGES.maxMemories[1], description: 'Memories (default 20)' })),
  similarity_cue: T.Optional(T.String({ maxLength: LIMITS.cueBytes, description: `At most ${LIMITS.cueBytes / 1024} KiB as UTF-8` })),
  scoring_weights: T.Optional(Weights),
  recency_window_us: T.Optional(T.Number({ minimum: 0, description: 'How far back the recent half looks, in µs (default and 0: 7 days)' })),
  context: T.Optional(Json),
  min_relevance: T.Optional(T.Number({ minimum: 0, maximum: 1, description: 'Memories of the similar half whose relevance (cosine) is below it are left out; their places go to recent memories (default 0)' })),
});

export const GraphBody = T.Object({
  center_id: MemoryId,
  depth: T.Optional(T.Integer({ minimum: 0, description: 'Hops (default 2; above 5 counts as 5)' })),
  edge_types: T.Optional(EdgeTypes),
  max_nodes: T.Optional(T.Integer({ minimum: 1, description: 'Memories (default 100; above 500 counts as 500)' })),
  direction: T.Optional(T.Union([T.Literal('out'), T.Literal('in'), T.Literal('both')])),
});

export const InsightsQuery = T.Object({
  entity_id: T.Optional(NameOrNone()),
  min_confidence: T.Optional(Unit('Only insights at least this confident (default 0)')),
  max_results: T.Optional(T.Integer({ minimum: 1, description: 'Insights (default 100; above 1000 counts as 1000)' })),
});

export const SubscribeBody = T.Object({
  filter: T.Optional(Filter),
  entity_id: T.Optional(NameOrNone()),
  kind_filter: T.Optional(T.Array(T.Unsafe<string>({ type: 'string', pattern: `^(${MEMORY_KINDS.map((k) => [...k].map((c) => `[${c}${c.toUpperCase()}]`).join('')).join('|')})$`, description: 'A memory kind (any case)' }))),
  confidence_threshold: T.Optional(Unit('Push memories at least this relevant (default 0.5)')),
  time_scope_us: T.Optional(T.Number({ minimum: 0, description: 'Only memories created within this many µs (0: any)' })),
  max_pushes_per_chunk: T.Optional(T.Integer({ minimum: RANGES.maxPushesPerChunk[0], maximum: RANGES.maxPushesPerChunk[1], description: 'Pushes per fed chunk (default 5)' })),
});

export const FeedBody = T.Object({ text: T.String({ maxLength: LIMITS.cueBytes, description: `Text the agent is reading or writing; at most ${LIMITS.cueBytes / 1024} KiB as UTF-8` }) });

export const ScopeBody = T.Object({
  entity_id: T.Optional(NameOrNone()),
  since_us: T.Optional(Time('Only memories created at or after this time (0: all)')),
  since: T.Optional(Time('Alias of since_us')),
}, { allOf: [notBoth('since_us', 'since')] });

export const ReflectCommitBody = T.Object({
  session_id: T.String(),
  insights: T.Array(
    T.Object({
      content: T.String(),
      confidence: Unit(),
      source_memory_ids: T.Array(MemoryId),
      tags: T.Optional(T.Array(T.String())),
      cluster_id: T.Optional(T.Integer()),
    }),
  ),
});

export const VerdictsBody = T.Object({
  verdicts: T.Array(
    T.Object({
      pending_id: T.String({ pattern: '^[0-9a-fA-F]{32}$' }),
      verdict: T.Unsafe<string>({ type: 'string', pattern: '^([cC][oO][nN][tT][rR][aA][dD][iI][cC][tT][iI][oO][nN]|[rR][eE][vV][iI][sS][iI][oO][nN]|[dD][iI][sS][mM][iI][sS][sS])$', description: 'contradiction, revision or dismiss (any case)' }),
      confidence: Unit(),
      reasoning: T.Optional(T.String()),
    }),
  ),
});

/** GET /v1/memories/timeline: the list's criteria, counted per hour or day. */
export const TimelineQuery = T.Object({
  filter: T.Optional(FilterText),
  entity_id: T.Optional(Name()),
  speaker: T.Optional(Name('Only memories said by this speaker')),
  conversation_id: T.Optional(Name("Only this conversation's turns")),
  kind: T.Optional(Kind),
  include_superseded: T.Optional(T.Boolean()),
  ...ListMatch,
  bucket: T.Optional(T.Union([T.Literal('hour'), T.Literal('day')], { description: 'Bucket width (default day)' })),
  utc_offset_min: T.Optional(T.Integer({ minimum: RANGES.utcOffsetMin[0], maximum: RANGES.utcOffsetMin[1], description: "Minutes east of UTC of the reader's clock, so that days start at local midnight (default 0)" })),
});

export const EntitySummaryQuery = T.Object({
  q: T.Optional(T.String({ maxLength: 256, description: 'Only entity ids containing this text (case-insensitive)' })),
  sort: T.Optional(T.Union([T.Literal('recent'), T.Literal('memories'), T.Literal('name')], { description: 'recent (default: latest activity first), memories (most first) or name' })),
  limit: T.Optional(T.Integer({ minimum: 1, description: 'Entities (default 100; above 1000 counts as 1000)' })),
});

export const GraphOverviewBody = T.Object({
  entity_id: T.Optional(Name("An entity's memories and their direct neighbours, instead of the whole workspace")),
  kind: T.Optional(Kind),
  max_nodes: T.Optional(T.Integer({ minimum: 1, description: 'At most this many memories (default 100; above 500 counts as 500), the most important first' })),
  edge_types: T.Optional(EdgeTypes),
});

export const ContradictionsQuery = T.Object({
  entity_id: T.Optional(Name('Only pairs with at least one memory about this entity')),
  limit: T.Optional(T.Integer({ minimum: 1, description: 'At most this many confirmed pairs and this many candidates (default 50; above 500 counts as 500)' })),
});

export const ActivityQuery = T.Object({
  workspace: T.Optional(T.String({ description: 'Only changes in this workspace' })),
  action: T.Optional(T.Union(ACTIVITY_ACTIONS.map((a) => T.Literal(a)), { description: 'Only this kind of change' })),
  key_id: T.Optional(T.String({ description: 'Only changes made with this key' })),
  cursor: T.Optional(T.String({ pattern: '^[0-9]{1,15}$', description: 'next_cursor of the previous page (older entries)' })),
  limit: T.Optional(T.Integer({ minimum: 1, description: 'Entries per page (default 50; above 500 counts as 500)' })),
});

export const MetricsHistoryQuery = T.Object({
  since_us: T.Optional(Time('Only points starting at or after this time')),
});
