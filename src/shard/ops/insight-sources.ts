/**
 * @module shard/ops/insight-sources — keeps insights true to the sources they still have. An
 * insight quotes its sources (extractive) or paraphrases them (model-written), so when a source
 * is forgotten, or vanishes while a reflection runs, the insight is written again in the shard,
 * extractively, from the sources that remain; an insight left with none is removed, and so are
 * the superseded versions of an affected insight (they quote the same text). From
 * INCREMENTAL_MIN_SOURCES sources on, a loss is taken out of running totals (store/insight-summary)
 * instead of rereading every source kept, and the quoted statements are chosen among the
 * CENTRAL_CANDIDATES sources nearest the new centroid (docs/architecture-notes.md, Persistence).
 * Either way the rewrite is logged as an `unsource` record: the sources lost, not those kept.
 */
import { createHash } from 'node:crypto';
import type { JsonObject, MemoryRecord } from '../../model/memory.ts';
import {
  centralStatements,
  distinguishingTerms,
  extractiveInsight,
  topTerms,
} from '../../analysis/summarize.ts';
import type { Neighbour } from '../index/vector-index.ts';
import type { LiveRecord } from '../store/records.ts';
import { InsightSummary, versionKey } from '../store/insight-summary.ts';
import type { Workspace } from '../store/workspace.ts';

/** Insights left with at least this many sources are rewritten from running totals (see the module note). */
export const INCREMENTAL_MIN_SOURCES = 512;
/** Sources nearest an incrementally rewritten insight's centroid considered for its quoted statements. */
const CENTRAL_CANDIDATES = 24;
/** Up to this many sources left, those nearest the centroid are found by an exact scan of them. */
const EXACT_SOURCES_MAX = 4096;
/** Sources nearest the centroid kept between losses, so that most losses rescore these alone (nearestSources). */
const NEAR_POOL = 4 * CENTRAL_CANDIDATES;

export interface SourceLoss {
  records: LiveRecord[];
  /** Insights (and their versions) removed; each has a tombstone among `records`. */
  removed: number;
  /** Source memories whose text or vector was read to rewrite insights: the work the loss cost. */
  visited: number;
  /** Source vectors compared with a rewritten insight's centroid to choose what it quotes. */
  scored: number;
}

/** Records that rewrite or remove every insight drawn from any of `gone` (ids about to be deleted). */
export function insightsAfterLoss(
  w: Workspace,
  ws: string,
  gone: ReadonlySet<string>,
  opts: { now: number; criteria: JsonObject },
): SourceLoss {
  const affected = new Set<string>();
  for (const id of gone) {
    for (const e of w.graph.incoming(id))
      if (e.edge_type === 'insight_from' && !gone.has(e.source_id)) affected.add(e.source_id);
  }
  const out: SourceLoss = { records: [], removed: 0, visited: 0, scored: 0 };
  const remove = (m: MemoryRecord): void => {
    out.records.push({ t: 'del', ws, id: m.id });
    out.records.push({
      t: 'tomb',
      ws,
      tomb: {
        memory_id: m.id,
        forgotten_at: opts.now,
        criteria: { ...opts.criteria, source_forgotten: true },
        content_sha256: sha256(m.content),
      },
    });
    out.removed += 1;
  };
  for (const id of affected) {
    const m = w.memories.get(id);
    if (m?.kind !== 'insight') continue;
    if (m.supersededBy !== null) {
      if (!gone.has(m.supersededBy)) remove(m);
      continue;
    }
    for (const vid of w.versions.get(m.id) ?? []) {
      const v = w.memories.get(vid);
      if (v && !gone.has(vid)) remove(v);
    }
    const left: string[] = [];
    const lost: string[] = [];
    for (const s of m.sourceMemoryIds ?? []) (gone.has(s) ? lost : left).push(s);
    if (left.length >= INCREMENTAL_MIN_SOURCES) {
      const next = rewrittenFromTotals(w, m, { left, lost, gone, now: opts.now }, out);
      out.records.push({ t: 'unsource', ws, m: next, lost });
      continue;
    }
    const remaining = left.filter((s) => w.memories.has(s));
    out.visited += remaining.length;
    if (remaining.length === 0) remove(m);
    else {
      // Logged as the sources lost (those gone and any already missing), not the list kept.
      const kept = new Set(remaining);
      const dropped = (m.sourceMemoryIds ?? []).filter((s) => !kept.has(s));
      out.records.push({
        t: 'unsource',
        ws,
        m: rewrittenInsight(w, m, remaining, opts.now),
        lost: dropped,
      });
    }
  }
  return out;
}

/**
 * The large insight `m` written again without its `lost` sources, from its running totals (built
 * first when missing or stale): reads the lost sources and CENTRAL_CANDIDATES others, not all.
 */
function rewrittenFromTotals(
  w: Workspace,
  m: MemoryRecord,
  loss: { left: string[]; lost: readonly string[]; gone: ReadonlySet<string>; now: number },
  out: SourceLoss,
): MemoryRecord {
  let totals = w.insightSummaries.get(m.id);
  if (!totals || totals.version !== versionKey(m)) {
    const all = present(w, m.sourceMemoryIds ?? []);
    out.visited += all.length;
    totals = InsightSummary.of(m, all);
    w.insightSummaries.set(m.id, totals);
  }
  for (const s of present(w, loss.lost)) totals.remove(s);
  out.visited += loss.lost.length;
  const centroid = totals.centroid();
  // The sources nearest the centroid: found exactly while they are few (a graph walk filtered
  // to them visits ever more of the workspace as it grows past them: with 2,000 sources a forget
  // held the shard 4.2 ms at 15k memories, 2.2 ms with the scan), mostly without a scan of them
  // (nearestSources), else searched in the graph.
  const near =
    loss.left.length <= EXACT_SOURCES_MAX
      ? nearestSources(w, totals, centroid, loss.left, out)
      : w.vectors.search(centroid, {
          k: CENTRAL_CANDIDATES,
          ef: 4 * CENTRAL_CANDIDATES,
          filter: setOf(loss.left),
        });
  let candidates = present(
    w,
    near.map((n) => n.id),
  );
  // Sources all superseded (so outside the vector index): quote the first that remain.
  if (candidates.length === 0) candidates = present(w, loss.left.slice(0, CENTRAL_CANDIDATES));
  out.visited += candidates.length;
  const central = centralStatements(
    candidates.map((_, i) => i),
    (i) => (candidates[i] as MemoryRecord).embedding,
    centroid,
  );
  const tags = topTerms(totals.terms, totals.count, totals.terms, totals.count);
  const next: MemoryRecord = {
    ...m,
    content: extractiveInsight({
      texts: candidates.map((s) => s.content),
      central,
      tags,
      size: loss.left.length,
    }),
    embedding: centroid,
    context: {
      ...m.context,
      source_count: loss.left.length,
      tags,
      method: 'extractive',
      rewritten_at_us: loss.now,
    },
    sourceMemoryIds: loss.left,
    updatedAt: loss.now,
    logicalClock: m.logicalClock + 1,
  };
  totals.version = versionKey(next);
  return next;
}

/**
 * The CENTRAL_CANDIDATES sources nearest `centroid` among `left`, as an exact scan of them finds
 * them, without the scan on most losses. A scan keeps the NEAR_POOL nearest and the lowest
 * similarity among them (the floor): every source outside scored at most the floor. A loss moves
 * the centroid a little (about 1/n of a source); once it has moved by d since the scan, a source
 * outside can score at most floor + d × the sources' largest norm (Cauchy–Schwarz), so while the
 * pool's k-th best scores above that, the pool's best k are the scan's. Otherwise, scan again.
 */
function nearestSources(
  w: Workspace,
  totals: InsightSummary,
  centroid: Float32Array,
  left: readonly string[],
  out: SourceLoss,
): Neighbour[] {
  const pool = totals.near;
  if (pool) {
    let drift = 0;
    for (let i = 0; i < centroid.length; i++)
      drift += ((centroid[i] as number) - (pool.centre[i] as number)) ** 2;
    const ranked = w.vectors.search(centroid, { k: pool.ids.size, ef: 0, only: pool.ids });
    out.scored += pool.ids.size;
    const kth = ranked[CENTRAL_CANDIDATES - 1];
    // The margin covers rounding in the similarities (float32 vectors summed in doubles).
    const outside = pool.floor + Math.sqrt(drift) * totals.maxNorm + 1e-6;
    if (pool.complete || (kth !== undefined && kth.sim > outside))
      return ranked.slice(0, CENTRAL_CANDIDATES);
  }
  const ranked = w.vectors.search(centroid, { k: NEAR_POOL, ef: 0, only: left });
  out.scored += left.length;
  const complete = ranked.length < NEAR_POOL;
  totals.near = {
    centre: centroid,
    ids: new Set(ranked.map((n) => n.id)),
    floor: complete ? Number.NEGATIVE_INFINITY : (ranked[ranked.length - 1] as Neighbour).sim,
    complete,
  };
  return ranked.slice(0, CENTRAL_CANDIDATES);
}

function setOf(ids: readonly string[]): (id: string) => boolean {
  const set = new Set(ids);
  return (id) => set.has(id);
}

function present(w: Workspace, ids: readonly string[]): MemoryRecord[] {
  const out: MemoryRecord[] = [];
  for (const id of ids) {
    const m = w.memories.get(id);
    if (m) out.push(m);
  }
  return out;
}

/**
 * The insight written again from `sources` (all present in `w`): extractive text from their
 * central statements, the normalised centroid of their embeddings (the old embedding encoded the
 * old text), and the context's counts and tags recomputed.
 */
export function rewrittenInsight(
  w: Workspace,
  m: MemoryRecord,
  sources: readonly string[],
  now: number,
): MemoryRecord {
  const members = sources.map((id) => w.memories.get(id) as MemoryRecord);
  const dim = m.embedding.length;
  const centroid = new Float32Array(dim);
  for (const s of members)
    for (let i = 0; i < dim; i++) centroid[i] = (centroid[i] as number) + (s.embedding[i] ?? 0);
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += (centroid[i] as number) ** 2;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dim; i++) centroid[i] = (centroid[i] as number) / norm;
  const texts = members.map((s) => s.content);
  const central = centralStatements(
    members.map((_, i) => i),
    (i) => (members[i] as MemoryRecord).embedding,
    centroid,
  );
  const tags = distinguishingTerms(texts, texts);
  return {
    ...m,
    content: extractiveInsight({ texts, central, tags, size: members.length }),
    embedding: centroid,
    context: {
      ...m.context,
      source_count: members.length,
      tags,
      method: 'extractive',
      rewritten_at_us: now,
    },
    sourceMemoryIds: [...sources],
    updatedAt: now,
    logicalClock: m.logicalClock + 1,
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
