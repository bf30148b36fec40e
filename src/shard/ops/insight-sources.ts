/**
 * @module shard/ops/insight-sources — keeps insights true to the sources they still have. An
 * insight quotes its sources (extractive) or paraphrases them (model-written), so when a source
 * is forgotten, or vanishes while a reflection runs, the insight is written again in the shard,
 * extractively, from the sources that remain; an insight left with none is removed. Superseded
 * versions of an affected insight go too: they quote the same text.
 */
import { createHash } from 'node:crypto';
import type { JsonObject, MemoryRecord } from '../../model/memory.ts';
import { centralStatements, distinguishingTerms, extractiveInsight } from '../../reflect/summarize.ts';
import type { LogRecord } from '../store/records.ts';
import { toStored } from '../store/records.ts';
import type { Workspace } from '../store/workspace.ts';

export interface SourceLoss {
  records: LogRecord[];
  /** Insights (and their versions) removed; each has a tombstone among `records`. */
  removed: number;
}

/** Records that rewrite or remove every insight drawn from any of `gone` (ids about to be deleted). */
export function insightsAfterLoss(w: Workspace, ws: string, gone: ReadonlySet<string>, opts: { now: number; criteria: JsonObject }): SourceLoss {
  const affected = new Set<string>();
  for (const id of gone) {
    for (const e of w.graph.incoming(id)) if (e.edge_type === 'insight_from' && !gone.has(e.source_id)) affected.add(e.source_id);
  }
  const out: SourceLoss = { records: [], removed: 0 };
  const remove = (m: MemoryRecord): void => {
    out.records.push({ t: 'del', ws, id: m.id });
    out.records.push({ t: 'tomb', ws, tomb: { memory_id: m.id, forgotten_at: opts.now, criteria: { ...opts.criteria, source_forgotten: true }, content_sha256: sha256(m.content) } });
    out.removed += 1;
  };
  for (const id of affected) {
    const m = w.memories.get(id);
    if (!m || m.kind !== 'insight') continue;
    if (m.supersededBy !== null) {
      if (!gone.has(m.supersededBy)) remove(m);
      continue;
    }
    for (const vid of w.versions.get(m.id) ?? []) {
      const v = w.memories.get(vid);
      if (v && !gone.has(vid)) remove(v);
    }
    const remaining = (m.sourceMemoryIds ?? []).filter((s) => !gone.has(s) && w.memories.has(s));
    if (remaining.length === 0) remove(m);
    else out.records.push({ t: 'put', ws, m: toStored(rewrittenInsight(w, m, remaining, opts.now)) });
  }
  return out;
}

/**
 * The insight written again from `sources` (all present in `w`): extractive text from their
 * central statements, the normalised centroid of their embeddings (the old embedding encoded the
 * old text), and the context's counts and tags recomputed.
 */
export function rewrittenInsight(w: Workspace, m: MemoryRecord, sources: readonly string[], now: number): MemoryRecord {
  const members = sources.map((id) => w.memories.get(id) as MemoryRecord);
  const dim = m.embedding.length;
  const centroid = new Float32Array(dim);
  for (const s of members) for (let i = 0; i < dim; i++) centroid[i] = (centroid[i] as number) + (s.embedding[i] ?? 0);
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
    context: { ...m.context, source_count: members.length, tags, method: 'extractive', rewritten_at_us: now },
    sourceMemoryIds: [...sources],
    updatedAt: now,
    logicalClock: m.logicalClock + 1,
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
