/**
 * @module recall/strategies — the four recall strategies as pure functions over a RecallSource.
 * Each returns candidate memories with their strategy detail; merging and scoring happen in
 * recall/merge.ts. A strategy that cannot run throws StrategyFailure, which becomes an entry in
 * `strategy_errors` instead of failing the call.
 */
import type { EdgeType } from '../model/edge.ts';
import type { JsonObject, MemoryRecord } from '../model/memory.ts';
import type { TimeCue } from './dates.ts';
import { asksForSeveral, gathered } from './gather.ts';
import { crowding, FeatureScorer, hybridRelevance, uncrowded } from './hybrid.ts';
import { clamp01 } from './scoring.ts';
import { structuralSimilarity, structureOf, type Structure } from './structure.ts';
import type {
  LexicalMatcher,
  RecallSource,
  SimilarityMode,
  StrategyDetail,
  StrategySpec,
} from './types.ts';
import { dot } from './vector.ts';

export class StrategyFailure extends Error {
  override name = 'StrategyFailure';
}

export interface Candidate {
  memory: MemoryRecord;
  detail: StrategyDetail;
}

/** What similarity searches with: the cue's vector and text, the mode, and the time the cue names. */
export interface SimilarityQuery {
  vector: Float32Array;
  text: string;
  mode: SimilarityMode;
  time: TimeCue | null;
}

/**
 * How deep each candidate list goes (at least top_k): three times the default top_k. On the
 * development data 20, 30 and 50 recall the same at 10; 30 keeps recall at 25 and costs 0.3 ms
 * less than 50 at 10k memories (native-bench/micro/lexical.ts); re-ranking 200 of each instead
 * (issue 22) recalled no more at 10 under cross-validation.
 */
export const CANDIDATE_DEPTH = 30;
/** At most this many memories dated inside a cue's time are ranked for the time list. */
const TIME_SCAN_MAX = 5000;
/**
 * A cue's time with at most this many times the candidate depth of memories created outside it
 * takes its most similar from the dense search (see datedIn): the search then asks for at most
 * 4 × depth, as cheap as the search for the candidates.
 */
const WIDE_OUTSIDE = 3;

interface Ranked {
  memory: MemoryRecord;
  relevance: number;
  named?: number;
  reply?: number;
}

/**
 * Similarity, in one of three modes.
 * - `dense`: the nearest memories by cosine (relevance = the cosine).
 * - `lexical`: the best by BM25 (relevance = BM25 over its bound for the cue).
 * - `hybrid` (default): candidates from both indexes (and, when the cue names a time, the memories
 *   dated in it), each with the neighbours it was written beside, ranked by a calibrated blend of
 *   the features of recall/hybrid.ts
 *     match(m)   = 0.65·cosine(m) + 0.35·lexical(m)
 *     reply(m)   = max(0, match(q) − match(m)) when q, the memory written just before m, asks something
 *     thread(m)  = ½·max match(candidate of m's thread, m included)
 *                  + ½·(0.65·max cosine(those candidates) + 0.35·lexical(those candidates as one text))
 *     relevance  = (match(m) + 0.8·reply(m) + 0.4·max match(neighbour) + 0.6·thread(m)
 *                   + 0.2·[cue names m's entity or speaker] + 0.3·[m dated in the cue's time])
 *                  / (1.4 [+ 0.6] [+ 0.2] [+ 0.3])
 *   (a bracketed weight counts only when m has a thread, when the cue names a time, or names someone
 *   a candidate is attributed to).
 *   The cosine every feature reads is less the memory's crowding (recall/hybrid.ts crowding: its
 *   density above the mean of the dense candidates', shard/index/density.ts), so a memory written
 *   from the same template as many others does not outrank one that stands out.
 *   Both parts of the match are absolute ([0, 1] for any cue, not rescaled per query; the lexical
 *   match is the IDF-weighted share of the cue's words the memory holds, see LexicalIndex.score), so
 *   relevance means the same from query to query. A neighbour is the memory written just before or
 *   after in the same stretch of conversation (RecallSource.neighbours): in a dialogue the answer
 *   to a question often sits next to the turn that names its topic; a memory with no neighbour is
 *   its own context. A thread is the stretch its neighbours chain into (a session of a conversation,
 *   RecallSource.thread): a question's answer is often said a few turns after the words it uses;
 *   the thread weight counts only for a memory that has one (a neighbour, and a bounded stretch). A
 *   memory that repeats the cue has match 1 (so thread 1), and relevance 1 when it stands alone or
 *   its neighbours match too, at least 1/1.4 ≈ 0.71 otherwise (1.6/2.0 = 0.8 in a thread). (A cap
 *   at 1 instead of the division ties every strong match at the top; a neighbour term that can only
 *   lift, never dilute, recalled 2 points less on the development data: a memory inside a stretch
 *   of conversation about the cue is more likely what was asked for than an isolated one.) An
 *   answer is lifted toward the question before it: in a dialogue the answer ("Yeah, I play
 *   clarinet!") often shares few words with a question about it ("What instruments does Melanie
 *   play?"), and the question it answers ("You play any instruments?") many. A cue that asks for
 *   a list or a count is answered by a second pass, its vector moved toward the first's best (gather.ts).
 */
export function similarity(src: RecallSource, q: SimilarityQuery, spec: StrategySpec): Candidate[] {
  const pass = (query: SimilarityQuery, at: StrategySpec, pool: number): Candidate[] =>
    similarityPass(src, query, at, pool);
  return q.mode === 'hybrid' && asksForSeveral(q.text)
    ? gathered(q, spec, pass, CANDIDATE_DEPTH)
    : pass(q, spec, CANDIDATE_DEPTH);
}

function similarityPass(
  src: RecallSource,
  q: SimilarityQuery,
  spec: StrategySpec,
  pool: number,
): Candidate[] {
  const depth = q.mode === 'hybrid' ? Math.max(spec.topK, pool) : spec.topK;
  const dense =
    q.mode === 'lexical'
      ? []
      : src.nearest(q.vector, {
          k: depth,
          ef: Math.max(spec.efSearch, depth),
          entityId: spec.entityId,
        });
  const matcher = src.lexical(q.text);
  const lexical = q.mode === 'dense' || matcher.empty ? [] : matcher.search(depth, spec.entityId);
  const sims = new Map(dense.map((h) => [h.id, h.sim]));
  const cosine = (m: MemoryRecord): number => clamp01(sims.get(m.id) ?? dot(q.vector, m.embedding));
  const memories = (ids: Iterable<string>): MemoryRecord[] =>
    [...ids].flatMap((id) => src.memory(id) ?? []);
  let ranked: Ranked[];
  if (q.mode === 'dense')
    ranked = memories(sims.keys()).map((m) => ({ memory: m, relevance: cosine(m) }));
  else if (q.mode === 'lexical')
    ranked = lexical.flatMap((h) =>
      memories([h.id]).map((m) => ({ memory: m, relevance: h.norm })),
    );
  else
    ranked = hybridRanking(src, q, spec, {
      depth,
      cosine,
      lexical: matcher,
      dense: [...sims.keys()],
      lexicalIds: lexical.map((h) => h.id),
    });
  // Ties (cosines below 0 all clamp to 0) keep the raw cosine order, then the id order.
  const rawOf = (m: MemoryRecord): number => sims.get(m.id) ?? Number.NEGATIVE_INFINITY;
  ranked.sort(
    (a, b) =>
      b.relevance - a.relevance ||
      rawOf(b.memory) - rawOf(a.memory) ||
      (a.memory.id < b.memory.id ? -1 : a.memory.id > b.memory.id ? 1 : 0),
  );
  return ranked.slice(0, spec.topK).map(({ memory, relevance, named, reply }) => ({
    memory,
    detail: {
      strategy: 'similarity',
      relevance,
      distance: 1 - relevance,
      cosine: cosine(memory),
      lexical: matcher.normOf(memory.id),
      ...(named === undefined ? {} : { named }),
      ...(reply === undefined ? {} : { reply }),
    },
  }));
}

/** The hybrid blend (see {@link similarity}) over the candidates of both lists and their neighbours. */
function hybridRanking(
  src: RecallSource,
  q: SimilarityQuery,
  spec: StrategySpec,
  c: {
    depth: number;
    cosine: (m: MemoryRecord) => number;
    lexical: LexicalMatcher;
    dense: string[];
    lexicalIds: string[];
  },
): Ranked[] {
  // The cosine features read is less the candidate's crowding (recall/hybrid.ts), known once the pool is.
  let crowd: (m: MemoryRecord) => number = () => 0;
  const scorer = new FeatureScorer(src, q.text, (m) => uncrowded(c.cosine(m), crowd(m)), c.lexical);
  const dated =
    q.time === null
      ? { dated: () => false, best: [] }
      : datedIn(src, { ...q, time: q.time }, spec, {
          depth: c.depth,
          dense: c.dense,
          cosine: c.cosine,
        });
  const pool = new Map<string, MemoryRecord>();
  for (const id of [...c.dense, ...c.lexicalIds, ...dated.best]) {
    const m = pool.get(id) ?? src.memory(id);
    if (m === undefined) continue;
    pool.set(id, m);
    for (const n of scorer.neighbours(m)) pool.set(n.id, n);
  }
  crowd = crowding(src, [...pool.values()], c.dense);
  const threads = scorer.threads([...pool.values()]);
  const scored = [...pool.values()].map((m) => ({
    memory: m,
    features: scorer.features(m, dated.dated(m), threads.get(m.id) ?? null),
  }));
  const applies = { time: q.time !== null, named: scored.some((x) => x.features.named > 0) };
  const replies = scored.some((x) => x.features.reply > 0);
  // `named` and `reply` join the details only when they count (the cue names someone; some
  // candidate follows a question that matches better): they then explain the rank. `thread` is not
  // a detail: a recall without them keeps the detail keys clients read (and tests pin).
  return scored.map(({ memory, features }) => ({
    memory,
    relevance: hybridRelevance(features, applies),
    ...(applies.named ? { named: features.named } : {}),
    ...(replies ? { reply: features.reply } : {}),
  }));
}

/**
 * Memories dated inside the cue's time: that happened in its window (occurred_at), or whose content names a date in it;
 * `dated` tells a candidate is one, `best` are the `depth` most similar to the cue (the memories
 * with a date at most TIME_SCAN_MAX, with those created in the window). When nearly every memory
 * was created in the window (at most {@link WIDE_OUTSIDE} × depth outside it: a young store and a
 * cue like "this month"), the window's most similar are the first of the dense search's
 * `depth + outside` (no more than `outside` memories can rank above them), so its memories are not
 * read one by one (an exact answer where the search is exact, below the graph's size; the graph's
 * answer above it); otherwise at most TIME_SCAN_MAX of them, newest first, are compared with the cue.
 */
export function datedIn(
  src: RecallSource,
  q: SimilarityQuery & { time: TimeCue },
  spec: StrategySpec,
  c: { depth: number; dense: readonly string[]; cosine: (m: MemoryRecord) => number },
): { dated: (m: MemoryRecord) => boolean; best: string[] } {
  const { depth, cosine } = c;
  const { startUs, endUs, keys } = q.time;
  const inWindow = (m: MemoryRecord): boolean => m.occurredAt >= startUs && m.occurredAt < endUs;
  const found = new Map<string, MemoryRecord>();
  for (const m of src.withDateKeys(keys, TIME_SCAN_MAX, spec.entityId)) found.set(m.id, m);
  const named = new Set(found.keys());
  const outside = src.countOutside(startUs, endUs, spec.entityId);
  if (outside <= WIDE_OUTSIDE * depth) {
    const k = depth + outside;
    // With nothing outside, that is the search the dense candidates came from (`dense`, best first).
    const nearest =
      outside === 0
        ? c.dense
        : src
            .nearest(q.vector, { k, ef: Math.max(spec.efSearch, k), entityId: spec.entityId })
            .map((h) => h.id);
    let kept = 0;
    for (const id of nearest) {
      const m = src.memory(id);
      if (m === undefined || !inWindow(m)) continue;
      found.set(m.id, m);
      if (++kept === depth) break;
    }
  } else
    for (const m of src.occurredBetween(startUs, endUs, spec.entityId, TIME_SCAN_MAX))
      found.set(m.id, m);
  const scored = [...found.values()].map((m) => ({ id: m.id, sim: cosine(m) }));
  scored.sort((a, b) => b.sim - a.sim);
  return {
    dated: (m) => named.has(m.id) || inWindow(m),
    best: scored.slice(0, depth).map((h) => h.id),
  };
}

export function temporal(src: RecallSource, spec: StrategySpec): Candidate[] {
  const start = spec.timeRange?.startUs ?? Number.NEGATIVE_INFINITY;
  const end = spec.timeRange?.endUs ?? Number.POSITIVE_INFINITY;
  const out: Candidate[] = [];
  for (const memory of src.newestFirst(spec.entityId)) {
    if (memory.occurredAt > end) continue;
    if (memory.occurredAt < start || out.length === spec.topK) break;
    out.push({
      memory,
      detail: { strategy: 'temporal', timestamp: memory.occurredAt, rank: out.length + 1 },
    });
  }
  return out;
}

/**
 * Breadth-first over stored edges in both directions from the seed, filtered by edge type. The
 * walk stops the moment `top_k` memories are found: breadth-first order already makes them the
 * nearest ones, and finishing the level would visit every neighbour of any hub on the way.
 */
export function causal(src: RecallSource, cue: Float32Array, spec: StrategySpec): Candidate[] {
  const seed = seedOf(src, cue, spec);
  const allowed = spec.edgeTypes ? new Set<EdgeType>(spec.edgeTypes) : null;
  const visited = new Set<string>([seed.id]);
  const out: Candidate[] = [];
  let frontier = [seed.id];
  let sawEdge = false;
  /** Takes one neighbour; true when the walk is complete. */
  const reach = (other: string, type: EdgeType, depth: number, next: string[]): boolean => {
    sawEdge = true;
    if (visited.has(other)) return false;
    visited.add(other);
    const memory = src.memory(other);
    if (!memory || memory.supersededBy !== null) return false;
    next.push(other);
    // The filter chooses results; the walk still goes through the memories it rejects.
    if (!src.accepts(memory)) return false;
    out.push({ memory, detail: { strategy: 'causal', depth, edge_type: type, seed_id: seed.id } });
    return out.length >= spec.topK;
  };
  walk: for (let depth = 1; depth <= spec.maxDepth && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const e of src.outgoing(id)) {
        if (
          (allowed === null || allowed.has(e.edge_type)) &&
          reach(e.target_id, e.edge_type, depth, next)
        )
          break walk;
      }
      for (const e of src.incoming(id)) {
        if (
          (allowed === null || allowed.has(e.edge_type)) &&
          reach(e.source_id, e.edge_type, depth, next)
        )
          break walk;
      }
    }
    frontier = next;
  }
  if (!sawEdge) {
    const which = allowed ? ` of type ${[...allowed].join(', ')}` : '';
    throw new StrategyFailure(
      `the seed memory ${seed.id} has no edges${which}; the causal graph is empty there`,
    );
  }
  return out;
}

function seedOf(src: RecallSource, cue: Float32Array, spec: StrategySpec): MemoryRecord {
  if (spec.seedId !== null) {
    const m = src.memory(spec.seedId);
    if (!m) throw new StrategyFailure(`seed_memory_id ${spec.seedId} not found`);
    return m;
  }
  const [nearest] = src.nearest(cue, { k: 1, ef: spec.efSearch, entityId: spec.entityId });
  const m = nearest ? src.memory(nearest.id) : undefined;
  if (!m)
    throw new StrategyFailure('no memory to seed the causal walk from (the workspace is empty)');
  return m;
}

/**
 * Analogical: candidates by embedding, re-ranked by
 *   α·embedding_similarity + (1 − α)·structural_similarity
 * where structure is compared with the cue's (its context, and its nearest memory's kind, entity
 * and edge-type profile); see recall/structure.ts.
 */
export function analogical(
  src: RecallSource,
  cue: Float32Array,
  cueContext: JsonObject | null,
  spec: StrategySpec,
): Candidate[] {
  const pool = src.nearest(cue, {
    k: Math.max(spec.topK * 4, 40),
    ef: Math.max(spec.efSearch, spec.topK * 4),
    entityId: spec.entityId,
  });
  const anchorId = pool[0]?.id;
  const anchor = anchorId === undefined ? undefined : src.memory(anchorId);
  const reference: Structure = structureOf(
    {
      context: cueContext ?? anchor?.context ?? {},
      kind: anchor?.kind ?? null,
      entityId: spec.entityId ?? anchor?.entityId ?? null,
    },
    anchor ? [...src.outgoing(anchor.id), ...src.incoming(anchor.id)] : [],
  );
  const ranked = pool.flatMap(({ id, sim }) => {
    const memory = src.memory(id);
    if (!memory) return [];
    const structural = structuralSimilarity(
      reference,
      structureOf(memory, [...src.outgoing(id), ...src.incoming(id)]),
    );
    const embedding = clamp01(sim);
    const blended = spec.alpha * embedding + (1 - spec.alpha) * structural;
    return [
      {
        memory,
        blended,
        detail: {
          strategy: 'analogical' as const,
          embedding_similarity: embedding,
          structural_similarity: structural,
        },
      },
    ];
  });
  ranked.sort((a, b) => b.blended - a.blended);
  return ranked.slice(0, spec.topK).map(({ memory, detail }) => ({ memory, detail }));
}
