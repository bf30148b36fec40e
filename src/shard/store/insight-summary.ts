/**
 * @module shard/store/insight-summary — running totals of a large insight's sources: the sum of
 * their embeddings and, per term, how many of their texts hold it. Losing a few sources then costs
 * those sources (subtract them), not a pass over every source that remains: the insight's centroid
 * and distinguishing terms follow from the totals. Kept in memory only, built on the first loss
 * after start-up or after the insight was written by anything else (see Workspace.insightSummaries).
 */
import type { MemoryRecord } from '../../model/memory.ts';
import { documentCounts, tokens } from '../../analysis/summarize.ts';

export class InsightSummary {
  /** Which version of the insight the totals describe (see {@link versionKey}). */
  version: string;
  readonly sum: Float64Array;
  readonly terms: Map<string, number>;
  /** Sources counted in the totals. */
  count: number;
  /** The largest embedding norm among the sources counted (sources only leave, so it stays a bound). */
  readonly maxNorm: number;
  /** The sources nearest the centroid at the last scan of them (ops/insight-sources `nearestSources`). */
  near: NearPool | null = null;

  private constructor(
    version: string,
    sum: Float64Array,
    terms: Map<string, number>,
    count: number,
    maxNorm: number,
  ) {
    this.version = version;
    this.sum = sum;
    this.terms = terms;
    this.count = count;
    this.maxNorm = maxNorm;
  }

  /** Totals over `sources` (present memories only): one pass over each. */
  static of(insight: MemoryRecord, sources: readonly MemoryRecord[]): InsightSummary {
    const sum = new Float64Array(insight.embedding.length);
    let maxNorm = 0;
    for (const s of sources) {
      addInto(sum, s.embedding, 1);
      let sq = 0;
      for (const v of s.embedding) sq += v * v;
      maxNorm = Math.max(maxNorm, Math.sqrt(sq));
    }
    return new InsightSummary(
      versionKey(insight),
      sum,
      documentCounts(sources.map((s) => s.content)),
      sources.length,
      maxNorm,
    );
  }

  /** Takes a source out of the totals (and out of the nearest sources kept). */
  remove(source: MemoryRecord): void {
    this.near?.ids.delete(source.id);
    addInto(this.sum, source.embedding, -1);
    for (const w of new Set(tokens(source.content))) {
      const n = (this.terms.get(w) ?? 0) - 1;
      if (n > 0) this.terms.set(w, n);
      else this.terms.delete(w);
    }
    this.count -= 1;
  }

  /** The normalised sum: the sources' centroid. */
  centroid(): Float32Array {
    let norm = 0;
    for (const v of this.sum) norm += v * v;
    norm = Math.sqrt(norm) || 1;
    return Float32Array.from(this.sum, (v) => v / norm);
  }
}

/**
 * The sources nearest an insight's centroid when they were last scanned: the centroid then, their
 * ids (less those lost since), and `floor`, the lowest similarity among them, which no source left
 * out of them reached; `complete` when the scan found fewer than it keeps (every source is in).
 */
export interface NearPool {
  centre: Float32Array;
  ids: Set<string>;
  floor: number;
  complete: boolean;
}

/** Identifies one written version of a memory: every rewrite moves its clock or its update time. */
export function versionKey(m: MemoryRecord): string {
  return `${m.logicalClock}:${m.updatedAt}`;
}

function addInto(sum: Float64Array, v: Float32Array, sign: number): void {
  const n = Math.min(sum.length, v.length);
  for (let i = 0; i < n; i++) sum[i] = (sum[i] as number) + sign * (v[i] as number);
}
