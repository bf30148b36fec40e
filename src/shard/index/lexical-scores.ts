/**
 * @module shard/index/lexical-scores — one query's scores over the lexical index, computed lazily:
 * a memory's BM25 score and match come from its own terms in the forward index (the query's terms
 * in query order, the arithmetic of a full scan), and the best k by a pruned term-at-a-time walk:
 * terms by decreasing bound on what they can add, each new memory scored at once, a memory skipped
 * when its first term plus the bounds of the terms not yet walked cannot beat the k-th best accepted
 * score, and the walk stopped when no memory not yet seen can (MaxScore). So a query costs about
 * the postings of its rarer words and the memories they bring, not the lists of its common words.
 */
import type { ForwardIndex } from './forward.ts';
import { docOfPosting, slotOfPosting, type TermLists } from './postings.ts';
import { BoundedTop } from './top-k.ts';

/** BM25 term-frequency saturation and length normalisation (the usual defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * Relative slack on the bounds the walk compares against the k-th score: far above the rounding of
 * a sum of a few hundred terms, so a bound in floating point is never below the score it bounds.
 */
const BOUND_SLACK = 1e-9;

export interface LexicalHit {
  id: string;
  /** Raw BM25 score: what the lexical list is ranked by. */
  score: number;
  /** The memory's match in [0, 1]; see {@link LexicalIndex.score}. */
  norm: number;
}

/** Scores of one query: the best memories, and any memory's normalised score. */
export interface LexicalScores {
  top(k: number, accept: ((id: string) => boolean) | null): LexicalHit[];
  /** Normalised score of a memory (0 when it is not indexed or shares no term). */
  norm(id: string): number;
  /**
   * The match of several memories read as one text: the IDF-weighted share of the query's terms
   * that at least one of them holds (the union of their terms; 0 for none).
   */
  union(ids: Iterable<string>): number;
}

/**
 * A query: its distinct terms that occur in some memory with their IDF, and the IDF sum of all of
 * them. `slot` numbers the cue's words: a word one typo away from a cue word (see
 * {@link LexicalIndex.query}) shares that word's slot, and a memory is credited once per slot (the
 * first of the slot's terms it holds: the cue word itself before its variants).
 */
export interface LexicalQuery {
  terms: Array<{ term: string; idf: number; slot: number }>;
  idfSum: number;
}

/** What a query reads of the index; valid until the index changes (the scores check that first). */
export interface IndexView {
  readonly terms: TermLists;
  readonly forward: ForwardIndex;
  readonly docOf: ReadonlyMap<string, number>;
  readonly idOf: ReadonlyArray<string | undefined>;
  readonly len: Float32Array;
  /** Average document length (BM25's length normalisation). */
  readonly avg: number;
  readonly scratch: ScoreScratch;
}

/** Per-document arrays reused by every query of one index, stamped so that none is cleared. */
export class ScoreScratch {
  /** The stamp of the query whose `score` and `share` a document holds, and of the walk that saw it. */
  scoredAt = new Int32Array(64);
  seenAt = new Int32Array(64);
  score = new Float64Array(64);
  share = new Float64Array(64);
  #stamp = 0;

  /** Grows the arrays to n documents. */
  fit(n: number): void {
    if (n <= this.score.length) return;
    const size = Math.max(n, this.score.length * 2);
    this.scoredAt = grown(new Int32Array(size), this.scoredAt);
    this.seenAt = grown(new Int32Array(size), this.seenAt);
    this.score = grown(new Float64Array(size), this.score);
    this.share = grown(new Float64Array(size), this.share);
  }

  /** A stamp no document holds yet. */
  next(): number {
    if (this.#stamp === 0x7fffffff) {
      this.#stamp = 0;
      this.scoredAt.fill(0);
      this.seenAt.fill(0);
    }
    return ++this.#stamp;
  }
}

function grown<T extends Int32Array | Float64Array>(next: T, old: T): T {
  next.set(old);
  return next;
}

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
  readonly #firstOf = new Map<number, number>();
  /** Per query term, the earlier terms of its slot (none for a cue word itself). */
  readonly #earlier: number[][];
  /** Per query term, its frequency slot in the document being scored (-1: absent), and whether it is credited. */
  readonly #slotAt: Int32Array;
  readonly #credited: Uint8Array;

  constructor(q: LexicalQuery, view: IndexView, check: () => void) {
    this.#q = q;
    this.#v = view;
    this.#check = check;
    this.#stamp = view.scratch.next();
    const n = q.terms.length;
    this.#ids = new Int32Array(n).fill(-1);
    this.#sameTerm = new Int32Array(n).fill(-1);
    for (let t = n - 1; t >= 0; t--) {
      const id = view.terms.idOf((q.terms[t] as { term: string }).term);
      if (id === undefined) continue;
      this.#ids[t] = id;
      this.#sameTerm[t] = this.#firstOf.get(id) ?? -1;
      this.#firstOf.set(id, t);
    }
    this.#earlier = q.terms.map(({ slot }, t) => q.terms.flatMap((x, e) => (e < t && x.slot === slot ? [e] : [])));
    this.#slotAt = new Int32Array(n).fill(-1);
    this.#credited = new Uint8Array(n);
  }

  top(k: number, accept: ((id: string) => boolean) | null): LexicalHit[] {
    this.#check();
    const { scratch, idOf } = this.#v;
    const score = scratch.score;
    const best = new BoundedTop(k, (a, b) => (score[a] as number) < (score[b] as number) || (score[a] === score[b] && a > b));
    const kth = (): number => (best.full && best.worst !== undefined ? (score[best.worst] as number) : -Infinity);
    const { order, rest } = this.#walkOrder();
    const seen = scratch.next();
    walk: for (let i = 0; i < order.length; i++) {
      if (kth() > (rest[i] as number) * (1 + BOUND_SLACK)) break;
      const t = order[i] as number;
      const p = this.#v.terms.list(this.#ids[t] as number);
      const list = p === undefined ? [] : typeof p === 'number' ? [p] : p;
      const idf = (this.#q.terms[t] as { idf: number }).idf;
      for (let j = 0; j < list.length; j++) {
        const d = docOfPosting(list[j] as number);
        if (idOf[d] === undefined || scratch.seenAt[d] === seen) continue;
        scratch.seenAt[d] = seen;
        // Unseen before this term: the document holds none of the terms walked, so this term and the
        // ones after it bound its score.
        if (best.full && (idf * this.#part(slotOfPosting(list[j] as number), d) + (rest[i + 1] as number)) * (1 + BOUND_SLACK) < kth()) continue;
        this.#score(d);
        if (!best.admits(d) || (accept !== null && !accept(idOf[d] as string))) continue;
        best.add(d);
        if (kth() > (rest[i] as number) * (1 + BOUND_SLACK)) break walk;
      }
    }
    return best.sorted().map((d) => ({ id: idOf[d] as string, score: score[d] as number, norm: this.#matchOf(d) }));
  }

  norm(id: string): number {
    this.#check();
    const d = this.#v.docOf.get(id);
    if (d === undefined) return 0;
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

  #matchOf(d: number): number {
    return this.#q.idfSum > 0 ? Math.min(1, (this.#v.scratch.share[d] as number) / this.#q.idfSum) : 0;
  }

  #part(slot: number, d: number): number {
    return bm25(slot / 2, this.#v.len[d] as number, this.#v.avg);
  }

  /**
   * The query's terms that some memory holds, by decreasing bound (idf × BM25 at the term's highest
   * frequency in its shortest document), and per position the bound of that term and all after it.
   * A query with a weight that is not positive (only a hand-built one) is walked without bounds.
   */
  #walkOrder(): { order: number[]; rest: Float64Array } {
    const { terms } = this.#v;
    const bound = this.#q.terms.map(({ idf }, t) => {
      const id = this.#ids[t] as number;
      return id < 0 ? 0 : idf * bm25(terms.maxSlot(id) / 2, terms.minLen(id), this.#v.avg);
    });
    const order = bound.flatMap((_, t) => ((this.#ids[t] as number) < 0 ? [] : [t])).sort((a, b) => (bound[b] as number) - (bound[a] as number) || a - b);
    const rest = new Float64Array(order.length + 1);
    if (this.#q.terms.some(({ idf }) => !(idf > 0 && idf < Infinity))) return { order, rest: rest.fill(Infinity) };
    for (let i = order.length - 1; i >= 0; i--) rest[i] = (rest[i + 1] as number) + (bound[order[i] as number] as number);
    return { order, rest };
  }

  /** Scores a document once per query: BM25 and the share of the query's IDF it is credited with. */
  #score(d: number): void {
    const scratch = this.#v.scratch;
    if (scratch.scoredAt[d] === this.#stamp) return;
    const { score, share } = this.#credit(d);
    this.#credited.fill(0);
    scratch.scoredAt[d] = this.#stamp;
    scratch.score[d] = score;
    scratch.share[d] = share;
  }

  /**
   * Marks the query terms the document is credited with (in `#credited`, for the caller to clear)
   * and sums their BM25 parts and IDFs in query order: a term counts once, and a variant only where
   * no earlier term of its slot did.
   */
  #credit(d: number): { score: number; share: number } {
    const { forward } = this.#v;
    const at = forward.start(d);
    const end = at + forward.count(d);
    for (let i = at; i < end; i++) {
      for (let t = this.#firstOf.get(forward.terms[i] as number) ?? -1; t >= 0; t = this.#sameTerm[t] as number) this.#slotAt[t] = forward.tfs[i] as number;
    }
    let score = 0;
    let share = 0;
    const terms = this.#q.terms;
    for (let t = 0; t < terms.length; t++) {
      const slot = this.#slotAt[t] as number;
      if (slot < 0) continue;
      this.#slotAt[t] = -1;
      if ((this.#earlier[t] as number[]).some((e) => this.#credited[e] === 1)) continue;
      this.#credited[t] = 1;
      const idf = (terms[t] as { idf: number }).idf;
      score += idf * this.#part(slot, d);
      share += idf;
    }
    return { score, share };
  }
}
