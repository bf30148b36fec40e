/**
 * @module http/routes-browse — the routes that show a workspace whole and the service over time
 * (the dashboard's reads): the timeline, entity summaries, the graph overview, the contradictions
 * list, the activity log (admin keys) and the metrics history. http/routes places them in its table
 * (the timeline before `/v1/memories/:id`, which would otherwise take its path).
 */
import * as R from '../api/browse-replies.ts';
import * as S from '../api/browse-requests.ts';
import { edgeJson, memoryJson as json, withIso } from '../api/views.ts';
import { isoFromUs } from '../model/time.ts';
import { checkTime } from '../verbs/validate.ts';
import { requireAdmin } from '../verbs/context.ts';
import {
  history,
  HISTORY_INTERVAL_MS,
  HISTORY_POINTS,
  type HistoryPoint,
} from '../metrics/history.ts';
import { listActivity } from '../verbs/activity.ts';
import { contradictions, entitySummaries, graphOverview, timeline } from '../verbs/browse.ts';
import { ctxOf, route, type Route } from './route.ts';

export const BROWSE_ROUTES: readonly Route[] = [
  route({
    method: 'GET',
    path: '/v1/memories/timeline',
    op: 'timeline',
    scoped: true,
    query: S.TimelineQuery,
    summary: "How many of the list's matches were created per hour or day",
    reply: { status: 200, schema: R.Timeline },
    handle: async (i, { query }) => {
      const t = await timeline(ctxOf(i), query);
      return {
        body: {
          bucket: query.bucket ?? 'day',
          bucket_us: t.bucketUs,
          buckets: t.buckets.map((b) => ({
            start_us: b.startUs,
            start_iso: isoFromUs(b.startUs),
            count: b.count,
          })),
          total: t.total,
        },
      };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/graph/overview',
    op: 'graph_overview',
    scoped: true,
    body: S.GraphOverviewBody,
    bodyOptional: true,
    summary:
      "The workspace's (or an entity's) graph without a centre: the most important memories and the edges among them",
    reply: { status: 200, schema: R.GraphOverview },
    handle: async (i, { body }) => {
      const out = await graphOverview(ctxOf(i), body);
      return {
        body: {
          nodes: out.nodes.map(json),
          edges: out.edges.map(edgeJson),
          total_nodes: out.totalNodes,
          truncated: out.truncated,
        },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/entities/summary',
    op: 'entity_summaries',
    scoped: true,
    query: S.EntitySummaryQuery,
    summary: 'Entities with their memory counts and last activity',
    reply: { status: 200, schema: R.EntitySummaries },
    handle: async (i, { query }) => {
      const out = await entitySummaries(ctxOf(i), query);
      return {
        body: {
          entities: out.entities.map((e) =>
            withIso(
              {
                entity_id: e.entityId,
                memory_count: e.memories,
                first_at: e.firstAt,
                last_at: e.lastAt,
                kinds: e.kinds,
              },
              ['first_at', 'last_at'],
            ),
          ),
          total: out.total,
        },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/contradictions',
    op: 'contradictions',
    scoped: true,
    query: S.ContradictionsQuery,
    summary:
      'Contradictions: confirmed pairs (contradicts edges) and candidates waiting for a verdict, with both memories and the rule',
    reply: { status: 200, schema: R.Contradictions },
    handle: async (i, { query }) => {
      const out = await contradictions(ctxOf(i), query);
      return {
        body: {
          confirmed: out.confirmed.map((c) => ({
            a: json(c.a),
            b: json(c.b),
            confidence: c.confidence,
            reason: c.reason,
            timestamp_us: c.timestampUs,
            timestamp_iso: isoFromUs(c.timestampUs),
          })),
          pending: out.pending.map(({ candidate: c, a, b }) => ({
            pending_id: c.pending_id,
            a: json(a),
            b: json(b),
            classifier_score: c.classifier_score,
            classifier_method: c.classifier_method,
            similarity: c.similarity,
            proposed: c.proposed,
            reason: c.reason ?? null,
            created_at: c.created_at,
            created_at_iso: isoFromUs(c.created_at),
          })),
          truncated: out.truncated,
        },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/admin/activity',
    op: 'activity',
    scoped: false,
    admin: true,
    query: S.ActivityQuery,
    summary:
      'What changed, newest first: writes, revisions, forgets, imports, insights, workspaces and keys, with the key that did it',
    reply: { status: 200, schema: R.Activity },
    handle: async (i, { query }) => {
      const page = await listActivity(i.svc, i.principal, query);
      return {
        body: {
          entries: page.entries.map(({ entry: e, contents }) => ({
            seq: e.seq,
            at_us: e.atUs,
            at_iso: isoFromUs(e.atUs),
            action: e.action,
            workspace: e.workspace,
            key_id: e.keyId,
            key_label: e.keyLabel,
            count: e.count,
            detail: e.detail,
            memories: e.memoryIds.map((id) =>
              contents === null
                ? { memory_id: id }
                : { memory_id: id, content: contents.get(id) ?? null },
            ),
          })),
          next_cursor: page.nextCursor,
          capacity: page.capacity,
        },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/metrics/history',
    op: 'metrics_history',
    scoped: false,
    admin: true,
    query: S.MetricsHistoryQuery,
    summary:
      'The last hour in 10-second points: requests, errors and latency percentiles per operation, memories, queues, shards (server-wide: admin keys only)',
    reply: { status: 200, schema: R.MetricsHistory },
    handle: async (i, { query }) => {
      requireAdmin(i);
      const h = await history.read(
        query.since_us === undefined ? null : checkTime('since_us', query.since_us),
      );
      return {
        body: {
          interval_s: HISTORY_INTERVAL_MS / 1000,
          capacity: HISTORY_POINTS,
          points: h.points.map(historyJson),
          current: historyJson(h.current),
        },
      };
    },
  }),
];

function historyJson(p: HistoryPoint): unknown {
  const ops: Record<string, unknown> = {};
  for (const [op, o] of Object.entries(p.ops))
    ops[op] = {
      count: o.count,
      errors: o.errors,
      p50_ms: o.p50Ms,
      p95_ms: o.p95Ms,
      p99_ms: o.p99Ms,
      max_ms: o.maxMs,
    };
  return {
    start_us: p.startUs,
    start_iso: isoFromUs(p.startUs),
    seconds: p.seconds,
    ops,
    gauges: p.gauges,
  };
}
