/** @module grpc/memory-service — hebbs.v1.MemoryService over the verbs. */
import type * as grpc from '@grpc/grpc-js';
import { FlashbulbError } from '../errors/codes.ts';
import type { Services } from '../verbs/context.ts';
import { ingestConversation } from '../verbs/conversation.ts';
import { forget } from '../verbs/forget.ts';
import { prime } from '../verbs/prime.ts';
import { getMemory } from '../verbs/read.ts';
import { recall } from '../verbs/recall.ts';
import { remember } from '../verbs/remember.ts';
import { revise } from '../verbs/revise.ts';
import type { WeightsInput } from '../verbs/recall-options.ts';
import {
  edgeTypeFromEnum,
  hitToProto,
  idFromBytes,
  idToBytes,
  kindFromEnum,
  memoryToProto,
  strategyFromEnum,
  structToJson,
  u64,
} from './codec.ts';
import type {
  EdgeMsg,
  ForgetRequestMsg,
  GetRequestMsg,
  IngestMessagesRequestMsg,
  IngestMessagesResponseMsg,
  MemoryMsg,
  MemoryResponseMsg,
  PrimeRequestMsg,
  PrimeResponseMsg,
  RecallRequestMsg,
  RecallResponseMsg,
  RememberRequestMsg,
  ReviseRequestMsg,
  ScoringWeightsMsg,
  StrategyConfigMsg,
} from './messages.ts';
import { ctxOf, principalOf, unary } from './call.ts';

const mem = (m: Parameters<typeof memoryToProto>[0]): MemoryMsg =>
  memoryToProto(m, { sources: false });

function edges(
  list: EdgeMsg[],
): Array<{ target_id: string; edge_type: string; confidence?: number }> {
  return list.map((e, i) => ({
    target_id: idFromBytes(`edges[${i}].target_id`, e.target_id),
    edge_type: edgeTypeFromEnum(`edges[${i}].edge_type`, e.edge_type),
    ...(e.confidence === undefined ? {} : { confidence: e.confidence }),
  }));
}

function weights(w: ScoringWeightsMsg | null | undefined): WeightsInput | undefined {
  if (!w) return undefined;
  return {
    w_relevance: w.w_relevance,
    w_recency: w.w_recency,
    w_importance: w.w_importance,
    w_reinforcement: w.w_reinforcement,
    max_age_us: u64(w.max_age_us) ?? 0,
    reinforcement_cap: u64(w.reinforcement_cap) ?? 0,
  };
}

function strategy(
  c: StrategyConfigMsg,
  i: number,
): Parameters<typeof recall>[1]['strategies'][number] {
  return {
    strategy: strategyFromEnum(`strategies[${i}].strategy_type`, c.strategy_type),
    top_k: c.top_k,
    ef_search: c.ef_search,
    entity_id: c.entity_id === '' ? undefined : c.entity_id,
    time_range: c.time_range
      ? {
          start_us: u64(c.time_range.start_us) || undefined,
          end_us: u64(c.time_range.end_us) || undefined,
        }
      : undefined,
    seed_memory_id:
      c.seed_memory_id && c.seed_memory_id.length > 0
        ? idFromBytes(`strategies[${i}].seed_memory_id`, c.seed_memory_id)
        : undefined,
    edge_types:
      c.edge_types.length > 0
        ? c.edge_types.map((t, j) => edgeTypeFromEnum(`strategies[${i}].edge_types[${j}]`, t))
        : undefined,
    max_depth: c.max_depth,
    analogical_alpha: c.analogical_alpha,
  };
}

/**
 * `SIMILARITY_MODE_DENSE` → `dense`. A number (a value the enum does not define) goes through as
 * text, so the verb's check answers INVALID_ARGUMENT naming it.
 */
function similarityMode(mode: string | number | undefined): string | undefined {
  return typeof mode === 'number' ? String(mode) : mode?.replace(/^SIMILARITY_MODE_/, '');
}

export function memoryService(svc: Services): grpc.UntypedServiceImplementation {
  return {
    Remember: unary('remember', async (req: RememberRequestMsg, md): Promise<MemoryResponseMsg> => {
      const memory = await remember(ctxOf(svc, md, req.tenant_id), {
        content: req.content,
        importance: req.importance,
        context: structToJson(req.context),
        entity_id: req.entity_id,
        edges: edges(req.edges),
        kind: kindFromEnum('kind', req.kind),
        ttl_s: req.ttl_s,
        expires_at_us: u64(req.expires_at_us),
        occurred_at: u64(req.occurred_at),
        speaker: req.speaker,
        conversation_id: req.conversation_id,
        withEmbedding: true,
      });
      return { memory: mem(memory) };
    }),
    Get: unary('get', async (req: GetRequestMsg, md): Promise<MemoryResponseMsg> => {
      const memory = await getMemory(ctxOf(svc, md, req.tenant_id), {
        id: idFromBytes('memory_id', req.memory_id),
        withEmbedding: true,
      });
      return { memory: mem(memory) };
    }),
    Recall: unary('recall', async (req: RecallRequestMsg, md): Promise<RecallResponseMsg> => {
      const out = await recall(ctxOf(svc, md, req.tenant_id), {
        cue: req.cue,
        strategies: req.strategies.map(strategy),
        top_k: req.top_k,
        scoring_weights: weights(req.scoring_weights),
        cue_context: structToJson(req.cue_context, 'cue_context'),
        similarity_mode: similarityMode(req.similarity_mode),
        filter: structToJson(req.filter),
        rerank: req.rerank,
        withEmbedding: true,
      });
      return {
        results: out.results.map(hitToProto),
        strategy_errors: out.strategy_errors.map((e) => ({
          strategy: e.strategy.toUpperCase(),
          message: e.message,
        })),
      };
    }),
    Prime: unary('prime', async (req: PrimeRequestMsg, md): Promise<PrimeResponseMsg> => {
      const out = await prime(ctxOf(svc, md, req.tenant_id), {
        entity_id: req.entity_id,
        context: structToJson(req.context),
        max_memories: req.max_memories,
        recency_window_us: u64(req.recency_window_us),
        similarity_cue: req.similarity_cue,
        scoring_weights: weights(req.scoring_weights),
        filter: structToJson(req.filter),
        withEmbedding: true,
      });
      return {
        results: out.results.map(hitToProto),
        temporal_count: out.temporal_count,
        similarity_count: out.similarity_count,
      };
    }),
    Revise: unary('revise', async (req: ReviseRequestMsg, md): Promise<MemoryResponseMsg> => {
      const context = structToJson(req.context);
      const memory = await revise(ctxOf(svc, md, req.tenant_id), {
        id: idFromBytes('memory_id', req.memory_id),
        content: req.content,
        importance: req.importance,
        context: context && Object.keys(context).length > 0 ? context : undefined,
        context_mode: req.context_mode === 'CONTEXT_MODE_REPLACE' ? 'replace' : 'merge',
        // proto3 cannot carry null: an empty entity_id clears the entity.
        entity_id: req.entity_id === '' ? null : req.entity_id,
        edges: edges(req.edges),
        // proto3 cannot carry null: clear_expiry removes an expiry.
        ttl_s: req.ttl_s,
        expires_at_us: req.clear_expiry ? null : u64(req.expires_at_us),
        withEmbedding: true,
      });
      return { memory: mem(memory) };
    }),
    Forget: unary('forget', async (req: ForgetRequestMsg, md) => {
      return forget(ctxOf(svc, md, req.tenant_id), {
        memory_ids:
          req.memory_ids.length > 0
            ? req.memory_ids.map((b, i) => idFromBytes(`memory_ids[${i}]`, b))
            : undefined,
        entity_id: req.entity_id,
        staleness_threshold_us: u64(req.staleness_threshold_us),
        access_count_floor: u64(req.access_count_floor),
        memory_kind: kindFromEnum('memory_kind', req.memory_kind),
        decay_score_floor: req.decay_score_floor,
      });
    }),
    IngestMessages: unary(
      'ingest',
      async (req: IngestMessagesRequestMsg, md): Promise<IngestMessagesResponseMsg> => {
        const out = await ingestConversation(ctxOf(svc, md, req.tenant_id), {
          conversation_id: req.conversation_id,
          messages: req.messages.map((m, i) => ({
            speaker: m.speaker,
            content: m.content,
            occurred_at: u64(m.occurred_at),
            importance: m.importance,
            context: structToJson(m.context, `messages[${i}].context`),
            message_id: m.message_id,
          })),
          entity_id: req.entity_id,
          ttl_s: req.ttl_s,
          expires_at_us: u64(req.expires_at_us),
        });
        return {
          memory_ids: out.memory_ids.map(idToBytes),
          created: out.created,
          existing: out.existing,
        };
      },
    ),
    SetPolicy: unary('set_policy', (_req: unknown, md) => {
      principalOf(svc, md);
      throw new FlashbulbError(
        'method_not_allowed',
        'SetPolicy is not supported: Flashbulb keeps no per-tenant decay or snapshot policies; use Forget with staleness_threshold_us or decay_score_floor',
      );
    }),
  };
}
