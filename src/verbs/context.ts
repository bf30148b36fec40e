/**
 * @module verbs/context — what a verb runs with: the services, the caller and the workspace it
 * acts on. Transports build a Ctx with `resolveCtx`; verbs never see protocol types.
 */
import type { RateClass, RateLimiter } from '../auth/rate-limit.ts';
import type { AuthDirectory } from '../auth/store.ts';
import { targetWorkspace, type Principal } from '../auth/principal.ts';
import type { Config } from '../config/index.ts';
import type { Embedder } from '../embedding/embedder.ts';
import type { Reranker } from '../embedding/reranker.ts';
import { FlashbulbError } from '../errors/codes.ts';
import { rateLimited } from '../metrics/index.ts';
import { BudgetedRouter, type ReplyBudget, type ReplyLease } from '../router/reply-budget.ts';
import type { ShardRouter } from '../router/router.ts';
import type { ClusterStatus } from '../cluster/status.ts';
import type { SubscriptionRegistry } from '../subscribe/registry.ts';
import type { ReflectionEngine } from '../reflection/engine.ts';
import type { ReflectSessions } from '../reflection/sessions.ts';
import type { ActivityLog } from './activity-log.ts';

export interface Services {
  readonly config: Config;
  readonly shards: ShardRouter;
  readonly embedder: Embedder;
  readonly auth: AuthDirectory;
  readonly limiter: RateLimiter;
  readonly subscriptions: SubscriptionRegistry;
  readonly reflection: ReflectionEngine;
  readonly reflectSessions: ReflectSessions;
  readonly startedAt: number;
  readonly version: string;
  /** Mutable readiness: false while starting or draining, with the reason. */
  readonly health: { ready: boolean; reason: string };
  /** Present in cluster mode (src/cluster). */
  readonly cluster?: { status(): Promise<ClusterStatus> };
  /** What changed, by which key (verbs/activity). */
  readonly activity: ActivityLog;
  /** The reply byte budgets (router/reply-budget); absent, replies are not counted. */
  readonly replies?: ReplyBudget;
  /** The optional cross-encoder reranker of recall (FLASHBULB_RERANK_ENABLED); absent: none. */
  readonly reranker?: Reranker | null;
}

export interface Ctx {
  readonly svc: Services;
  readonly principal: Principal;
  readonly workspace: string;
}

/**
 * Decides the workspace for a request. `strict`: a workspace key naming another workspace is a 403
 * (REST prefixes); otherwise its own workspace silently applies (gRPC tenant_id, spec 5.6).
 */
export function resolveCtx(
  svc: Services,
  principal: Principal,
  requested: string | undefined,
  opts: { strict: boolean },
): Ctx {
  const workspace = targetWorkspace(principal, requested, opts);
  if (!svc.config.authEnabled) svc.auth.ensureWorkspace(workspace);
  else if (!svc.auth.workspace(workspace))
    throw new FlashbulbError('not_found', `workspace '${workspace}' not found`);
  return { svc, principal, workspace };
}

/**
 * The services as one request sees them: its reads count against the reply budgets until the
 * transport calls `release` (once its reply is sent or abandoned; calling it again does nothing).
 */
export function budgeted(svc: Services): {
  svc: Services;
  release: () => void;
  lease: ReplyLease | null;
} {
  if (!svc.replies) return { svc, release: () => undefined, lease: null };
  const lease = svc.replies.lease();
  return {
    svc: { ...svc, shards: new BudgetedRouter(svc.shards, lease) },
    release: () => lease.release(),
    lease,
  };
}

/** Ready to serve: started, not draining, and every shard answering (router/shard-client `problems`). */
export function readiness(svc: Services): { ready: boolean; reason: string } {
  if (!svc.health.ready) return svc.health;
  const problems = svc.shards.problems();
  return problems.length === 0
    ? { ready: true, reason: '' }
    : { ready: false, reason: problems.join('; ') };
}

/** Charges the workspace's rate limit for one request of the given class. */
export function charge(ctx: Ctx, cls: RateClass): void {
  try {
    ctx.svc.limiter.take(ctx.workspace, cls);
  } catch (err) {
    rateLimited.labels(cls).inc();
    throw err;
  }
}

export function requireAdmin(ctx: Pick<Ctx, 'principal'>): void {
  if (ctx.principal.role !== 'admin')
    throw new FlashbulbError('forbidden', 'this operation needs an admin key');
}
