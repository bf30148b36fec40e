/**
 * @module shard/index/postings — the lexical index's dictionary: each term's id and its posting
 * list (packed document number and term-frequency slot; one posting is kept as a bare number), the
 * postings of removed documents still in each list, and per term a bound on what any of its
 * documents can score (the highest term frequency and the shortest length among its postings,
 * only ever loosened by removals and made exact again when the list is compacted). Term ids are
 * reused once a term leaves the dictionary. Removal and compaction are driven by
 * shard/index/lexical.ts, which owns the documents.
 */

/** One posting (a document number and its term-frequency slot), or several. */
export type Postings = number | number[];

const TF_SLOTS = 64;

/** A posting: the document number and the term frequency in half units (capped at 31.5). */
export function pack(docNo: number, tf: number): number {
  return docNo * TF_SLOTS + tfSlot(tf);
}

/** The term frequency in half units, as a posting keeps it. */
export function tfSlot(tf: number): number {
  return Math.min(TF_SLOTS - 1, Math.round(tf * 2));
}

export function docOfPosting(p: number): number {
  return Math.floor(p / TF_SLOTS);
}

export function slotOfPosting(p: number): number {
  return p % TF_SLOTS;
}

export class TermLists {
  readonly #ids = new Map<string, number>();
  #termOf: Array<string | undefined> = [];
  #lists: Array<Postings | undefined> = [];
  readonly #freeIds: number[] = [];
  /** Postings of removed documents still in each term's list. */
  #dead = new Int32Array(64);
  /** The highest term-frequency slot and the shortest document among each term's postings. */
  #maxSlot = new Uint8Array(64);
  #minLen = new Float32Array(64);

  /** Distinct terms. */
  get size(): number {
    return this.#ids.size;
  }

  /** One more than the highest term id in use. */
  get capacity(): number {
    return this.#lists.length;
  }

  has(term: string): boolean {
    return this.#ids.has(term);
  }

  idOf(term: string): number | undefined {
    return this.#ids.get(term);
  }

  /** A term's postings (undefined for a free id). */
  list(id: number): Postings | undefined {
    return this.#lists[id];
  }

  /** Postings in the term's list, dead ones included. */
  count(id: number): number {
    const p = this.#lists[id];
    return p === undefined ? 0 : typeof p === 'number' ? 1 : p.length;
  }

  /** Live documents holding the term. */
  df(term: string): number {
    const id = this.#ids.get(term);
    if (id === undefined) return 0;
    const p = this.#lists[id];
    return (p === undefined ? 0 : typeof p === 'number' ? 1 : p.length) - (this.#dead[id] ?? 0);
  }

  /** The highest term-frequency slot among the term's postings (a bound: see the module). */
  maxSlot(id: number): number {
    return this.#maxSlot[id] ?? 0;
  }

  /** The shortest document length among the term's postings (a bound: see the module). */
  minLen(id: number): number {
    return this.#minLen[id] ?? 0;
  }

  /** Adds a posting to the term's list, entering the term when it is new; returns the term's id. */
  add(term: string, docNo: number, tf: number, len: number): number {
    const posting = pack(docNo, tf);
    const slot = slotOfPosting(posting);
    let id = this.#ids.get(term);
    if (id === undefined) {
      id = this.#freeIds.pop() ?? this.#lists.length;
      this.#ensure(id + 1);
      this.#ids.set(term, id);
      this.#termOf[id] = term;
      this.#lists[id] = posting;
      this.#dead[id] = 0;
      this.#maxSlot[id] = slot;
      this.#minLen[id] = len;
      return id;
    }
    const p = this.#lists[id] as Postings;
    if (typeof p === 'number') this.#lists[id] = [p, posting];
    else p.push(posting);
    if (slot > (this.#maxSlot[id] as number)) this.#maxSlot[id] = slot;
    if (len < (this.#minLen[id] as number)) this.#minLen[id] = len;
    return id;
  }

  /**
   * Takes the removed document's posting out of the term at once when it is the term's only one
   * (the term leaves the dictionary), else counts it as dead in the list; true when it stays.
   */
  removed(id: number, docNo: number): boolean {
    const p = this.#lists[id];
    if (p === undefined) return false;
    if (typeof p === 'number') {
      if (docOfPosting(p) === docNo) this.#drop(id);
      return false;
    }
    this.#dead[id] = (this.#dead[id] ?? 0) + 1;
    return true;
  }

  /**
   * Drops dead postings from the term's list once they are half of it, calling `gone` for each
   * (in list order), and makes the term's bounds exact again from the postings kept.
   */
  maybeCompact(
    id: number,
    live: (d: number) => boolean,
    lenOf: (d: number) => number,
    gone: (d: number) => void,
  ): void {
    const dead = this.#dead[id] ?? 0;
    const p = this.#lists[id];
    if (dead === 0 || typeof p !== 'object' || dead * 2 < p.length) return;
    let kept = 0;
    let maxSlot = 0;
    let minLen = Infinity;
    for (let i = 0; i < p.length; i++) {
      const posting = p[i] as number;
      const d = docOfPosting(posting);
      if (!live(d)) {
        gone(d);
        continue;
      }
      p[kept++] = posting;
      maxSlot = Math.max(maxSlot, slotOfPosting(posting));
      minLen = Math.min(minLen, lenOf(d));
    }
    p.length = kept;
    this.#dead[id] = 0;
    this.#maxSlot[id] = maxSlot;
    this.#minLen[id] = minLen;
    if (kept === 0) this.#drop(id);
    else if (kept === 1) this.#lists[id] = p[0] as number;
  }

  #drop(id: number): void {
    this.#ids.delete(this.#termOf[id] as string);
    this.#termOf[id] = undefined;
    this.#lists[id] = undefined;
    this.#dead[id] = 0;
    this.#freeIds.push(id);
  }

  #ensure(n: number): void {
    if (n <= this.#dead.length) return;
    const size = Math.max(n, this.#dead.length * 2);
    const dead = new Int32Array(size);
    dead.set(this.#dead);
    const maxSlot = new Uint8Array(size);
    maxSlot.set(this.#maxSlot);
    const minLen = new Float32Array(size);
    minLen.set(this.#minLen);
    this.#dead = dead;
    this.#maxSlot = maxSlot;
    this.#minLen = minLen;
  }
}
