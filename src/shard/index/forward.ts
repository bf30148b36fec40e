/**
 * @module shard/index/forward — the lexical index's forward index: per document number, its term
 * ids and their term-frequency slots, kept in two typed arenas (5 bytes a term, 8 a document) that
 * grow by half; a document's terms are appended when it is added and left as garbage when it is
 * removed, and the arenas are rewritten without the garbage once it is as large as the live part (so
 * each entry is copied O(1) times, amortised). It lets a query score any one memory from its own
 * terms, without walking the posting lists of the query's words.
 */

/** Entries of garbage below which the arenas are never rewritten. */
const MIN_GARBAGE = 4096;

export class ForwardIndex {
  #terms = new Int32Array(1024);
  #tfs = new Uint8Array(1024);
  #start = new Int32Array(64);
  #count = new Int32Array(64);
  #used = 0;
  #garbage = 0;

  /** The term ids of every document, at `start(d)` for `count(d)` entries (valid until the next change). */
  get terms(): Int32Array {
    return this.#terms;
  }

  /** The term-frequency slots, beside {@link terms}. */
  get tfs(): Uint8Array {
    return this.#tfs;
  }

  start(docNo: number): number {
    return this.#start[docNo] ?? 0;
  }

  count(docNo: number): number {
    return this.#count[docNo] ?? 0;
  }

  /** Stores a document's terms (the document number must hold none). */
  set(docNo: number, terms: readonly number[], tfs: readonly number[]): void {
    this.#ensureDocs(docNo + 1);
    this.#ensureEntries(this.#used + terms.length);
    this.#start[docNo] = this.#used;
    this.#count[docNo] = terms.length;
    this.#terms.set(terms, this.#used);
    this.#tfs.set(tfs, this.#used);
    this.#used += terms.length;
  }

  /** Forgets a document's terms. */
  clear(docNo: number): void {
    this.#garbage += this.count(docNo);
    this.#count[docNo] = 0;
    this.#start[docNo] = 0;
    if (this.#garbage >= MIN_GARBAGE && this.#garbage * 2 >= this.#used) this.#compact();
  }

  /** Bytes held by the arenas. */
  get bytes(): number {
    return (
      this.#terms.byteLength +
      this.#tfs.byteLength +
      this.#start.byteLength +
      this.#count.byteLength
    );
  }

  #compact(): void {
    const live = this.#used - this.#garbage;
    const size = Math.max(1024, Math.ceil(live * 1.25));
    const terms = new Int32Array(size);
    const tfs = new Uint8Array(size);
    let at = 0;
    for (let d = 0; d < this.#count.length; d++) {
      const n = this.#count[d] as number;
      if (n === 0) continue;
      const from = this.#start[d] as number;
      terms.set(this.#terms.subarray(from, from + n), at);
      tfs.set(this.#tfs.subarray(from, from + n), at);
      this.#start[d] = at;
      at += n;
    }
    this.#terms = terms;
    this.#tfs = tfs;
    this.#used = at;
    this.#garbage = 0;
  }

  #ensureEntries(n: number): void {
    if (n <= this.#terms.length) return;
    const size = Math.max(n, Math.ceil(this.#terms.length * 1.5));
    const terms = new Int32Array(size);
    terms.set(this.#terms.subarray(0, this.#used));
    const tfs = new Uint8Array(size);
    tfs.set(this.#tfs.subarray(0, this.#used));
    this.#terms = terms;
    this.#tfs = tfs;
  }

  #ensureDocs(n: number): void {
    if (n <= this.#start.length) return;
    const size = Math.max(n, this.#start.length * 2);
    const start = new Int32Array(size);
    start.set(this.#start);
    const count = new Int32Array(size);
    count.set(this.#count);
    this.#start = start;
    this.#count = count;
  }
}
