/** @module verbs/recall — validate a recall, embed the cue (with its context), run it in the shard. */
import { invalid } from '../errors/codes.ts';
import { parseEdgeType, type EdgeType } from '../model/edge.ts';
import type { JsonObject } from '../model/memory.ts';
import { parseFilter, type FilterNode } from '../recall/filter.ts';
import {
  SIMILARITY_MODES,
  STRATEGIES,
  type RecallOutput,
  type SimilarityMode,
  type StrategyName,
  type StrategySpec,
} from '../recall/types.ts';
import { widenForRerank } from '../recall/rerank.ts';
import { charge, type Ctx } from './context.ts';
import { countAccess, rerankerFor, rerankHits, type RerankReport } from './recall-rerank.ts';
import { memorySpan } from './memory-span.ts';
import { intInRange, renderContext, scoringWeights, type WeightsInput } from './recall-options.ts';
import { RANGES } from '../model/limits.ts';
import type { TimeInput } from '../model/time.ts';
import {
  aliased,
  checkEntity,
  checkId,
  checkName,
  checkTime,
  checkUnit,
  LIMITS,
} from './validate.ts';

/** Options a strategy takes; each falls back to the request-level value of the same name. */
export interface StrategyOptions {
  top_k?: number | undefined;
  ef_search?: number | undefined;
  entity_id?: string | undefined;
  time_range?: TimeRangeInput | undefined;
  seed_memory_id?: string | undefined;
  edge_types?: string[] | undefined;
  max_depth?: number | undefined;
  analogical_alpha?: number | undefined;
}

/** A time window; `start` / `end` are aliases of `start_us` / `end_us` (µs or ISO 8601 each). */
export interface TimeRangeInput {
  start_us?: TimeInput | undefined;
  end_us?: TimeInput | undefined;
  start?: TimeInput | undefined;
  end?: TimeInput | undefined;
}

export interface RecallRequest extends StrategyOptions {
  cue: string;
  /** Metadata filter (recall/filter.ts), applied inside every strategy's search. */
  filter?: unknown;
  strategies: Array<{ strategy: string } & StrategyOptions>;
  scoring_weights?: WeightsInput | undefined;
  cue_context?: string | JsonObject | undefined;
  /** hybrid (default), dense or lexical; see recall/strategies.ts. */
  similarity_mode?: string | undefined;
  /** Results whose relevance is below it are dropped. */
  min_relevance?: number | undefined;
  /** When the cue is asked (µs or ISO 8601; default: the clock): relative times in the cue and recency read from it. */
  asked_at_us?: TimeInput | undefined;
  /** Only memories said by this speaker / turns of this conversation (AND with `filter`). */
  speaker?: string | undefined;
  conversation_id?: string | undefined;
  /** false: skip the server's reranker for this recall; true: require it (default: when it runs). */
  rerank?: boolean | undefined;
  withEmbedding?: boolean;
}

/** A recall's answer, with what the reranker did when it ran (verbs/recall-rerank). */
export interface RecallReply extends RecallOutput {
  rerank?: RerankReport;
}

export async function recall(ctx: Ctx, req: RecallRequest): Promise<RecallReply> {
  charge(ctx, 'read');
  if (req.cue.trim() === '') throw invalid('cue must not be empty');
  if (Buffer.byteLength(req.cue) > LIMITS.cueBytes)
    throw invalid(`cue is longer than ${LIMITS.cueBytes} bytes`);
  if (req.strategies.length === 0)
    throw invalid(`strategies must name at least one of ${STRATEGIES.join(', ')}`);
  const strategies = req.strategies.map((s, i) => strategySpec(s, req, `strategies[${i}]`));
  const filter = withTurn(
    req.filter === undefined || req.filter === null ? null : parseFilter(req.filter),
    req,
  );
  const weights = scoringWeights(req.scoring_weights);
  const similarityMode = similarityModeOf(req.similarity_mode);
  const cue = needsCueVector(strategies) ? await embedCue(ctx, req) : NO_CUE_VECTOR();
  const cueContext = typeof req.cue_context === 'object' ? req.cue_context : null;
  const askedAtUs =
    req.asked_at_us === undefined ? null : checkTime('asked_at_us', req.asked_at_us);
  const reranker = rerankerFor(ctx, req.rerank);
  const widened =
    reranker === null ? null : widenForRerank(strategies, ctx.svc.config.rerank.candidates);
  const out = await ctx.svc.shards.call(
    ctx.workspace,
    'recall',
    {
      cue,
      cueText: req.cue,
      similarityMode,
      cueContext,
      strategies: widened?.strategies ?? strategies,
      weights,
      filter,
      askedAtUs,
      withEmbedding: req.withEmbedding ?? false,
      minRelevance: minRelevance(req.min_relevance),
      ...(widened === null ? {} : { deferAccess: true }),
    },
    [cue.buffer as ArrayBuffer],
  );
  const reply: RecallReply =
    reranker !== null && widened !== null
      ? await rerankHits(reranker, req.cue, out, widened.plan, weights.w_relevance)
      : out;
  if (widened !== null) await countAccess(ctx, reply);
  memorySpan(ctx.workspace, 'search_memory', {
    count: reply.results.length,
    strategies: strategies.map((s) => s.strategy),
  });
  return reply;
}

/** The filter with `speaker` and `conversation_id` conditions added (all must hold). */
export function withTurn(
  filter: FilterNode | null,
  o: { speaker?: string | undefined; conversation_id?: string | undefined },
): FilterNode | null {
  const parts: FilterNode[] = filter === null ? [] : [filter];
  if (o.speaker !== undefined)
    parts.push({ op: 'eq', field: { attr: 'speaker' }, value: checkName('speaker', o.speaker) });
  if (o.conversation_id !== undefined)
    parts.push({
      op: 'eq',
      field: { attr: 'conversation_id' },
      value: checkName('conversation_id', o.conversation_id),
    });
  return parts.length === 0
    ? null
    : parts.length === 1
      ? (parts[0] as FilterNode)
      : { op: 'and', of: parts };
}

/**
 * Whether any strategy chooses or orders memories by the cue's vector. Temporal, and causal from a
 * `seed_memory_id`, do not: a recall made only of those skips the embedding (the model's ~7 ms of
 * CPU), and every result then reports `relevance` 0 and a score without the relevance term, as
 * HEBBS does. Add a similarity strategy to get cosine relevance.
 */
export function needsCueVector(strategies: readonly StrategySpec[]): boolean {
  return strategies.some(
    (s) =>
      s.strategy === 'similarity' ||
      s.strategy === 'analogical' ||
      (s.strategy === 'causal' && s.seedId === null),
  );
}

/** An empty vector: the shard's dot product over it is 0, so relevance is 0 for every result. */
const NO_CUE_VECTOR = (): Float32Array => new Float32Array(0);

async function embedCue(ctx: Ctx, req: RecallRequest): Promise<Float32Array> {
  const contextText = renderContext(req.cue_context);
  const text = contextText === '' ? req.cue : `${req.cue}\n${contextText}`;
  return (await ctx.svc.embedder.embed([text])).slice(0, ctx.svc.embedder.dim);
}

function strategySpec(
  s: { strategy: string } & StrategyOptions,
  req: StrategyOptions,
  field: string,
): StrategySpec {
  const name = s.strategy.toLowerCase() as StrategyName;
  if (!STRATEGIES.includes(name))
    throw invalid(`${field}: unknown strategy '${s.strategy}'; use ${STRATEGIES.join(', ')}`);
  const pick = <K extends keyof StrategyOptions>(k: K): StrategyOptions[K] => s[k] ?? req[k];
  const topK = intInRange('top_k', pick('top_k'), 10, ...RANGES.topK);
  const entity = pick('entity_id');
  const seed = pick('seed_memory_id');
  const alpha = pick('analogical_alpha');
  return {
    strategy: name,
    topK,
    efSearch: intInRange('ef_search', pick('ef_search'), 50, ...RANGES.efSearch),
    entityId: entity === undefined ? null : checkEntity('entity_id', entity),
    timeRange: timeRange(
      pick('time_range'),
      s.time_range === undefined ? 'time_range' : `${field}.time_range`,
    ),
    seedId: seed === undefined ? null : checkId('seed_memory_id', seed),
    edgeTypes: edgeTypes(pick('edge_types')),
    maxDepth: intInRange('max_depth', pick('max_depth'), 5, 1, 10, { cap: true }),
    alpha: alpha === undefined ? 0.5 : checkUnit('analogical_alpha', alpha),
  };
}

/** The relevance floor asked for, in [0, 1] (0 when not given). */
export function minRelevance(v: number | undefined): number {
  return v === undefined ? 0 : checkUnit('min_relevance', v);
}

function similarityModeOf(mode: string | undefined): SimilarityMode {
  if (mode === undefined || mode === '') return 'hybrid';
  const m = mode.toLowerCase();
  if (!(SIMILARITY_MODES as readonly string[]).includes(m))
    throw invalid(`similarity_mode must be one of ${SIMILARITY_MODES.join(', ')}, got '${mode}'`);
  return m as SimilarityMode;
}

function timeRange(t: TimeRangeInput | undefined, field: string): StrategySpec['timeRange'] {
  if (!t) return null;
  const bound = (name: 'start' | 'end'): number | null => {
    const us = `${name}_us` as const;
    const v = aliased([`${field}.${us}`, t[us]], [`${field}.${name}`, t[name]]);
    return v === undefined ? null : checkTime(`${field}.${t[us] === undefined ? name : us}`, v);
  };
  const startUs = bound('start');
  const endUs = bound('end');
  if (startUs !== null && endUs !== null && startUs > endUs)
    throw invalid(`${field}: the start (${startUs}) must not be after the end (${endUs})`);
  return { startUs, endUs };
}

function edgeTypes(names: string[] | undefined): EdgeType[] | null {
  if (names === undefined || names.length === 0) return null;
  return names.map((n, i) => {
    const t = parseEdgeType(n);
    if (t === null) throw invalid(`edge_types[${i}] '${n}' is not a known edge type`);
    return t;
  });
}
