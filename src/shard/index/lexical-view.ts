/**
 * @module shard/index/lexical-view — the face between the lexical index and one query's scores
 * (shard/index/lexical-scores): what a query asks (LexicalQuery), what it reads of the index
 * (IndexView: term lists, forward index, document ids and lengths, scratch space) and what it
 * answers (LexicalScores, LexicalHit).
 */
import type { ForwardIndex } from './forward.ts';
import type { TermLists } from './postings.ts';
import type { ScoreScratch } from './score-scratch.ts';

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
  /** Queries with at most this many postings are scanned whole ({@link SCAN_POSTINGS}). */
  readonly scanPostings: number;
  readonly scratch: ScoreScratch;
}
