/**
 * @module api/recall-requests — the bodies of the routes that find memories: recall (its strategies,
 * weights, time ranges and relevance floor), prime, graph, insights, subscriptions and the text fed
 * to them. Each states the limits the server enforces, as in api/requests.
 */
import { Type as T } from '@sinclair/typebox';
import { LIMITS, RANGES } from '../model/limits.ts';
import { MEMORY_KINDS } from '../model/memory.ts';
import {
  EdgeTypes,
  JsonObject,
  MemoryId,
  Name,
  NameOrNone,
  StrategyName,
  Text,
  Unit,
} from './fields.ts';
import { Time } from './time.ts';
import { notBoth, Filter, Json } from './requests.ts';

const Weights = T.Object({
  w_relevance: T.Optional(T.Number({ minimum: 0 })),
  w_recency: T.Optional(T.Number({ minimum: 0 })),
  w_importance: T.Optional(T.Number({ minimum: 0 })),
  w_reinforcement: T.Optional(T.Number({ minimum: 0 })),
  max_age_us: T.Optional(
    T.Number({
      minimum: 0,
      description: 'Age at which recency reaches 0, in µs (0: the default, 30 days)',
    }),
  ),
  reinforcement_cap: T.Optional(
    T.Number({
      minimum: 0,
      description: 'Access count at which reinforcement saturates (0: the default)',
    }),
  ),
});

const TimeRange = T.Object(
  {
    start_us: T.Optional(Time('Earliest creation time, inclusive')),
    end_us: T.Optional(Time('Latest creation time, inclusive')),
    start: T.Optional(Time('Alias of start_us')),
    end: T.Optional(Time('Alias of end_us')),
  },
  {
    allOf: [notBoth('start_us', 'start'), notBoth('end_us', 'end')],
    description: 'A window of creation times (start not after end: the server checks)',
  },
);

const StrategyOptions = {
  top_k: T.Optional(
    T.Integer({
      minimum: RANGES.topK[0],
      maximum: RANGES.topK[1],
      description: 'Results (default 10)',
    }),
  ),
  ef_search: T.Optional(
    T.Integer({
      minimum: RANGES.efSearch[0],
      maximum: RANGES.efSearch[1],
      description: 'HNSW search breadth (default 50)',
    }),
  ),
  entity_id: T.Optional(Name('Only memories about this entity')),
  time_range: T.Optional(TimeRange),
  seed_memory_id: T.Optional(MemoryId),
  edge_types: T.Optional(EdgeTypes),
  max_depth: T.Optional(
    T.Integer({ minimum: 1, description: 'Causal hops (default 5; above 10 counts as 10)' }),
  ),
  analogical_alpha: T.Optional(
    Unit('Analogical: weight of the embedding against structure (default 0.5)'),
  ),
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
      description:
        'Strategies to run and merge, by name or with options of their own (default ["similarity"])',
    }),
  ),
  strategy: T.Optional(
    T.Unsafe<string>({
      ...StrategyName,
      description:
        'One strategy: an alias of strategies: [strategy] (strategies wins when both are given)',
    }),
  ),
  scoring_weights: T.Optional(Weights),
  cue_context: T.Optional(T.Union([T.String(), JsonObject('Cue context')])),
  similarity_mode: T.Optional(
    T.Unsafe<'hybrid' | 'dense' | 'lexical'>({
      type: 'string',
      enum: ['hybrid', 'dense', 'lexical'],
    }),
  ),
  min_relevance: T.Optional(T.Number({ minimum: 0, maximum: 1, description: MIN_RELEVANCE })),
  asked_at_us: T.Optional(
    Time(
      'When the cue is asked (default: now): "last week", "in January" and the recency term are read from it. Memories written later are not hidden',
    ),
  ),
  speaker: T.Optional(Name('Only memories said by this speaker (with filter: both must hold)')),
  conversation_id: T.Optional(Name("Only this conversation's turns (with filter: both must hold)")),
  rerank: T.Optional(
    T.Boolean({
      description:
        "Whether the server's cross-encoder reranks similarity's candidates (default: when the server runs one, FLASHBULB_RERANK_ENABLED). false skips it for this recall; true on a server without one is a 400",
    }),
  ),
  ...StrategyOptions,
});

export const PrimeBody = T.Object({
  filter: T.Optional(Filter),
  entity_id: T.Optional(NameOrNone()),
  max_memories: T.Optional(
    T.Integer({
      minimum: RANGES.maxMemories[0],
      maximum: RANGES.maxMemories[1],
      description: 'Memories (default 20)',
    }),
  ),
  similarity_cue: T.Optional(
    T.String({
      maxLength: LIMITS.cueBytes,
      description: `At most ${LIMITS.cueBytes / 1024} KiB as UTF-8`,
    }),
  ),
  scoring_weights: T.Optional(Weights),
  recency_window_us: T.Optional(
    T.Number({
      minimum: 0,
      description: 'How far back the recent half looks, in µs (default and 0: 7 days)',
    }),
  ),
  context: T.Optional(Json),
  min_relevance: T.Optional(
    T.Number({
      minimum: 0,
      maximum: 1,
      description:
        'Memories of the similar half whose relevance (cosine) is below it are left out; their places go to recent memories (default 0)',
    }),
  ),
});

export const GraphBody = T.Object({
  center_id: MemoryId,
  depth: T.Optional(
    T.Integer({ minimum: 0, description: 'Hops (default 2; above 5 counts as 5)' }),
  ),
  edge_types: T.Optional(EdgeTypes),
  max_nodes: T.Optional(
    T.Integer({ minimum: 1, description: 'Memories (default 100; above 500 counts as 500)' }),
  ),
  direction: T.Optional(T.Union([T.Literal('out'), T.Literal('in'), T.Literal('both')])),
});

export const InsightsQuery = T.Object({
  entity_id: T.Optional(NameOrNone()),
  min_confidence: T.Optional(Unit('Only insights at least this confident (default 0)')),
  max_results: T.Optional(
    T.Integer({ minimum: 1, description: 'Insights (default 100; above 1000 counts as 1000)' }),
  ),
});

export const SubscribeBody = T.Object({
  filter: T.Optional(Filter),
  entity_id: T.Optional(NameOrNone()),
  kind_filter: T.Optional(
    T.Array(
      T.Unsafe<string>({
        type: 'string',
        pattern: `^(${MEMORY_KINDS.map((k) => [...k].map((c) => `[${c}${c.toUpperCase()}]`).join('')).join('|')})$`,
        description: 'A memory kind (any case)',
      }),
    ),
  ),
  confidence_threshold: T.Optional(Unit('Push memories at least this relevant (default 0.5)')),
  time_scope_us: T.Optional(
    T.Number({ minimum: 0, description: 'Only memories created within this many µs (0: any)' }),
  ),
  max_pushes_per_chunk: T.Optional(
    T.Integer({
      minimum: RANGES.maxPushesPerChunk[0],
      maximum: RANGES.maxPushesPerChunk[1],
      description: 'Pushes per fed chunk (default 5)',
    }),
  ),
});

export const FeedBody = T.Object({
  text: T.String({
    maxLength: LIMITS.cueBytes,
    description: `Text the agent is reading or writing; at most ${LIMITS.cueBytes / 1024} KiB as UTF-8`,
  }),
});
