/**
 * @module verbs/reflect — reflection and contradiction resolution: the service's own Reflect, and
 * the deprecated agent-driven prepare/commit flows, all scoped to the caller's workspace.
 */
import { invalid } from '../errors/codes.ts';
import type { ReflectResult, ReflectScope } from '../reflection/engine.ts';
import type { PrepareResult, ProducedInsight } from '../reflection/sessions.ts';
import type { PendingContradiction, VerdictResult } from '../protocol/reflection.ts';
import { noteActivity } from './activity.ts';
import { charge, type Ctx } from './context.ts';
import type { TimeInput } from '../model/time.ts';
import { aliased, checkEntity, checkId, checkTime, checkUnit } from './validate.ts';

export interface ScopeInput {
  entity_id?: string | undefined;
  /** Only memories created at or after it (µs or ISO 8601; 0: all). */
  since_us?: TimeInput | undefined;
  /** Alias of since_us. */
  since?: TimeInput | undefined;
}

function scopeOf(input: ScopeInput): ReflectScope {
  const since = aliased(['since_us', input.since_us], ['since', input.since]);
  const sinceUs =
    since === undefined ? 0 : checkTime(input.since_us === undefined ? 'since' : 'since_us', since);
  return {
    entityId:
      input.entity_id === undefined || input.entity_id === ''
        ? null
        : checkEntity('entity_id', input.entity_id),
    sinceUs: sinceUs === 0 ? null : sinceUs,
  };
}

export async function reflect(ctx: Ctx, input: ScopeInput): Promise<ReflectResult> {
  charge(ctx, 'write');
  const r = await ctx.svc.reflection.reflect(ctx.workspace, scopeOf(input));
  if (r.insights_created + r.insights_refreshed > 0) {
    noteActivity(ctx, 'reflect', {
      count: r.insights_created + r.insights_refreshed,
      detail: `${r.insights_created} insights created, ${r.insights_refreshed} refreshed from ${r.memories_processed} memories`,
    });
  }
  return r;
}

export function reflectPrepare(ctx: Ctx, input: ScopeInput): Promise<PrepareResult> {
  charge(ctx, 'read');
  return ctx.svc.reflectSessions.prepare(ctx.workspace, scopeOf(input));
}

export interface InsightInput {
  content: string;
  confidence: number;
  source_memory_ids: string[];
  tags?: string[] | undefined;
  cluster_id?: number | undefined;
}

export async function reflectCommit(
  ctx: Ctx,
  input: { session_id: string; insights: InsightInput[] },
): Promise<{ insights_created: number }> {
  charge(ctx, 'write');
  const insights: ProducedInsight[] = input.insights.map((i, n) => ({
    content: i.content,
    confidence: checkUnit(`insights[${n}].confidence`, i.confidence),
    source_memory_ids: i.source_memory_ids.map((id, k) =>
      checkId(`insights[${n}].source_memory_ids[${k}]`, id),
    ),
    tags: i.tags ?? [],
    cluster_id: i.cluster_id ?? null,
  }));
  const r = await ctx.svc.reflectSessions.commit(ctx.workspace, input.session_id, insights);
  if (r.insights_created > 0)
    noteActivity(ctx, 'insights_commit', {
      count: r.insights_created,
      detail: `${r.insights_created} insights from session ${input.session_id}`,
    });
  return r;
}

export function contradictionPrepare(ctx: Ctx): Promise<PendingContradiction[]> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'pendingContradictions', {});
}

const VERDICTS = new Set(['contradiction', 'revision', 'dismiss']);

export interface VerdictInput {
  pending_id: string;
  verdict: string;
  confidence: number;
  reasoning?: string | undefined;
}

export async function contradictionCommit(
  ctx: Ctx,
  input: { verdicts: VerdictInput[] },
): Promise<VerdictResult> {
  charge(ctx, 'write');
  const verdicts = input.verdicts.map((v, i) => {
    if (!/^[0-9a-f]{32}$/i.test(v.pending_id))
      throw invalid(`verdicts[${i}].pending_id '${v.pending_id}' is not a pending id`);
    const verdict = v.verdict.toLowerCase();
    if (!VERDICTS.has(verdict))
      throw invalid(
        `verdicts[${i}].verdict must be contradiction, revision or dismiss, got '${v.verdict}'`,
      );
    return {
      pendingId: v.pending_id.toLowerCase(),
      verdict,
      confidence: checkUnit(`verdicts[${i}].confidence`, v.confidence),
    };
  });
  const r = await ctx.svc.shards.call(ctx.workspace, 'commitVerdicts', { verdicts });
  const count = r.contradictions_confirmed + r.revisions_created + r.dismissed;
  if (count > 0)
    noteActivity(ctx, 'verdicts', {
      count,
      detail: `${r.contradictions_confirmed} contradictions confirmed, ${r.revisions_created} revisions, ${r.dismissed} dismissed`,
    });
  return r;
}
