/**
 * @module shard/index/lexical-scores — one query's scores over the lexical index, computed when
 * read: a memory's BM25 score and match from its own terms in the forward index (the query's terms
 * in query order: the arithmetic of the full scan this replaced, to the bit), and the best k by a
 * pruned term-at-a-time walk (MaxScore): terms by decreasing bound on what they can add, each
 * memory met summing an upper bound of its score; a memory is scored exactly once its walked terms
 * outweigh the terms left (or at the end), dropped once its bound is below the k-th best accepted
 * score, and no memory is admitted once that score is above the bounds of the terms left. So a
 * query costs about the postings of its rarer words, not the whole lists of its common ones.
 */
import { docOfPosting, slotOfPosting } from './postings.ts';
import { BoundedTop, topK } from './top-k.ts';
import type { LexicalHit, LexicalScores, LexicalQuery, IndexView } from './lexical-view.ts';

/** BM25 term-frequency saturation and length normalisation (the usual defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * Relative slack between the bounds the walk compares and the k-th score (which it lowers by this
 * much): far above the rounding of a sum of a few hundred terms, so a bound in floating point is
 * never below the score it bounds.
 */
const BOUND_SLACK = 1e-9;

/**
 * Below this many postings in all, a query's lists are scanned whole at once (every memory in them
 * scored, the way the index scored before it pruned): cheaper than pruning for a short query over a
 * small store, where recall then reads hundreds of memories' scores. A bound, so the scan's cost
 * does not grow with the store.
 */
export const SCAN_POSTINGS = 4096;

/**
 * Roughly what scoring one memory from the forward index costs, in postings walked (from a profile
 * at 100k memories); it decides when the walk stops, not what it returns.
 */
const EXACT_COST = 32;

/** BM25's part of one term: saturated term frequency over the length-normalised document. */
function bm25(tf: number, len: number, avg: number): number {
  return (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * len) / avg));
}

export class QueryScores implements LexicalScores {
  readonly #q: LexicalQuery;
  readonly #v: IndexView;
  readonly #check: () => void;
  readonly #stamp: number;
  /** Per query term: its term id (-1 when no memory has it), and the next query term with the same id. */
  readonly #ids: Int32Array;
  readonly #sameTerm: Int32Array;
  /** Per query term, the earlier terms of its slot (none for a cue word itself). */
  readonly #earlier: number[][];
  /** Per query term, its frequency slot in the document being scored (-1: absent), and whether it is credited. */
  readonly #slotAt: Int32Array;
  readonly #credited: Uint8Array;
  /** Per query term, its IDF and whether its slot has earlier terms. */
  readonly #idfs: Float64Array;
  readonly #hasEarlier: Uint8Array;
  /** After a full scan (see {@link SCAN_POSTINGS}), the memories it scored; null when pruning. */
  readonly #scanned: number[] | null;
  /** What the last {@link QueryScores.#credit} summed. */
  #sum = 0;
  #shareSum = 0;

  constructor(q: LexicalQuery, view: IndexView, check: () => void) {
    this.#q = q;
    this.#v = view;
    this.#check = check;
    const { scratch } = view;
    this.#stamp = scratch.next();
    const n = q.terms.length;
    this.#ids = new Int32Array(n).fill(-1);
    this.#sameTerm = new Int32Array(n).fill(-1);
    for (let t = n - 1; t >= 0; t--) {
      const id = view.terms.idOf((q.terms[t] as { term: string }).term);
      if (id === undefined) continue;
      this.#ids[t] = id;
      this.#sameTerm[t] = scratch.termAt[id] === this.#stamp ? (scratch.termPos[id] as number) : -1;
      scratch.termAt[id] = this.#stamp;
      scratch.termPos[id] = t;
    }
    this.#earlier = q.terms.map(({ slot }, t) =>
      q.terms.flatMap((x, e) => (e < t && x.slot === slot ? [e] : [])),
    );
    this.#slotAt = new Int32Array(n).fill(-1);
    this.#credited = new Uint8Array(n);
    this.#idfs = Float64Array.from(q.terms, ({ idf }) => idf);
    this.#hasEarlier = Uint8Array.from(this.#earlier, (e) => (e.length > 0 ? 1 : 0));
    let postings = 0;
    for (const id of this.#ids) if (id >= 0) postings += view.terms.count(id);
    this.#scanned = n <= 32 && postings <= view.scanPostings ? this.#scan() : null;
  }

  /**
   * Scores every memory in the query's lists, term by term in query order: a term adds to a memory
   * unless an earlier term of its slot did (`held`, one bit per query term).
   */
  #scan(): number[] {
    const { scratch, idOf, terms, len, avg } = this.#v;
    const { scoredAt, score, share, held } = scratch;
    const scanned: number[] = [];
    for (let t = 0; t < this.#ids.length; t++) {
      const p = (this.#ids[t] as number) < 0 ? undefined : terms.list(this.#ids[t] as number);
      const list = p === undefined ? [] : typeof p === 'number' ? [p] : p;
      const idf = this.#idfs[t] as number;
      const earlier = this.#hasEarlier[t] === 1 ? (this.#earlier[t] as number[]) : [];
      for (let j = 0; j < list.length; j++) {
        const d = docOfPosting(list[j] as number);
        if (idOf[d] === undefined) continue;
        if (scoredAt[d] !== this.#stamp) {
          scoredAt[d] = this.#stamp;
          score[d] = 0;
          share[d] = 0;
          held[d] = 0;
          scanned.push(d);
        }
        if (earlier.some((e) => (((held[d] as number) >>> e) & 1) === 1)) continue;
        const tf = slotOfPosting(list[j] as number) / 2;
        score[d] =
          (score[d] as number) +
          idf *
            ((tf * (BM25_K1 + 1)) /
              (tf + BM25_K1 * (1 - BM25_B + (BM25_B * (len[d] as number)) / avg)));
        share[d] = (share[d] as number) + idf;
        held[d] = (held[d] as number) | (1 << t);
      }
    }
    return scanned;
  }

  top(k: number, accept: ((id: string) => boolean) | null): LexicalHit[] {
    this.#check();
    const { scratch, idOf } = this.#v;
    const { score, offeredAt } = scratch;
    const best = new BoundedTop(
      k,
      (a, b) => (score[a] as number) < (score[b] as number) || (score[a] === score[b] && a > b),
    );
    if (this.#scanned !== null) {
      const ranked = topK(
        this.#scanned,
        score,
        k,
        accept === null ? null : (d) => accept(idOf[d] as string),
      );
      return ranked.map((d) => ({
        id: idOf[d] as string,
        score: score[d] as number,
        norm: this.#matchOf(d),
      }));
    }
    const walk = scratch.next();
    const offer = (d: number): void => {
      if (offeredAt[d] === walk) return;
      offeredAt[d] = walk;
      this.#score(d);
      if (best.admits(d) && (accept === null || accept(idOf[d] as string))) best.add(d);
    };
    const { met, left } = this.#walk(walk, best, offer);
    this.#finish(walk, met, left, best, offer);
    return best
      .sorted()
      .map((d) => ({ id: idOf[d] as string, score: score[d] as number, norm: this.#matchOf(d) }));
  }

  /**
   * Walks the query's terms by decreasing bound, summing in `acc` what each memory met may have
   * (an upper bound: every walked term it holds). A memory whose walked terms already outweigh the
   * bounds of the terms left is scored and offered to the heap at once; one that cannot reach the
   * k-th best accepted score even with every term left is dropped. Once the k-th best accepted score
   * is above the bounds of the terms left, no memory not yet met can reach it: the walk admits no
   * more, and goes on only while the memories still open cost more to score than the postings left
   * to walk. Returns the memories met and the bound on what they may still gain.
   */
  #walk(
    walk: number,
    best: BoundedTop,
    offer: (d: number) => void,
  ): { met: number[]; left: number } {
    const { scratch, idOf, terms, len, avg } = this.#v;
    const { seenAt, offeredAt, acc } = scratch;
    const { order, rest, postings } = this.#walkOrder();
    let kth = -Infinity;
    const offered = (d: number): void => {
      offer(d);
      kth = this.#kth(best);
    };
    let met: number[] = [];
    let admitting = true;
    for (let i = 0; i < order.length; i++) {
      const bound = rest[i] as number;
      if (bound < kth) admitting = false;
      if (!admitting) {
        met = met.filter((d) => offeredAt[d] !== walk && (acc[d] as number) + bound >= kth);
        if (met.length * EXACT_COST <= (postings[i] as number)) return { met, left: bound };
      }
      const after = rest[i + 1] as number;
      const t = order[i] as number;
      const p = terms.list(this.#ids[t] as number);
      const list = p === undefined ? [] : typeof p === 'number' ? [p] : p;
      const idf = (this.#q.terms[t] as { idf: number }).idf;
      for (let j = 0; j < list.length; j++) {
        const posting = list[j] as number;
        const d = docOfPosting(posting);
        if (offeredAt[d] === walk || idOf[d] === undefined) continue;
        const tf = slotOfPosting(posting) / 2;
        const c =
          idf *
          ((tf * (BM25_K1 + 1)) /
            (tf + BM25_K1 * (1 - BM25_B + (BM25_B * (len[d] as number)) / avg)));
        let a: number;
        if (seenAt[d] === walk) a = (acc[d] as number) + c;
        else if (!admitting) continue;
        else {
          seenAt[d] = walk;
          a = c;
          met.push(d);
        }
        if (a + after < kth) acc[d] = -Infinity;
        else {
          acc[d] = a;
          if (a <= after) continue;
          offered(d);
          if (bound < kth) admitting = false;
        }
      }
    }
    return { met, left: rest[order.length] as number };
  }

  /**
   * Scores and offers the memories met that were not, unless what they hold of the walked terms
   * plus `left` cannot reach the k-th best accepted score; the most promising first, so that the
   * k-th best is high when the others are checked.
   */
  #finish(
    walk: number,
    met: number[],
    left: number,
    best: BoundedTop,
    offer: (d: number) => void,
  ): void {
    const { offeredAt, acc } = this.#v.scratch;
    const open = (d: number): boolean => offeredAt[d] !== walk && (acc[d] as number) > -Infinity;
    const promising = new BoundedTop(
      best.capacity,
      (a, b) => (acc[a] as number) < (acc[b] as number) || (acc[a] === acc[b] && a > b),
    );
    for (const d of met) if (open(d) && promising.admits(d)) promising.add(d);
    for (const d of promising.sorted()) offer(d);
    for (const d of met) if (open(d) && (acc[d] as number) + left >= this.#kth(best)) offer(d);
  }

  /** The k-th best accepted score lowered by the slack (-Infinity until k are accepted): what a bound must reach. */
  #kth(best: BoundedTop): number {
    const worst = best.full ? best.worst : undefined;
    return worst === undefined
      ? -Infinity
      : (this.#v.scratch.score[worst] as number) / (1 + BOUND_SLACK);
  }

  norm(id: string): number {
    this.#check();
    const d = this.#v.docOf.get(id);
    if (d === undefined) return 0;
    // After a full scan, a memory it did not score holds none of the terms.
    if (this.#scanned !== null && this.#v.scratch.scoredAt[d] !== this.#stamp) return 0;
    this.#score(d);
    return this.#matchOf(d);
  }

  union(ids: Iterable<string>): number {
    this.#check();
    const n = this.#q.terms.length;
    const all = new Uint8Array(n);
    for (const id of ids) {
      const d = this.#v.docOf.get(id);
      if (d === undefined) continue;
      this.#credit(d);
      for (let t = 0; t < n; t++) all[t] = (all[t] as number) | (this.#credited[t] as number);
      this.#credited.fill(0);
    }
    let sum = 0;
    this.#q.terms.forEach(({ idf }, t) => {
      if (all[t] === 1 && !(this.#earlier[t] as number[]).some((e) => all[e] === 1)) sum += idf;
    });
    return this.#q.idfSum > 0 ? Math.min(1, sum / this.#q.idfSum) : 0;
  }

  #anyCredited(terms: number[]): boolean {
    for (const e of terms) if (this.#credited[e] === 1) return true;
    return false;
  }

  #matchOf(d: number): number {
    return this.#q.idfSum > 0
      ? Math.min(1, (this.#v.scratch.share[d] as number) / this.#q.idfSum)
      : 0;
  }

  /**
   * The query's terms that some memory holds, by decreasing bound (idf × BM25 at the term's highest
   * frequency in its shortest document), and per position the bound of that term and all after it.
   * A query with a weight that is not positive (only a hand-built one) is walked without bounds.
   */
  #walkOrder(): { order: number[]; rest: Float64Array; postings: Float64Array } {
    const { terms } = this.#v;
    const bound = this.#q.terms.map(({ idf }, t) => {
      const id = this.#ids[t] as number;
      return id < 0 ? 0 : idf * bm25(terms.maxSlot(id) / 2, terms.minLen(id), this.#v.avg);
    });
    const order = bound
      .flatMap((_, t) => ((this.#ids[t] as number) < 0 ? [] : [t]))
      .sort((a, b) => (bound[b] as number) - (bound[a] as number) || a - b);
    const rest = new Float64Array(order.length + 1);
    const postings = new Float64Array(order.length + 1);
    for (let i = order.length - 1; i >= 0; i--) {
      const t = order[i] as number;
      rest[i] = (rest[i + 1] as number) + (bound[t] as number);
      const p = terms.list(this.#ids[t] as number);
      postings[i] =
        (postings[i + 1] as number) + (p === undefined ? 0 : typeof p === 'number' ? 1 : p.length);
    }
    if (this.#q.terms.some(({ idf }) => !(idf > 0 && idf < Infinity))) rest.fill(Infinity);
    return { order, rest, postings };
  }

  /** Scores a document once per query: BM25 and the share of the query's IDF it is credited with. */
  #score(d: number): void {
    const scratch = this.#v.scratch;
    if (scratch.scoredAt[d] === this.#stamp) return;
    this.#credit(d);
    this.#credited.fill(0);
    scratch.scoredAt[d] = this.#stamp;
    scratch.score[d] = this.#sum;
    scratch.share[d] = this.#shareSum;
  }

  /**
   * Marks the query terms the document is credited with (in `#credited`, for the caller to clear)
   * and sums their BM25 parts and IDFs in query order (into `#sum` and `#shareSum`): a term counts
   * once, and a variant only where no earlier term of its slot did.
   */
  #credit(d: number): void {
    const { forward, len, avg } = this.#v;
    const { termAt, termPos } = this.#v.scratch;
    const { terms: ids, tfs } = forward;
    const slotAt = this.#slotAt;
    const sameTerm = this.#sameTerm;
    const at = forward.start(d);
    const end = at + forward.count(d);
    for (let i = at; i < end; i++) {
      const id = ids[i] as number;
      if (termAt[id] !== this.#stamp) continue;
      for (let t = termPos[id] as number; t >= 0; t = sameTerm[t] as number)
        slotAt[t] = tfs[i] as number;
    }
    // BM25's length normalisation, as bm25() computes it.
    const lengthNorm = BM25_K1 * (1 - BM25_B + (BM25_B * (len[d] as number)) / avg);
    const idfs = this.#idfs;
    let score = 0;
    let share = 0;
    for (let t = 0; t < slotAt.length; t++) {
      const slot = slotAt[t] as number;
      if (slot < 0) continue;
      slotAt[t] = -1;
      if (this.#hasEarlier[t] === 1 && this.#anyCredited(this.#earlier[t] as number[])) continue;
      this.#credited[t] = 1;
      const idf = idfs[t] as number;
      const tf = slot / 2;
      score += idf * ((tf * (BM25_K1 + 1)) / (tf + lengthNorm));
      share += idf;
    }
    this.#sum = score;
    this.#shareSum = share;
  }
}
