/** @module verbs/prime — recent plus relevant memories to prime an agent's context. */
import { RANGES } from '../model/limits.ts';
import type { JsonObject } from '../model/memory.ts';
import type { PrimeOutput } from '../recall/types.ts';
import { parseFilter } from '../recall/filter.ts';
import { charge, type Ctx } from './context.ts';
import { memorySpan } from './memory-span.ts';
import { minRelevance } from './recall.ts';
import { intInRange, renderContext, scoringWeights, type WeightsInput } from './recall-options.ts';
import { checkEntity, checkNonNegative, LIMITS } from './validate.ts';
import { invalid } from '../errors/codes.ts';

const WEEK_US = 7 * 86_400_000_000;

export interface PrimeRequest {
  entity_id?: string | undefined;
  max_memories?: number | undefined;
  similarity_cue?: string | undefined;
  scoring_weights?: WeightsInput | undefined;
  recency_window_us?: number | undefined;
  context?: JsonObject | undefined;
  /** Metadata filter (recall/filter.ts) both halves apply inside their search. */
  filter?: unknown;
  /** Similarity candidates below this relevance are left out (their places go to recent memories). */
  min_relevance?: number | undefined;
  withEmbedding?: boolean;
}

export async function prime(ctx: Ctx, req: PrimeRequest): Promise<PrimeOutput> {
  charge(ctx, 'read');
  const entityId =
    req.entity_id === undefined || req.entity_id === ''
      ? null
      : checkEntity('entity_id', req.entity_id);
  const maxMemories = intInRange('max_memories', req.max_memories, 20, ...RANGES.maxMemories);
  const window =
    req.recency_window_us === undefined || req.recency_window_us === 0
      ? WEEK_US
      : checkNonNegative('recency_window_us', req.recency_window_us);
  if (req.similarity_cue !== undefined && Buffer.byteLength(req.similarity_cue) > LIMITS.cueBytes) {
    throw invalid(`similarity_cue is longer than ${LIMITS.cueBytes} bytes`);
  }
  const filter = req.filter === undefined || req.filter === null ? null : parseFilter(req.filter);
  // Without an explicit cue, the entity and the context stand in for one.
  const cueText =
    req.similarity_cue?.trim() ||
    [entityId ?? '', renderContext(req.context)].filter((s) => s !== '').join('\n');
  const cue =
    cueText === ''
      ? null
      : (await ctx.svc.embedder.embed([cueText])).slice(0, ctx.svc.embedder.dim);
  const out = await ctx.svc.shards.call(
    ctx.workspace,
    'prime',
    {
      entityId,
      maxMemories,
      cue,
      filter,
      recencyWindowUs: window,
      weights: scoringWeights(req.scoring_weights),
      withEmbedding: req.withEmbedding ?? false,
      minRelevance: minRelevance(req.min_relevance),
    },
    cue ? [cue.buffer as ArrayBuffer] : [],
  );
  memorySpan(ctx.workspace, 'search_memory', {
    count: out.results.length,
    strategies: cue ? ['temporal', 'similarity'] : ['temporal'],
  });
  return out;
}
