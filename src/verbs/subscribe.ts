/** @module verbs/subscribe — open, feed and close subscriptions (any transport's sink). */
import { invalid } from '../errors/codes.ts';
import { MEMORY_KINDS, type MemoryKind } from '../model/memory.ts';
import { RANGES } from '../model/limits.ts';
import type { PushSink } from '../subscribe/registry.ts';
import { parseFilter } from '../recall/filter.ts';
import { charge, type Ctx, type Services } from './context.ts';
import { intInRange } from './recall-options.ts';
import { checkEntity, checkNonNegative, checkUnit, LIMITS } from './validate.ts';

const DEFAULT_KINDS: MemoryKind[] = ['episode', 'insight', 'revision'];
/** Pushes one fed chunk (or one batch of new writes) may produce unless the subscriber asks otherwise. */
export const DEFAULT_MAX_PUSHES_PER_CHUNK = 5;
export const MAX_PUSHES_PER_CHUNK_LIMIT = RANGES.maxPushesPerChunk[1];

export interface SubscribeRequest {
  entity_id?: string | undefined;
  kind_filter?: string[] | undefined;
  confidence_threshold?: number | undefined;
  time_scope_us?: number | undefined;
  /** Metadata filter (recall/filter.ts) a memory must pass to be pushed. */
  filter?: unknown;
  /** Flashbulb addition: the most relevant memories pushed per chunk (default 5, at most 1000). */
  max_pushes_per_chunk?: number | undefined;
}

export function openSubscription(ctx: Ctx, req: SubscribeRequest, sink: PushSink): Promise<number> {
  charge(ctx, 'read');
  const kinds = (req.kind_filter ?? []).map((k, i) => {
    const kind = MEMORY_KINDS.find((m) => m === k.toLowerCase());
    if (!kind) throw invalid(`kind_filter[${i}] '${k}' is not a memory kind`);
    return kind;
  });
  return ctx.svc.subscriptions.open(
    ctx.workspace,
    {
      entityId:
        req.entity_id === undefined || req.entity_id === ''
          ? null
          : checkEntity('entity_id', req.entity_id),
      kinds: kinds.length > 0 ? kinds : DEFAULT_KINDS,
      threshold:
        req.confidence_threshold === undefined
          ? 0.5
          : checkUnit('confidence_threshold', req.confidence_threshold),
      timeScopeUs:
        req.time_scope_us === undefined || req.time_scope_us === 0
          ? null
          : checkNonNegative('time_scope_us', req.time_scope_us),
      filter: req.filter === undefined || req.filter === null ? null : parseFilter(req.filter),
      maxPushes: intInRange(
        'max_pushes_per_chunk',
        req.max_pushes_per_chunk,
        DEFAULT_MAX_PUSHES_PER_CHUNK,
        1,
        MAX_PUSHES_PER_CHUNK_LIMIT,
      ),
    },
    sink,
    // It ends when this key may no longer read (revoked, its role or workspace changed).
    { keyId: ctx.principal.keyId, role: ctx.principal.role, workspace: ctx.principal.workspace },
  );
}

export function feedSubscription(
  ctx: Ctx,
  req: { subscription_id: number; text: string },
): Promise<void> {
  charge(ctx, 'read');
  if (Buffer.byteLength(req.text) > LIMITS.cueBytes)
    throw invalid(`text is longer than ${LIMITS.cueBytes} bytes`);
  return ctx.svc.subscriptions.feed(ctx.workspace, req.subscription_id, req.text);
}

export function closeSubscription(ctx: Ctx, req: { subscription_id: number }): Promise<void> {
  return ctx.svc.subscriptions.close(ctx.workspace, req.subscription_id);
}

/** How often the key file is looked at for changes made outside the server (the CLI), while no request comes. */
const KEY_FILE_CHECK_MS = 250;

/**
 * Ends the streams a key may no longer read: after every change of the keys (made through this
 * server, by the CLI in auth.json, or by another node of a cluster), each subscription held here
 * whose key is gone, whose key's role or workspace changed, or whose workspace is gone, closes
 * as `revoked` (SSE `event: closed`, gRPC UNAUTHENTICATED). Returns the function that stops the
 * key file checks.
 */
export function endRevokedStreams(svc: Services): () => void {
  svc.auth.onChange(() => {
    const keys = new Map(svc.auth.keys().map((k) => [k.key_id, k]));
    void svc.subscriptions.closeRevoked((holder, workspace) => {
      if (svc.auth.workspace(workspace) === undefined) return false;
      if (holder.keyId === null) return true;
      const key = keys.get(holder.keyId);
      return key !== undefined && key.role === holder.role && key.workspace === holder.workspace;
    });
  });
  const timer = setInterval(() => svc.auth.reload(), KEY_FILE_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
