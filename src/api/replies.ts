/**
 * @module api/replies — what each REST route answers, as TypeBox schemas. They feed the
 * OpenAPI document (and through it the TypeScript client) and the MCP tools' output schemas.
 * Objects stay open (extra properties allowed), so a field added to a reply never breaks a client
 * that validates replies against an older document. The browsing routes' replies are in
 * api/browse-replies, the operators' in api/admin-replies.
 */
import { Type as T, type TSchema } from '@sinclair/typebox';
import { ERRORS } from '../errors/codes.ts';
import { EDGE_TYPES } from '../model/edge.ts';
import { MEMORY_KINDS } from '../model/memory.ts';
import { IsoTime } from './time.ts';
import { literals, Nullable, Us, ref } from './schema-kit.ts';
import { Workspace, KeyInfo } from './admin-replies.ts';

export const ErrorBody = T.Object(
  {
    error_code: literals(Object.keys(ERRORS)),
    message: T.String({ description: 'What went wrong, naming the field or value at fault.' }),
  },
  {
    $id: 'ErrorBody',
    description: 'Every error answer has this body; the HTTP status follows error_code.',
  },
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
    occurred_at: Us(
      'When the remembered thing happened (event time; created_at unless the writer gave one): time windows, recency and temporal recall read it',
    ),
    updated_at: Us('Last revision'),
    last_accessed_at: Us('Last read by recall, prime or get'),
    access_count: T.Integer({ minimum: 0 }),
    decay_score: T.Number({ description: 'importance · 0.5^(days since last access / 30)' }),
    logical_clock: T.Integer({ minimum: 0 }),
    source_memory_ids: T.Optional(
      T.Array(T.String(), { description: 'Insights: the memories they were drawn from' }),
    ),
    superseded_by: T.Optional(
      T.String({ description: 'Set once a revision replaced this memory' }),
    ),
    expires_at: Nullable(Us('When the memory expires and is forgotten (null: never)')),
    created_at_iso: IsoTime('created_at'),
    updated_at_iso: IsoTime('updated_at'),
    last_accessed_at_iso: IsoTime('last_accessed_at'),
    expires_at_iso: Nullable(IsoTime('expires_at (null: never)')),
    occurred_at_iso: IsoTime('occurred_at'),
    speaker: Nullable(T.String({ description: 'Who said it' })),
    conversation_id: Nullable(T.String({ description: 'The conversation it is a turn of' })),
    message_id: Nullable(
      T.String({
        description: "The writer's id for the message in its conversation (conversation ingest)",
      }),
    ),
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
    reason: T.Optional(
      T.String({
        description:
          'Edges the contradiction check made: the rule that fired, e.g. "negation scope: one statement says there is no such thing"',
      }),
    ),
  },
  { $id: 'Edge' },
);

export const MemoryList = T.Array(ref(Memory));
export const MemoryPage = T.Object({
  memories: T.Array(ref(Memory)),
  next_cursor: Nullable(T.String()),
  total: T.Optional(T.Integer({ description: 'Every memory the query matches (with_total=true)' })),
});
export const Edges = T.Object({ outgoing: T.Array(ref(Edge)), incoming: T.Array(ref(Edge)) });
export const ForgetResult = T.Object({
  forgotten_count: T.Integer(),
  cascade_count: T.Integer({
    description: 'Derived memories removed with them (insights, propositions)',
  }),
  truncated: T.Boolean(),
  tombstone_count: T.Integer(),
});

const StrategyDetail = T.Union(
  [
    T.Object({
      strategy: T.Literal('similarity'),
      relevance: T.Number({
        description:
          'The similarity relevance in [0, 1] (hybrid: the calibrated blend; dense: the cosine; lexical: the lexical share)',
      }),
      distance: T.Number({ description: '1 − relevance' }),
      cosine: T.Number({ description: 'Cosine of cue and memory, clamped to [0, 1]' }),
      lexical: T.Number({
        description: "IDF-weighted share of the cue's words the memory holds, in [0, 1]",
      }),
      named: T.Optional(
        T.Number({
          description:
            "Hybrid, when the cue names an entity or context value of some candidate: 1 when it names this memory's entity or a context value written like a name, else 0",
        }),
      ),
      reply: T.Optional(
        T.Number({
          description:
            'Hybrid, when some candidate follows a question (a memory asking something, written just before it) that matches the cue better than it does: by how much that question matches better, in [0, 1]; 0 for the others',
        }),
      ),
    }),
    T.Object({
      strategy: T.Literal('temporal'),
      timestamp: T.Integer({ description: "The memory's created_at (µs)" }),
      timestamp_iso: IsoTime('timestamp'),
      rank: T.Integer(),
    }),
    T.Object({
      strategy: T.Literal('causal'),
      depth: T.Integer(),
      edge_type: T.String(),
      seed_id: T.String(),
    }),
    T.Object({
      strategy: T.Literal('analogical'),
      embedding_similarity: T.Number(),
      structural_similarity: T.Number(),
    }),
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
  rerank: T.Optional(
    T.Object(
      {
        outcome: T.Unsafe<'reranked' | 'timeout' | 'busy' | 'failed'>({
          type: 'string',
          enum: ['reranked', 'timeout', 'busy', 'failed'],
          description:
            'reranked; or, answered in the unreranked order: timeout (past FLASHBULB_RERANK_TIMEOUT_MS), busy (the queue full), failed (the model raised)',
        }),
        candidates: T.Integer({ description: 'Similarity results sent to the reranker' }),
      },
      {
        description:
          "Present when the server's reranker ran for this recall (it is on, the recall includes similarity, and rerank was not false)",
      },
    ),
  ),
});

export const PrimeResult = T.Object({
  results: T.Array(ref(RecallHit)),
  temporal_count: T.Integer(),
  similarity_count: T.Integer(),
});

export const GraphResult = T.Object({
  nodes: T.Array(ref(Memory)),
  edges: T.Array(ref(Edge)),
  truncated: T.Boolean(),
});

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
      memories: T.Array(
        T.Object({
          memory_id: T.String(),
          content: T.String(),
          importance: T.Number(),
          entity_id: Nullable(T.String()),
          created_at: T.Number(),
          created_at_iso: IsoTime('created_at'),
        }),
      ),
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
    reason: T.Optional(
      T.String({
        description: "The rule that fired, e.g. \"antonyms (WordNet): 'warm' versus 'cold'\"",
      }),
    ),
  }),
);

export const VerdictResult = T.Object({
  contradictions_confirmed: T.Integer(),
  revisions_created: T.Integer(),
  dismissed: T.Integer(),
});

export const Entities = T.Array(T.String());
export const IngestResult = T.Object({
  conversation_id: T.String(),
  memory_ids: T.Array(T.String(), {
    description:
      'One per message, in the order sent: the memory written, or the one a message with the same message_id already is',
  }),
  created: T.Integer({ description: 'Messages this call wrote' }),
  existing: T.Integer({
    description: 'Messages whose message_id the conversation already held (not written again)',
  }),
});

export const ImportSummary = T.Object({
  lines: T.Integer(),
  imported: T.Integer(),
  skipped: T.Integer({ description: 'Memories already present (same id)' }),
  expired: T.Integer({ description: 'Lines whose memory had already expired' }),
  error_count: T.Integer(),
  errors: T.Array(T.Object({ line: T.Integer(), message: T.String() })),
});

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

/** Schemas with an `$id`, published under components/schemas and referenced by name. */
export const NAMED_SCHEMAS: readonly TSchema[] = [
  ErrorBody,
  Memory,
  Edge,
  RecallHit,
  Workspace,
  KeyInfo,
  SubscribeEvents.message,
];

export const JsonRpcReply = T.Object(
  { jsonrpc: T.Literal('2.0'), id: T.Optional(T.Union([T.String(), T.Number(), T.Null()])) },
  {
    description:
      'A JSON-RPC 2.0 answer (an MCP result or error); 202 with no body for notifications.',
  },
);

export const OpenApiDocument = T.Object({
  openapi: T.String(),
  info: T.Object({ title: T.String(), version: T.String() }),
  paths: T.Record(T.String(), T.Unknown()),
});
