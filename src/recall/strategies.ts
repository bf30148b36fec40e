/**
 * @module recall/strategies — the four recall strategies as pure functions over a RecallSource.
 * Each returns candidate memories with their strategy detail; merging and scoring happen in
 * recall/merge.ts. A strategy that cannot run throws StrategyFailure, which becomes an entry in
 * `strategy_errors` instead of failing the call.
 */
import type { EdgeType } from '../model/edge.ts';
import type { JsonObject, MemoryRecord } from '../model/memory.ts';
import { clamp01 } from './scoring.ts';
import { structuralSimilarity, structureOf, type Structure } from './structure.ts';
import type { RecallSource, StrategyDetail, StrategySpec } from './types.ts';

export class StrategyFailure extends Error {
  override name = 'StrategyFailure';
}

export interface Candidate {
  memory: MemoryRecord;
  detail: StrategyDetail;
}

export function similarity(src: RecallSource, cue: Float32Array, spec: StrategySpec): Candidate[] {
  const hits = src.nearest(cue, { k: spec.topK, ef: Math.max(spec.efSearch, spec.topK), entityId: spec.entityId });
  return hits.flatMap(({ id, sim }) => {
    const memory = src.memory(id);
    if (!memory) return [];
    const relevance = clamp01(sim);
    return [{ memory, detail: { strategy: 'similarity', relevance, distance: 1 - relevance } }];
  });
}

export function temporal(src: RecallSource, spec: StrategySpec): Candidate[] {
  const start = spec.timeRange?.startUs ?? Number.NEGATIVE_INFINITY;
  const end = spec.timeRange?.endUs ?? Number.POSITIVE_INFINITY;
  const out: Candidate[] = [];
  for (const memory of src.newestFirst(spec.entityId)) {
    if (memory.createdAt > end) continue;
    if (memory.createdAt < start || out.length === spec.topK) break;
    out.push({ memory, detail: { strategy: 'temporal', timestamp: memory.createdAt, rank: out.length + 1 } });
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
        if ((allowed === null || allowed.has(e.edge_type)) && reach(e.target_id, e.edge_type, depth, next)) break walk;
      }
      for (const e of src.incoming(id)) {
        if ((allowed === null || allowed.has(e.edge_type)) && reach(e.source_id, e.edge_type, depth, next)) break walk;
      }
    }
    frontier = next;
  }
  if (!sawEdge) {
    const which = allowed ? ` of type ${[...allowed].join(', ')}` : '';
    throw new StrategyFailure(`the seed memory ${seed.id} has no edges${which}; the causal graph is empty there`);
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
  if (!m) throw new StrategyFailure('no memory to seed the causal walk from (the workspace is empty)');
  return m;
}

/**
 * Analogical: candidates by embedding, re-ranked by
 *   α·embedding_similarity + (1 − α)·structural_similarity
 * where structure is compared with the cue's (its context, and its nearest memory's kind, entity
 * and edge-type profile); see recall/structure.ts.
 */
export function analogical(src: RecallSource, cue: Float32Array, cueContext: JsonObject | null, spec: StrategySpec): Candidate[] {
  const pool = src.nearest(cue, { k: Math.max(spec.topK * 4, 40), ef: Math.max(spec.efSearch, spec.topK * 4), entityId: spec.entityId });
  const anchorId = pool[0]?.id;
  const anchor = anchorId === undefined ? undefined : src.memory(anchorId);
  const reference: Structure = structureOf(
    { context: cueContext ?? anchor?.context ?? {}, kind: anchor?.kind ?? null, entityId: spec.entityId ?? anchor?.entityId ?? null },
    anchor ? [...src.outgoing(anchor.id), ...src.incoming(anchor.id)] : [],
  );
  const ranked = pool.flatMap(({ id, sim }) => {
    const memory = src.memory(id);
    if (!memory) return [];
    const structural = structuralSimilarity(reference, structureOf(memory, [...src.outgoing(id), ...src.incoming(id)]));
    const embedding = clamp01(sim);
    const blended = spec.alpha * embedding + (1 - spec.alpha) * structural;
    return [{ memory, blended, detail: { strategy: 'analogical' as const, embedding_similarity: embedding, structural_similarity: structural } }];
  });
  ranked.sort((a, b) => b.blended - a.blended);
  return ranked.slice(0, spec.topK).map(({ memory, detail }) => ({ memory, detail }));
}


