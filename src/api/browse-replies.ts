/**
 * @module api/browse-replies — what the browsing routes answer (http/routes-browse: the dashboard's
 * reads), as TypeBox schemas: the timeline's buckets, entity summaries, the graph overview, the
 * contradictions list, the activity log and the metrics history. Open objects, as in api/replies.
 */
import { Type as T } from '@sinclair/typebox';
import { IsoTime } from './time.ts';
import { ACTIVITY_ACTIONS } from '../model/activity.ts';
import { literals, Nullable, Us, ref } from './schema-kit.ts';
import { Memory, Edge } from './replies.ts';

export const Timeline = T.Object({
  bucket: literals(['hour', 'day']),
  bucket_us: T.Integer({ description: 'Bucket width in microseconds' }),
  buckets: T.Array(
    T.Object({
      start_us: Us('Start of the bucket'),
      start_iso: IsoTime('start_us'),
      count: T.Integer(),
    }),
    { description: 'Buckets holding at least one match, oldest first' },
  ),
  total: T.Integer(),
});

export const EntitySummaries = T.Object({
  entities: T.Array(
    T.Object({
      entity_id: T.String(),
      memory_count: T.Integer({
        description: 'Live memories about the entity (superseded versions not counted)',
      }),
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
  total_nodes: T.Integer({
    description:
      'Memories the overview chose from: the workspace, or the entity and its neighbours',
  }),
  truncated: T.Boolean({ description: 'Fewer nodes than total_nodes (max_nodes reached)' }),
});

export const Contradictions = T.Object({
  confirmed: T.Array(
    T.Object({
      a: ref(Memory),
      b: ref(Memory),
      confidence: T.Number(),
      reason: Nullable(
        T.String({ description: 'The rule that made the edge, when the checker did' }),
      ),
      timestamp_us: Us('When the edge was made'),
      timestamp_iso: IsoTime('timestamp_us'),
    }),
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
      key_id: Nullable(
        T.String({ description: 'The key that made the change (null: authentication off)' }),
      ),
      key_label: Nullable(T.String()),
      count: T.Integer({ description: 'Memories (or keys, workspaces) the change touched' }),
      memories: T.Array(
        T.Object({
          memory_id: T.String(),
          content: T.Optional(
            Nullable(
              T.String({
                description:
                  'The content now, clipped to 200 characters; null once forgotten; absent where the key may not read the workspace',
              }),
            ),
          ),
        }),
        { description: 'The first 20 memories the change touched' },
      ),
      detail: Nullable(
        T.String({ description: 'Criteria, key ids, file names: never memory content' }),
      ),
    }),
  ),
  next_cursor: Nullable(T.String()),
  capacity: T.Integer({
    description:
      'Entries the log keeps (the oldest go first); it lives in memory and starts empty at each start',
  }),
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
    {
      description:
        "Requests by operation (gRPC ones prefixed 'grpc '), with percentiles and maximum of the successful ones' own durations (every one, or a uniform sample of 1,000 in a busier interval)",
    },
  ),
  gauges: T.Record(T.String(), T.Number(), {
    description:
      'At the end of the interval: memories, embedding_queue, contradiction_checks, vector_index, open_subscriptions, connections, shards, shards_down, shards_storage_failed, shards_memory_full, rss_mb',
  }),
});

export const MetricsHistory = T.Object({
  interval_s: T.Number(),
  capacity: T.Integer({
    description:
      'Points kept (an hour); the history lives in memory and starts empty at each start',
  }),
  points: T.Array(HistoryPoint, { description: 'Closed intervals, oldest first' }),
  current: HistoryPoint,
});
