/** @module grpc/reflect-service — hebbs.v1.ReflectService over the verbs. */
import type * as grpc from '@grpc/grpc-js';
import { invalid } from '../errors/codes.ts';
import type { Services } from '../verbs/context.ts';
import { insights } from '../verbs/insights.ts';
import {
  contradictionCommit,
  contradictionPrepare,
  reflect,
  reflectCommit,
  reflectPrepare,
  type ScopeInput,
} from '../verbs/reflect.ts';
import { ctxOf, unary } from './call.ts';
import { memoryToProto, u64 } from './codec.ts';
import type { GetInsightsRequestMsg, GetInsightsResponseMsg, TenantOnly, U64 } from './messages.ts';

interface ScopeMsg {
  entity?: { entity_id: string; since_us?: U64 } | null;
  global?: { since_us?: U64 } | null;
  scope?: string;
}

interface ReflectRequestMsg extends TenantOnly {
  scope?: ScopeMsg | null;
}

interface ReflectCommitMsg extends TenantOnly {
  session_id: string;
  insights: Array<{
    content: string;
    confidence: number;
    source_memory_ids: string[];
    tags: string[];
    cluster_id?: number;
  }>;
}

interface ContradictionCommitMsg extends TenantOnly {
  verdicts: Array<{ pending_id: string; verdict: string; confidence: number; reasoning?: string }>;
}

/** ReflectScope is required (HEBBS answers INVALID_ARGUMENT without it). */
function scopeOf(msg: ReflectRequestMsg): ScopeInput {
  const s = msg.scope;
  if (s?.entity) return { entity_id: s.entity.entity_id, since_us: u64(s.entity.since_us) };
  if (s?.global) return { since_us: u64(s.global.since_us) };
  throw invalid('scope is required: set scope.entity or scope.global');
}

export function reflectService(svc: Services): grpc.UntypedServiceImplementation {
  return {
    Reflect: unary('reflect', async (req: ReflectRequestMsg, md) => {
      const r = await reflect(ctxOf(svc, md, req.tenant_id), scopeOf(req));
      return {
        insights_created: r.insights_created,
        clusters_found: r.clusters_found,
        clusters_processed: r.clusters_processed,
        memories_processed: r.memories_processed,
      };
    }),
    GetInsights: unary(
      'insights',
      async (req: GetInsightsRequestMsg, md): Promise<GetInsightsResponseMsg> => {
        const found = await insights(ctxOf(svc, md, req.tenant_id), {
          entity_id: req.entity_id,
          min_confidence: req.min_confidence,
          max_results: req.max_results === 0 ? undefined : req.max_results,
          withEmbedding: true,
        });
        return { insights: found.map((m) => memoryToProto(m, { sources: true })) };
      },
    ),
    ReflectPrepare: unary('reflect_prepare', async (req: ReflectRequestMsg, md) => {
      const r = await reflectPrepare(ctxOf(svc, md, req.tenant_id), scopeOf(req));
      return {
        ...r,
        clusters: r.clusters.map((c) => ({
          ...c,
          memories: c.memories.map((m) => ({ ...m, entity_id: m.entity_id ?? undefined })),
        })),
      };
    }),
    ReflectCommit: unary('reflect_commit', (req: ReflectCommitMsg, md) =>
      reflectCommit(ctxOf(svc, md, req.tenant_id), {
        session_id: req.session_id,
        insights: req.insights,
      }),
    ),
    ContradictionPrepare: unary('contradiction_prepare', async (req: TenantOnly, md) => ({
      candidates: await contradictionPrepare(ctxOf(svc, md, req.tenant_id)),
    })),
    ContradictionCommit: unary('contradiction_commit', (req: ContradictionCommitMsg, md) =>
      contradictionCommit(ctxOf(svc, md, req.tenant_id), { verdicts: req.verdicts }),
    ),
  };
}
