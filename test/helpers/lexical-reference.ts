/**
 * The lexical index as it scored before pruning (commit 213c89f, shard/index/lexical.ts), kept as the
 * oracle of test/unit/lexical-pruned.test.ts: every query walks every posting of every query term
 * into per-document arrays, in query order, and ranks them with topK. Same add, remove, compaction
 * and document-number reuse as the index, so that tie order (lower document number first) compares.
 */
import {
  BM25_B,
  BM25_K1,
  termFrequencies,
  type LexicalDoc,
  type LexicalHit,
  type LexicalQuery,
  type QueryOptions,
} from '../../src/shard/index/lexical.ts';
import { tokenize } from '../../src/shard/index/tokenize.ts';
import { topK } from '../../src/shard/index/top-k.ts';
import { TYPO_DISCOUNT, TypoNeighbours, typoWord } from '../../src/shard/index/typos.ts';

type LexicalScores = {
  top(k: number, accept: ((id: string) => boolean) | null): LexicalHit[];
  norm(id: string): number;
  union(ids: Iterable<string>): number;
};

/** One posting (a document number and its term frequency), or several. */
type Postings = number | number[];

const TF_SLOTS = 64;

function pack(docNo: number, tf: number): number {
  return docNo * TF_SLOTS + Math.min(TF_SLOTS - 1, Math.round(tf * 2));
}

function docOfPosting(p: number): number {
  return Math.floor(p / TF_SLOTS);
}

function tfOfPosting(p: number): number {
  return (p % TF_SLOTS) / 2;
}

function postingCount(p: Postings | undefined): number {
  return p === undefined ? 0 : typeof p === 'number' ? 1 : p.length;
}

export class ReferenceLexicalIndex {
  readonly #docOf = new Map<string, number>();
  #idOf: Array<string | undefined> = [];
  #len = new Float32Array(64);
  /**
   * Postings still in term lists per removed document (0 for a live or a free one): a removal
   * leaves its postings in lists longer than one, and a document number is reused only when
   * compaction has taken its last one out.
   */
  #stale = new Int32Array(64);
  readonly #free: number[] = [];
  readonly #terms = new Map<string, Postings>();
  readonly #typos = new TypoNeighbours((t) => this.#terms.has(t));
  /** Postings of removed documents still in each term's list (terms with none are absent). */
  readonly #deadIn = new Map<string, number>();
  #totalLen = 0;
  #scratch = new Float64Array(64);
  #shares = new Float64Array(64);
  /** Per document, which of the query's terms it holds: `#words` 32-bit words each (term i is bit i). */
  #held = new Uint32Array(64);
  #words = 1;
  /** Documents with a non-zero score in the scratch array, and the query generation they belong to. */
  readonly #touched: number[] = [];
  #generation = 0;

  get size(): number {
    return this.#docOf.size;
  }

  /** Distinct terms (and date keys) in the dictionary. */
  get termCount(): number {
    return this.#terms.size;
  }

  has(id: string): boolean {
    return this.#docOf.has(id);
  }

  /** Indexes a memory; an id already present is replaced (its old text must be passed to remove first). */
  add(id: string, doc: LexicalDoc): void {
    if (this.#docOf.has(id)) throw new Error(`lexical index: ${id} is already indexed`);
    const docNo = this.#free.pop() ?? this.#idOf.length;
    this.#docOf.set(id, docNo);
    this.#idOf[docNo] = id;
    const { tf, length } = termFrequencies(doc);
    this.#ensure(docNo + 1);
    this.#len[docNo] = length;
    this.#totalLen += length;
    for (const [term, f] of tf) {
      const p = this.#terms.get(term);
      const posting = pack(docNo, f);
      if (p === undefined) {
        this.#terms.set(term, posting);
        this.#typos.added(term);
      } else if (typeof p === 'number') this.#terms.set(term, [p, posting]);
      else p.push(posting);
    }
  }

  /**
   * Removes a memory; `doc` must be the text it was added with. Costs the memory's own terms, not
   * their postings: a term it alone held leaves the dictionary at once; in longer lists its posting
   * stays, skipped by every read, until removed postings make up half the list and the list is
   * compacted (so each posting is copied at most once per removal that follows it: O(1) amortised).
   */
  remove(id: string, doc: LexicalDoc): void {
    const docNo = this.#docOf.get(id);
    if (docNo === undefined) return;
    const terms = [...termFrequencies(doc).tf.keys()];
    let stale = 0;
    for (const term of terms) {
      const p = this.#terms.get(term);
      if (p === undefined) continue;
      if (typeof p === 'number') {
        if (docOfPosting(p) === docNo) this.#terms.delete(term);
        continue;
      }
      stale += 1;
      const dead = (this.#deadIn.get(term) ?? 0) + 1;
      this.#deadIn.set(term, dead);
    }
    this.#totalLen -= this.#len[docNo] ?? 0;
    this.#len[docNo] = 0;
    this.#docOf.delete(id);
    this.#idOf[docNo] = undefined;
    this.#stale[docNo] = stale;
    if (stale === 0) this.#free.push(docNo);
    // Compacted after the document is marked removed, so its own postings go too.
    for (const term of terms) this.#maybeCompact(term);
  }

  /** Live documents holding the term. */
  #df(term: string): number {
    return postingCount(this.#terms.get(term)) - (this.#deadIn.get(term) ?? 0);
  }

  /** Drops removed documents' postings from the term's list once they are half of it. */
  #maybeCompact(term: string): void {
    const dead = this.#deadIn.get(term);
    const p = this.#terms.get(term);
    if (dead === undefined || typeof p !== 'object' || dead * 2 < p.length) return;
    let kept = 0;
    for (let i = 0; i < p.length; i++) {
      const posting = p[i] as number;
      const d = docOfPosting(posting);
      if (this.#idOf[d] !== undefined) p[kept++] = posting;
      else {
        const left = (this.#stale[d] ?? 1) - 1;
        this.#stale[d] = left;
        if (left === 0) this.#free.push(d);
      }
    }
    p.length = kept;
    this.#deadIn.delete(term);
    if (kept === 0) this.#terms.delete(term);
    else if (kept === 1) this.#terms.set(term, p[0] as number);
  }

  /**
   * The query's terms with their IDF. Terms no memory has cannot match and are dropped from the
   * search, but they stay in `idfSum` (with the IDF of a term no memory has): a cue whose words
   * mostly do not occur in the workspace (a paraphrase) gets a low lexical match, so a stray shared
   * word cannot outweigh the meaning that the cosine sees.
   *
   * With `typos`, each cue word of at least {@link TYPO_MIN_LETTERS} letters also brings the indexed
   * words one edit away from it (`suport`, `suppport`, `supprot` for `support`), each weighing
   * {@link TYPO_DISCOUNT} × the lower of the two IDFs (a rare misspelling of a common word counts no
   * more than half the word); they add nothing to `idfSum`, so a memory without any scores as
   * without the option, and a memory is credited once per cue word (see {@link LexicalQuery}). The
   * cue word need not be missing from the workspace: people misspell what they write, so the word
   * a question uses is usually spelled right somewhere and wrong in the memory that answers it.
   */
  query(text: string, options: QueryOptions = {}): LexicalQuery {
    const n = this.#docOf.size;
    const idfOf = (f: number): number => Math.log(1 + (n - f + 0.5) / (f + 0.5));
    const terms: LexicalQuery['terms'] = [];
    const variants: LexicalQuery['terms'] = [];
    const cue = [...new Set(tokenize(text))];
    const seen = new Set(cue);
    let idfSum = 0;
    for (const [slot, term] of cue.entries()) {
      const f = this.#df(term);
      const idf = idfOf(f);
      idfSum += idf;
      if (f > 0) terms.push({ term, idf, slot });
      if (options.typos !== true || !typoWord(term)) continue;
      for (const v of this.#typos.of(term)) {
        const fv = seen.has(v) ? 0 : this.#df(v);
        if (fv <= 0) continue;
        seen.add(v);
        variants.push({ term: v, idf: TYPO_DISCOUNT * Math.min(idf, idfOf(fv)), slot });
      }
    }
    return { terms: terms.concat(variants), idfSum };
  }

  /**
   * Scores every memory that shares a term with the query, two ways:
   * - BM25 (k1 1.2, b 0.75), which ranks the lexical list;
   * - the match in [0, 1]: the IDF-weighted share of the query's terms the memory holds,
   *     match = Σ_{t in query and memory} idf_t / Σ_{t in query} idf_t
   *   so a memory holding every word of the cue gets 1 and rare words count most. (Measured against
   *   BM25 over its saturated bound and a per-term capped BM25: the same recall, and this one is
   *   absolute, so it blends with the cosine without rescaling per query.)
   * The scores stay valid until the next call on this index (the shard is single-threaded and a
   * recall reads them at once), so a recall looks up any memory's score in O(1) without copies.
   */
  score(q: LexicalQuery): LexicalScores {
    this.#clearScores();
    const words = Math.max(1, Math.ceil(q.terms.length / 32));
    const [scores, shares, held] = this.#scratchFor(this.#idOf.length, words);
    const avg = this.#totalLen / Math.max(1, this.#docOf.size) || 1;
    const sameSlot = earlierOfSlot(q);
    const holds = (bits: Uint32Array, at: number, t: number): boolean =>
      (((bits[at + (t >>> 5)] as number) >>> (t & 31)) & 1) === 1;
    for (const [t, { term, idf }] of q.terms.entries()) {
      const p = this.#terms.get(term);
      if (p === undefined) continue;
      const list = typeof p === 'number' ? [p] : p;
      const before = sameSlot[t] ?? [];
      for (let i = 0; i < list.length; i++) {
        const d = docOfPosting(list[i] as number);
        if (this.#idOf[d] === undefined) continue;
        // Credited once per cue word: a variant counts only where no earlier term of its slot did.
        if (before.length > 0 && before.some((e) => holds(held, d * words, e))) continue;
        const tf = tfOfPosting(list[i] as number);
        const part =
          (tf * (BM25_K1 + 1)) /
          (tf + BM25_K1 * (1 - BM25_B + (BM25_B * (this.#len[d] ?? 0)) / avg));
        if (scores[d] === 0) this.#touched.push(d);
        scores[d] = (scores[d] ?? 0) + idf * part;
        shares[d] = (shares[d] ?? 0) + idf;
        held[d * words + (t >>> 5)] = (held[d * words + (t >>> 5)] ?? 0) | (1 << (t & 31));
      }
    }
    const generation = ++this.#generation;
    const check = (): void => {
      if (generation !== this.#generation)
        throw new Error('lexical scores read after another query ran on the index');
    };
    const matchOf = (d: number): number =>
      q.idfSum > 0 ? Math.min(1, (shares[d] ?? 0) / q.idfSum) : 0;
    return {
      top: (k, accept) => {
        check();
        const best = topK(
          this.#touched,
          scores,
          k,
          accept === null ? null : (d) => accept(this.#idOf[d] as string),
        );
        return best.map((d) => ({
          id: this.#idOf[d] as string,
          score: scores[d] ?? 0,
          norm: matchOf(d),
        }));
      },
      norm: (id) => {
        check();
        const d = this.#docOf.get(id);
        return d === undefined ? 0 : matchOf(d);
      },
      union: (ids) => {
        check();
        const all = new Uint32Array(words);
        for (const id of ids) {
          const d = this.#docOf.get(id);
          if (d !== undefined)
            for (let i = 0; i < words; i++)
              all[i] = (all[i] as number) | (held[d * words + i] as number);
        }
        let sum = 0;
        q.terms.forEach(({ idf }, t) => {
          if (holds(all, 0, t) && !(sameSlot[t] ?? []).some((e) => holds(all, 0, e))) sum += idf;
        });
        return q.idfSum > 0 ? Math.min(1, sum / q.idfSum) : 0;
      },
    };
  }

  /** The `k` best memories for the query by BM25, best first (ties: lower document number first). */
  search(
    q: LexicalQuery,
    k: number,
    accept: ((id: string) => boolean) | null = null,
  ): LexicalHit[] {
    return this.score(q).top(k, accept);
  }

  /** Ids of memories holding any of the date keys (see recall/dates.ts), at most `limit`. */
  withDateKeys(keys: readonly string[], limit: number): string[] {
    const out = new Set<string>();
    for (const key of keys) {
      const p = this.#terms.get(key);
      for (const posting of p === undefined ? [] : typeof p === 'number' ? [p] : p) {
        if (out.size >= limit) return [...out];
        const id = this.#idOf[docOfPosting(posting)];
        if (id !== undefined) out.add(id);
      }
    }
    return [...out];
  }

  #clearScores(): void {
    const words = this.#words;
    for (const d of this.#touched) {
      this.#scratch[d] = 0;
      this.#shares[d] = 0;
      for (let i = d * words; i < (d + 1) * words; i++) this.#held[i] = 0;
    }
    this.#touched.length = 0;
  }

  #ensure(n: number): void {
    if (n <= this.#len.length) return;
    const next = new Float32Array(Math.max(n, this.#len.length * 2));
    next.set(this.#len);
    this.#len = next;
    const stale = new Int32Array(next.length);
    stale.set(this.#stale);
    this.#stale = stale;
  }

  /** The score arrays, grown to n documents of `words` term words (all zero: #clearScores ran). */
  #scratchFor(n: number, words: number): [Float64Array, Float64Array, Uint32Array] {
    if (this.#scratch.length < n) {
      this.#scratch = new Float64Array(Math.max(n, this.#scratch.length * 2));
      this.#shares = new Float64Array(this.#scratch.length);
    }
    if (this.#held.length < this.#scratch.length * words)
      this.#held = new Uint32Array(this.#scratch.length * words);
    this.#words = words;
    return [this.#scratch, this.#shares, this.#held];
  }
}

/** Per term of the query, the earlier terms of its slot (none for a cue word itself). */
function earlierOfSlot(q: LexicalQuery): number[][] {
  return q.terms.map(({ slot }, t) =>
    q.terms.flatMap((x, e) => (e < t && x.slot === slot ? [e] : [])),
  );
}
