/**
 * @module verbs/browse — a workspace seen whole, for the dashboard and for callers that audit:
 * the timeline of the list's matches, entity summaries, the graph overview (no centre) and the
 * contradictions list. The list itself is verbs/read.
 */
import { invalid } from '../errors/codes.ts';
import { parseEdgeType, type EdgeType } from '../model/edge.ts';
import type { MemoryKind } from '../model/memory.ts';
import { RANGES } from '../model/limits.ts';
import type {
  EntitySummariesInput,
  EntitySummary,
  OverviewOutput,
  TimelineOutput,
} from '../protocol/shard.ts';
import type { ContradictionsOutput } from '../protocol/reflection.ts';
import { charge, type Ctx } from './context.ts';
import { listCriteria, type ListCriteria } from './read.ts';
import { intInRange } from './recall-options.ts';
import { checkEntity } from './validate.ts';

/** Most buckets a timeline answers (a year by day; 41 days by hour). */
export const MAX_TIMELINE_BUCKETS = 1000;

export interface TimelineRequest extends ListCriteria {
  bucket?: 'hour' | 'day' | undefined;
  /** Minutes east of UTC of the reader's clock, so days start at local midnight (−720…840). */
  utc_offset_min?: number | undefined;
}

export function timeline(ctx: Ctx, req: TimelineRequest): Promise<TimelineOutput> {
  charge(ctx, 'read');
  const offset = intInRange('utc_offset_min', req.utc_offset_min, 0, ...RANGES.utcOffsetMin);
  return ctx.svc.shards.call(ctx.workspace, 'timeline', {
    ...listCriteria(req),
    bucket: req.bucket ?? 'day',
    offsetUs: offset * 60_000_000,
    maxBuckets: MAX_TIMELINE_BUCKETS,
  });
}

export interface EntitySummariesRequest {
  q?: string | undefined;
  sort?: EntitySummariesInput['sort'] | undefined;
  limit?: number | undefined;
}

export function entitySummaries(
  ctx: Ctx,
  req: EntitySummariesRequest,
): Promise<{ entities: EntitySummary[]; total: number }> {
  charge(ctx, 'read');
  const q = req.q?.trim() ?? '';
  if (q.length > 256) throw invalid(`q is ${q.length} characters; the limit is 256`);
  return ctx.svc.shards.call(ctx.workspace, 'entitySummaries', {
    text: q === '' ? null : q,
    sort: req.sort ?? 'recent',
    limit: intInRange('limit', req.limit, 100, 1, 1000, { cap: true }),
  });
}

export interface OverviewRequest {
  entity_id?: string | undefined;
  kind?: MemoryKind | undefined;
  max_nodes?: number | undefined;
  edge_types?: string[] | undefined;
}

export function graphOverview(ctx: Ctx, req: OverviewRequest): Promise<OverviewOutput> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'graphOverview', {
    entityId: req.entity_id === undefined ? null : checkEntity('entity_id', req.entity_id),
    kind: req.kind ?? null,
    maxNodes: intInRange('max_nodes', req.max_nodes, 100, 1, 500, { cap: true }),
    edgeTypes: edgeTypes(req.edge_types),
  });
}

export function edgeTypes(names: readonly string[] | undefined): EdgeType[] | null {
  if (names === undefined || names.length === 0) return null;
  return names.map((n, i) => {
    const t = parseEdgeType(n);
    if (t === null) throw invalid(`edge_types[${i}] '${n}' is not a known edge type`);
    return t;
  });
}

export function contradictions(
  ctx: Ctx,
  req: { entity_id?: string | undefined; limit?: number | undefined },
): Promise<ContradictionsOutput> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'contradictions', {
    entityId: req.entity_id === undefined ? null : checkEntity('entity_id', req.entity_id),
    limit: intInRange('limit', req.limit, 50, 1, 500, { cap: true }),
  });
}
