/**
 * @module api/requests — one schema per REST body and query. Each states the limits the server
 * enforces (ranges, lengths, patterns, enums, required and exclusive fields, item counts: the
 * numbers are model/limits'), so the OpenAPI document generated from them is the validation; what
 * JSON Schema cannot say (UTF-8 byte limits, a time that must be in the future, start before end)
 * is in the description, and verbs/validate checks it, naming the field. The browsing routes'
 * queries are in api/browse-requests, the bodies of the routes that find memories in
 * api/recall-requests.
 */
import { Type as T } from '@sinclair/typebox';
import { LIMITS, SLUG_RE } from '../model/limits.ts';
import { MEMORY_KINDS } from '../model/memory.ts';
import { EdgeTypeName, JsonObject, MemoryId, Name, NameOrNone, Text, Ttl, Unit } from './fields.ts';
import { NullableTime, Time } from './time.ts';

export const Kind = T.Union(MEMORY_KINDS.map((k) => T.Literal(k)));

/** A metadata filter; its grammar is checked by recall/filter.ts, which names the offending place. */
export const Filter = T.Record(T.String(), T.Unknown(), {
  description:
    'Metadata filter: {FIELD: value} for equality, {FIELD: {$eq|$ne|$in|$nin|$gt|$gte|$lt|$lte|$exists: …}}, {$and: [filter…]}, {$or: [filter…]}; ' +
    'several keys combine with AND. FIELD: importance, created_at, occurred_at, updated_at, last_accessed_at, access_count, kind, entity_id, speaker, conversation_id, message_id or context.KEY[.KEY…]. ' +
    'The four times compare as integer microseconds; a string given for one of them is read as an ISO 8601 time (as in time_range). ' +
    'The server checks the grammar and names the place at fault (the schema leaves it open: spelled out, it would be most of this document).',
});
export const Json = JsonObject('Context');
/** The filter in a query string: its JSON text (the server parses and checks it). */
export const FilterText = T.String({
  description:
    "A metadata filter as JSON text (the grammar of the recall body's filter); the server checks it and names the place at fault",
});

const EdgeSpec = T.Object({
  target_id: MemoryId,
  edge_type: EdgeTypeName,
  confidence: T.Optional(Unit('How sure the edge is (default 1)')),
});

/** Expiry on remember and revise: seconds from now, or an absolute time; null: never expires. */
const Expiry = {
  ttl_s: T.Optional(T.Union([Ttl('Time to live'), T.Null()])),
  expires_at_us: T.Optional(
    NullableTime('When the memory expires (in the future, within 100 years; null: never)'),
  ),
  expires_at: T.Optional(NullableTime('Alias of expires_at_us, the name replies use')),
};

/**
 * (Constraints between fields sit in `allOf`: a generator that reads an object's own `anyOf` as
 * other shapes, as openapi-typescript does, still sees the object.)
 *
 * Fields of which at most one may be given (as a non-null value): ttl_s and the expiry, a field and
 * its alias. JSON Schema states it with `not`; the server's message names both.
 */
export function notBoth(a: string, b: string, nullMeansUnset = false): Record<string, unknown> {
  const given = nullMeansUnset ? { not: { type: 'null' } } : {};
  return { not: { required: [a, b], properties: { [a]: given, [b]: given } } };
}
const EXPIRY_RULES = [
  notBoth('ttl_s', 'expires_at_us', true),
  notBoth('ttl_s', 'expires_at', true),
  notBoth('expires_at_us', 'expires_at'),
];

/** Event time, speaker and conversation of a write (remember; a message of conversation ingest takes the first two). */
const OccurredAt = Time(
  'When the remembered thing happened (default: now; up to 5 minutes ahead counts as now, later is a 400)',
);
const Speaker = T.Union([Name(), T.Null()], {
  description: 'Who said it (a turn of a conversation)',
});

export const RememberBody = T.Object(
  {
    ...Expiry,
    content: Text('The memory'),
    importance: T.Optional(Unit('Importance (default 0.5)')),
    context: T.Optional(T.Union([Json, T.Null()])),
    entity_id: T.Optional(T.Union([Name('Who or what it is about'), T.Null()])),
    edges: T.Optional(T.Array(EdgeSpec)),
    occurred_at: T.Optional(OccurredAt),
    speaker: T.Optional(Speaker),
    conversation_id: T.Optional(
      T.Union([Name(), T.Null()], {
        description: 'The conversation this is a turn of: linked followed_by to the turn before it',
      }),
    ),
  },
  { allOf: EXPIRY_RULES },
);

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

export const BackupBody = T.Object({
  to: T.String({
    minLength: 1,
    pattern: '^/',
    description: "An absolute path on the server's machine: an empty directory, or one to create",
  }),
});

export const ImportQuery = T.Object({ first_line: T.Optional(T.Integer({ minimum: 1 })) });

export const BatchBody = T.Object({
  memory_ids: T.Array(
    T.String({ description: 'A memory id (unknown and malformed ids are skipped)' }),
    { maxItems: LIMITS.batchIds },
  ),
});

/** What revise needs at least one of (edges: at least one edge). */
const REVISABLE = [
  'content',
  'importance',
  'context',
  'entity_id',
  'ttl_s',
  'expires_at_us',
  'expires_at',
].map((f) => ({ required: [f] }));

/** One message of a conversation ingest. */
const Message = T.Object({
  speaker: Name('Who said it'),
  content: Text('The message'),
  occurred_at: T.Optional(OccurredAt),
  importance: T.Optional(Unit('Importance (default 0.5)')),
  context: T.Optional(T.Union([Json, T.Null()])),
  message_id: T.Optional(
    T.Union([Name(), T.Null()], {
      description:
        'Your id for the message, unique in the conversation (and in the call): a message whose id the conversation holds is not written again (retries are safe)',
    }),
  ),
});

/** POST /v1/conversations/{conversation_id}/messages: the conversation's new messages, in order. */
export const IngestBody = T.Object(
  {
    ...Expiry,
    messages: T.Array(Message, {
      minItems: 1,
      maxItems: LIMITS.messagesPerCall,
      description: `In the order they were said (1 to ${LIMITS.messagesPerCall.toLocaleString('en')} a call)`,
    }),
    entity_id: T.Optional(
      T.Union([Name(), T.Null()], { description: 'Every message is about this entity' }),
    ),
  },
  { allOf: EXPIRY_RULES },
);

export const ReviseBody = T.Object(
  {
    ...Expiry,
    content: T.Optional(Text('The new content')),
    importance: T.Optional(Unit()),
    context: T.Optional(Json),
    context_mode: T.Optional(T.Union([T.Literal('merge'), T.Literal('replace')])),
    entity_id: T.Optional(
      T.Union([Name(), T.Null()], { description: 'The new entity (null clears it)' }),
    ),
    edges: T.Optional(T.Array(EdgeSpec)),
  },
  {
    allOf: [
      { anyOf: [...REVISABLE, { required: ['edges'], properties: { edges: { minItems: 1 } } }] },
      ...EXPIRY_RULES,
    ],
    description:
      'At least one of content, importance, context, entity_id, edges (one or more), ttl_s, expires_at_us / expires_at',
  },
);

const FORGET_CRITERIA = [
  'memory_ids',
  'entity_id',
  'staleness_threshold_us',
  'access_count_floor',
  'memory_kind',
  'decay_score_floor',
];

export const ForgetBody = T.Object(
  {
    memory_ids: T.Optional(T.Array(MemoryId, { maxItems: LIMITS.forgetPerCall })),
    entity_id: T.Optional(Name()),
    staleness_threshold_us: T.Optional(
      Time('Forget memories last read before this time (an absolute cutoff)'),
    ),
    access_count_floor: T.Optional(
      T.Number({ minimum: 0, description: 'Forget memories read fewer times than this' }),
    ),
    memory_kind: T.Optional(Kind),
    decay_score_floor: T.Optional(
      T.Number({ minimum: 0, description: 'Forget memories whose decay score is below this' }),
    ),
  },
  {
    allOf: [{ anyOf: FORGET_CRITERIA.map((f) => ({ required: [f] })) }],
    description: 'Memories matching every criterion given; at least one criterion',
  },
);

const Slug = T.String({
  pattern: SLUG_RE.source,
  description:
    'A workspace slug: lower-case letters, digits, _ and -, 1 to 63 characters, starting with a letter or digit',
});

export const CreateWorkspaceBody = T.Object({
  slug: Slug,
  name: T.Optional(T.String({ maxLength: 200 })),
  default_ttl_s: T.Optional(T.Union([Ttl('Default time to live of new memories'), T.Null()])),
});

export const UpdateWorkspaceBody = T.Object(
  {
    name: T.Optional(T.String({ maxLength: 200 })),
    default_ttl_s: T.Optional(
      T.Union([Ttl('Default time to live of new memories'), T.Null()], {
        description: 'null removes it',
      }),
    ),
  },
  {
    allOf: [{ anyOf: [{ required: ['name'] }, { required: ['default_ttl_s'] }] }],
    description: 'At least one of name and default_ttl_s',
  },
);

export const CreateKeyBody = T.Object({
  workspace: Slug,
  role: T.Union([T.Literal('admin'), T.Literal('workspace')]),
  label: T.Optional(T.String({ maxLength: 200 })),
});

/** What a list, its total and its timeline match besides entity, kind, superseded versions and filter. */
export const ListMatch = {
  q: T.Optional(
    T.String({
      maxLength: LIMITS.cueBytes,
      description:
        "Only memories holding every word of q (whole words, stemmed, as recall's lexical match reads them; current texts only)",
    }),
  ),
  since_us: T.Optional(Time('Created at or after this time')),
  until_us: T.Optional(Time('Created before this time')),
};

export const ListQuery = T.Object({
  filter: T.Optional(FilterText),
  entity_id: T.Optional(Name()),
  speaker: T.Optional(Name('Only memories said by this speaker')),
  conversation_id: T.Optional(Name("Only this conversation's turns")),
  kind: T.Optional(Kind),
  cursor: T.Optional(
    T.String({
      maxLength: 200,
      description:
        'next_cursor of the previous page of the same query (sorted by created_at: a memory id)',
    }),
  ),
  limit: T.Optional(
    T.Integer({
      minimum: 1,
      description: `Memories per page (default ${LIMITS.listDefault}; above ${LIMITS.listLimit} counts as ${LIMITS.listLimit})`,
    }),
  ),
  include_superseded: T.Optional(T.Boolean()),
  ...ListMatch,
  sort: T.Optional(
    T.Union(
      [
        T.Literal('created_at'),
        T.Literal('updated_at'),
        T.Literal('importance'),
        T.Literal('access_count'),
        T.Literal('last_accessed_at'),
      ],
      {
        description:
          'What pages are ordered by (default created_at); ties go by id, which sorts by creation',
      },
    ),
  ),
  order: T.Optional(
    T.Union([T.Literal('asc'), T.Literal('desc')], {
      description: 'asc (default: oldest or lowest first) or desc',
    }),
  ),
  with_total: T.Optional(
    T.Boolean({ description: 'Also count every match (total); costs a pass over the matches' }),
  ),
});

export const ScopeBody = T.Object(
  {
    entity_id: T.Optional(NameOrNone()),
    since_us: T.Optional(Time('Only memories created at or after this time (0: all)')),
    since: T.Optional(Time('Alias of since_us')),
  },
  { allOf: [notBoth('since_us', 'since')] },
);

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
      verdict: T.Unsafe<string>({
        type: 'string',
        pattern:
          '^([cC][oO][nN][tT][rR][aA][dD][iI][cC][tT][iI][oO][nN]|[rR][eE][vV][iI][sS][iI][oO][nN]|[dD][iI][sS][mM][iI][sS][sS])$',
        description: 'contradiction, revision or dismiss (any case)',
      }),
      confidence: Unit(),
      reasoning: T.Optional(T.String()),
    }),
  ),
});
