/**
 * @module shard/index/score-scratch — the per-document and per-term arrays that the lexical index's
 * queries (shard/index/lexical-scores.ts) reuse, one set per index, grown with it and stamped per
 * query and per walk so that nothing is cleared between queries.
 */

/**
 * Arrays reused by every query of one index, stamped so that none is cleared: per document, its
 * score and share for the query that stamped `scoredAt`, and for one walk of the postings whether
 * it was met (`seenAt`), what the walked terms may have given it (`acc`) and whether it was scored
 * for the walk's heap (`offeredAt`), or for a full scan the query terms credited to it (`held`); per term id, its first position in the query that stamped it.
 */
export class ScoreScratch {
  scoredAt = new Int32Array(64);
  score = new Float64Array(64);
  share = new Float64Array(64);
  seenAt = new Int32Array(64);
  offeredAt = new Int32Array(64);
  acc = new Float64Array(64);
  held = new Int32Array(64);
  termAt = new Int32Array(64);
  termPos = new Int32Array(64);
  #stamp = 0;

  /** Grows the arrays to n documents and `terms` term ids. */
  fit(n: number, terms: number): void {
    if (n > this.score.length) {
      const size = Math.max(n, this.score.length * 2);
      this.scoredAt = grown(new Int32Array(size), this.scoredAt);
      this.score = grown(new Float64Array(size), this.score);
      this.share = grown(new Float64Array(size), this.share);
      this.seenAt = grown(new Int32Array(size), this.seenAt);
      this.offeredAt = grown(new Int32Array(size), this.offeredAt);
      this.acc = grown(new Float64Array(size), this.acc);
      this.held = grown(new Int32Array(size), this.held);
    }
    if (terms > this.termAt.length) {
      const size = Math.max(terms, this.termAt.length * 2);
      this.termAt = grown(new Int32Array(size), this.termAt);
      this.termPos = grown(new Int32Array(size), this.termPos);
    }
  }

  /** A stamp no document or term holds yet. */
  next(): number {
    if (this.#stamp === 0x7fffffff) {
      this.#stamp = 0;
      for (const a of [this.scoredAt, this.seenAt, this.offeredAt, this.termAt]) a.fill(0);
    }
    return ++this.#stamp;
  }
}

function grown<T extends Int32Array | Float64Array>(next: T, old: T): T {
  next.set(old);
  return next;
}
