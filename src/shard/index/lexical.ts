/**
 * @module shard/index/lexical — a BM25F index over one workspace's live memories, beside the
 * vector index. The content is the main field; the speaker, the entity id and the context's string
 * values are minor fields counted at {@link MINOR_FIELD_WEIGHT}. Dates written in the content are kept as
 * extra keys (not scored by BM25) so that time-aware recall can find memories by the time they
 * name. A recall's query also matches, at a discount, the indexed words one typo away from a cue
 * word (people misspell what they write). Each term has an id and a posting list with a bound on
 * what it can add to a score (postings.ts), and each memory its term ids in a forward index
 * (forward.ts), so a query's scores are computed when read (lexical-scores.ts): any memory's from
 * its own terms, the best k by a pruned walk of the lists, the same to the bit as a full scan.
 * Postings, removal, pruning and recovery: docs/architecture-notes.md ("The lexical index").
 */
import type { JsonObject, JsonValue } from '../../model/memory.ts';
import { dateKeysIn } from '../../recall/dates.ts';
import { ForwardIndex } from './forward.ts';
import { QueryScores, SCAN_POSTINGS } from './lexical-scores.ts';
import type { LexicalHit, LexicalQuery, LexicalScores } from './lexical-view.ts';
import { docOfPosting, TermLists, tfSlot } from './postings.ts';
import { ScoreScratch } from './score-scratch.ts';
import { tokenize } from './tokenize.ts';
import { TYPO_DISCOUNT, TYPO_MIN_LETTERS, TypoNeighbours, typoWord } from './typos.ts';

export { BM25_B, BM25_K1 } from './lexical-scores.ts';
export type { LexicalHit, LexicalQuery, LexicalScores } from './lexical-view.ts';

/** Weight of a token from the speaker, the entity id or a context value, relative to one from the content. */
export const MINOR_FIELD_WEIGHT = 0.5;

/** What of a memory the index reads. */
export interface LexicalDoc {
  content: string;
  /** Absent: none (a speaker written in the context counts as a context value). */
  speaker?: string | null;
  entityId: string | null;
  context: JsonObject;
}

/** Options of {@link LexicalIndex.query}. */
export interface QueryOptions {
  /** Also match indexed words one typo away from each cue word (recall: yes; duplicate checks: no). */
  typos?: boolean;
}

/** Options of a {@link LexicalIndex}. */
export interface LexicalIndexOptions {
  /** Queries with at most this many postings are scanned whole rather than pruned (tests set 0). */
  scanPostings?: number;
}

export class LexicalIndex {
  readonly #docOf = new Map<string, number>();
  readonly #idOf: Array<string | undefined> = [];
  #len = new Float32Array(64);
  /**
   * Postings still in term lists per removed document (0 for a live or a free one): a removal
   * leaves its postings in lists longer than one, and a document number is reused only when
   * compaction has taken its last one out.
   */
  #stale = new Int32Array(64);
  readonly #free: number[] = [];
  readonly #terms = new TermLists();
  readonly #forward = new ForwardIndex();
  readonly #typos = new TypoNeighbours((t) => this.#terms.has(t));
  #totalLen = 0;
  readonly #scratch = new ScoreScratch();
  /** Bumped by every query and every change: a query's scores are read before either. */
  #generation = 0;
  readonly #scanPostings: number;

  constructor(options: LexicalIndexOptions = {}) {
    this.#scanPostings = options.scanPostings ?? SCAN_POSTINGS;
  }

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
    this.#generation += 1;
    const docNo = this.#free.pop() ?? this.#idOf.length;
    this.#docOf.set(id, docNo);
    this.#idOf[docNo] = id;
    const { tf, length } = termFrequencies(doc);
    this.#ensure(docNo + 1);
    this.#len[docNo] = length;
    this.#totalLen += length;
    const ids: number[] = [];
    const slots: number[] = [];
    for (const [term, f] of tf) {
      const known = this.#terms.has(term);
      ids.push(this.#terms.add(term, docNo, f, this.#len[docNo] as number));
      slots.push(tfSlot(f));
      if (!known) this.#typos.added(term);
    }
    this.#forward.set(docNo, ids, slots);
  }

  /**
   * Removes a memory. Costs the memory's own terms (read from the forward index), not their
   * postings: a term it alone held leaves the dictionary at once; in longer lists its posting stays,
   * skipped by every read, until removed postings make up half the list and the list is compacted
   * (so each posting is copied at most once per removal that follows it: O(1) amortised).
   */
  remove(id: string): void {
    const docNo = this.#docOf.get(id);
    if (docNo === undefined) return;
    this.#generation += 1;
    const at = this.#forward.start(docNo);
    const terms = Array.from(this.#forward.terms.subarray(at, at + this.#forward.count(docNo)));
    let stale = 0;
    for (const term of terms) if (this.#terms.removed(term, docNo)) stale += 1;
    this.#totalLen -= this.#len[docNo] ?? 0;
    this.#len[docNo] = 0;
    this.#docOf.delete(id);
    this.#idOf[docNo] = undefined;
    this.#stale[docNo] = stale;
    if (stale === 0) this.#free.push(docNo);
    this.#forward.clear(docNo);
    // Compacted after the document is marked removed, so its own postings go too.
    const live = (d: number): boolean => this.#idOf[d] !== undefined;
    const lenOf = (d: number): number => this.#len[d] as number;
    const gone = (d: number): void => {
      const left = (this.#stale[d] ?? 1) - 1;
      this.#stale[d] = left;
      if (left === 0) this.#free.push(d);
    };
    for (const term of terms) this.#terms.maybeCompact(term, live, lenOf, gone);
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
      const f = this.#terms.df(term);
      const idf = idfOf(f);
      idfSum += idf;
      if (f > 0) terms.push({ term, idf, slot });
      if (options.typos !== true || !typoWord(term)) continue;
      for (const v of this.#typos.of(term)) {
        const fv = seen.has(v) ? 0 : this.#terms.df(v);
        if (fv <= 0) continue;
        seen.add(v);
        variants.push({ term: v, idf: TYPO_DISCOUNT * Math.min(idf, idfOf(fv)), slot });
      }
    }
    return { terms: terms.concat(variants), idfSum };
  }

  /**
   * A query's scores over the memories that share a term with it, two ways:
   * - BM25 (k1 1.2, b 0.75), which ranks the lexical list;
   * - the match in [0, 1]: the IDF-weighted share of the query's terms the memory holds,
   *     match = Σ_{t in query and memory} idf_t / Σ_{t in query} idf_t
   *   so a memory holding every word of the cue gets 1 and rare words count most. (Measured against
   *   BM25 over its saturated bound and a per-term capped BM25: the same recall, and this one is
   *   absolute, so it blends with the cosine without rescaling per query.)
   * Computed when read (shard/index/lexical-scores.ts): any memory's score from its own terms, the
   * best k by a pruned walk of the postings. The scores may be read until the next query or change
   * on this index (the shard is single-threaded and a recall reads them at once).
   */
  score(q: LexicalQuery): LexicalScores {
    const generation = ++this.#generation;
    this.#scratch.fit(this.#idOf.length, this.#terms.capacity);
    const avg = this.#totalLen / Math.max(1, this.#docOf.size) || 1;
    const view = {
      terms: this.#terms,
      forward: this.#forward,
      docOf: this.#docOf,
      idOf: this.#idOf,
      len: this.#len,
      avg,
      scratch: this.#scratch,
      scanPostings: this.#scanPostings,
    };
    return new QueryScores(q, view, () => {
      if (generation !== this.#generation)
        throw new Error(
          'lexical scores read after another query ran on the index, or after it changed',
        );
    });
  }

  /** The `k` best memories for the query by BM25, best first (ties: lower document number first). */
  search(
    q: LexicalQuery,
    k: number,
    accept: ((id: string) => boolean) | null = null,
  ): LexicalHit[] {
    return this.score(q).top(k, accept);
  }

  /**
   * Ids of the live memories holding every word of `text` (as {@link query} reads words: stemmed,
   * stop words dropped), or null when `text` has no word to match. Walks the shortest word's
   * postings and checks each document's own terms (forward index) for the others: O(shortest
   * list × terms of a document), not a walk of every list.
   */
  withAllWords(text: string): Set<string> | null {
    const words = [...new Set(tokenize(text))];
    if (words.length === 0) return null;
    const out = new Set<string>();
    const termIds: number[] = [];
    for (const w of words) {
      const id = this.#terms.idOf(w);
      if (id === undefined) return out;
      termIds.push(id);
    }
    termIds.sort((a, b) => this.#terms.count(a) - this.#terms.count(b));
    const [first, ...rest] = termIds as [number, ...number[]];
    const p = this.#terms.list(first);
    const terms = this.#forward.terms;
    for (const posting of p === undefined ? [] : typeof p === 'number' ? [p] : p) {
      const docNo = docOfPosting(posting);
      const id = this.#idOf[docNo];
      if (id === undefined) continue;
      const at = this.#forward.start(docNo);
      const end = at + this.#forward.count(docNo);
      let all = true;
      for (const t of rest) {
        let found = false;
        for (let i = at; i < end && !found; i++) found = terms[i] === t;
        if (!found) {
          all = false;
          break;
        }
      }
      if (all) out.add(id);
    }
    return out;
  }

  /** Ids of memories holding any of the date keys (see recall/dates.ts), at most `limit`. */
  withDateKeys(keys: readonly string[], limit: number): string[] {
    const out = new Set<string>();
    for (const key of keys) {
      const term = this.#terms.idOf(key);
      const p = term === undefined ? undefined : this.#terms.list(term);
      for (const posting of p === undefined ? [] : typeof p === 'number' ? [p] : p) {
        if (out.size >= limit) return [...out];
        const id = this.#idOf[docOfPosting(posting)];
        if (id !== undefined) out.add(id);
      }
    }
    return [...out];
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
}

/**
 * Weighted term frequencies of a memory (content tokens 1, minor-field tokens MINOR_FIELD_WEIGHT)
 * and its weighted length; date keys are added with frequency 1 and do not count in the length.
 */
export function termFrequencies(doc: LexicalDoc): { tf: Map<string, number>; length: number } {
  const tf = new Map<string, number>();
  let length = 0;
  const count = (text: string, weight: number): void => {
    for (const t of tokenize(text)) {
      tf.set(t, (tf.get(t) ?? 0) + weight);
      length += weight;
    }
  };
  count(doc.content, 1);
  if (doc.speaker != null) count(doc.speaker, MINOR_FIELD_WEIGHT);
  if (doc.entityId !== null) count(doc.entityId, MINOR_FIELD_WEIGHT);
  for (const v of Object.values(doc.context)) forEachString(v, (s) => count(s, MINOR_FIELD_WEIGHT));
  for (const key of dateKeysIn(doc.content)) tf.set(key, 1);
  return { tf, length };
}

/** Calls `fn` for every string inside a JSON value (bounded depth: context is validated at the edge). */
function forEachString(v: JsonValue, fn: (s: string) => void, depth = 0): void {
  if (depth > 8) return;
  if (typeof v === 'string') fn(v);
  else if (Array.isArray(v)) for (const x of v) forEachString(x, fn, depth + 1);
  else if (v !== null && typeof v === 'object')
    for (const x of Object.values(v)) forEachString(x, fn, depth + 1);
}
