/**
 * @module shard/index/hnsw — the one file that imports hnswlib-node: an HNSW graph over unit
 * vectors (inner product = cosine), M 16, ef_construction 100, with integer labels and growth; and
 * `FlatIp`, hnswlib's exact scan over one contiguous buffer, for workspaces too small for a graph.
 */
import hnswlib from 'hnswlib-node';

const M = 16;
/**
 * The build's beam width. 100, not hnswlib's 200: on 20k real bge-small embeddings the graph
 * built at 100 finds the same neighbours (recall@10 and @50 at ef 50–200 within 0.002 of the
 * 200 graph's) for 0.62× the insertion CPU (native-bench/micro/vector-search.ts
 * --ef-construction 200,100,64: 2,729 → 4,431 inserts/s; 64 loses 0.01 at ef 100).
 */
export const EF_CONSTRUCTION = 100;

export class Hnsw {
  readonly #index: InstanceType<typeof hnswlib.HierarchicalNSW>;
  readonly dim: number;
  /** Live labels (one byte per label: labels are small integers handed out in order), and how many points are marked deleted. */
  readonly #labels = new LabelSet();
  #deleted: number;

  private constructor(
    index: InstanceType<typeof hnswlib.HierarchicalNSW>,
    dim: number,
    live?: Iterable<number>,
  ) {
    this.#index = index;
    this.dim = dim;
    // getIdsList() includes points marked deleted; getPoint() throws for those.
    const all = index.getIdsList();
    for (const label of live ?? all.filter((l) => isLive(index, l))) this.#labels.add(label);
    this.#deleted = index.getCurrentCount() - this.#labels.size;
    this.maxLabel = all.reduce((m, l) => Math.max(m, l), -1);
  }

  /** Highest label ever stored in the graph (deleted points included). */
  readonly maxLabel: number;

  static create(dim: number, capacity: number, efConstruction: number): Hnsw {
    const index = new hnswlib.HierarchicalNSW('ip', dim);
    index.initIndex({
      maxElements: capacity,
      m: M,
      efConstruction,
      randomSeed: 100,
      allowReplaceDeleted: true,
    });
    return new Hnsw(index, dim);
  }

  /**
   * Loads a saved graph. `live`: the labels known to be live when it was saved (from the
   * manifest); without it every label is probed, which is slow for large graphs.
   */
  static load(file: string, dim: number, live?: Iterable<number>): Hnsw {
    const index = new hnswlib.HierarchicalNSW('ip', dim);
    index.readIndexSync(file, true);
    return new Hnsw(index, dim, live);
  }

  /**
   * {@link load} on libuv's thread pool: the file is read and the graph built there, so the caller's
   * thread can decode the snapshot meanwhile (a million-memory graph is 1.7 GB).
   */
  static async loadAsync(file: string, dim: number, live?: Iterable<number>): Promise<Hnsw> {
    const index = new hnswlib.HierarchicalNSW('ip', dim);
    await index.readIndex(file, true);
    return new Hnsw(index, dim, live);
  }

  save(file: string): void {
    this.#index.writeIndexSync(file);
  }

  /**
   * Adds the vector under a new `label`, growing the index when it is full. Slots of deleted
   * points are not reused and a live label is never updated in place: hnswlib does both through
   * updatePoint, which repairs every neighbour's links (measured ~20–27 ms per call at 5k points,
   * against ~1.5 ms for an insertion), in one native call that holds the shard's thread.
   * VectorIndex gives a changed vector a new label instead.
   */
  add(label: number, vector: Float32Array): void {
    if (this.#labels.has(label)) throw new Error(`HNSW label ${label} is already in the graph`);
    if (this.#index.getCurrentCount() >= this.#index.getMaxElements()) {
      this.#index.resizeIndex(Math.max(1024, this.#index.getMaxElements() * 2));
    }
    this.#index.addPoint(Array.from(vector), label, false);
    this.#labels.add(label);
  }

  /** Points marked deleted, still held by the graph (their slots are not reused). */
  get deletedCount(): number {
    return this.#deleted;
  }

  remove(label: number): void {
    if (!this.#labels.delete(label)) return;
    this.#index.markDelete(label);
    this.#deleted += 1;
  }

  /** Up to k nearest labels with their cosine similarity. */
  search(
    query: Float32Array,
    k: number,
    ef: number,
    filter?: (label: number) => boolean,
  ): Array<{ label: number; sim: number }> {
    const count = this.#index.getCurrentCount();
    if (count === 0) return [];
    this.#index.setEf(Math.max(ef, k));
    const res = this.#index.searchKnn(Array.from(query), Math.min(k, count), filter);
    return res.neighbors.map((label, i) => ({ label, sim: 1 - (res.distances[i] ?? 1) }));
  }
}

/**
 * An exact inner-product scan in native code (hnswlib's brute force: one contiguous buffer, SIMD
 * dot products) over at most `capacity` points. Labels are the caller's integers; setting a label
 * again replaces its vector. There is no removal: hnswlib's `removePoint` of the last slot leaves
 * the label behind in its map, so the label's next vector is written past the end and never found
 * (the caller drops labels itself and builds a fresh scan to reclaim their slots).
 */
export class FlatIp {
  readonly #index: InstanceType<typeof hnswlib.BruteforceSearch>;
  readonly dim: number;
  readonly capacity: number;

  constructor(dim: number, capacity: number) {
    this.#index = new hnswlib.BruteforceSearch('ip', dim);
    this.#index.initIndex(capacity);
    this.dim = dim;
    this.capacity = capacity;
  }

  /** Slots in use. */
  get size(): number {
    return this.#index.getCurrentCount();
  }

  /** Adds or replaces `label`'s vector; throws when a new label would pass `capacity`. */
  set(label: number, vector: Float32Array): void {
    this.#index.addPoint(Array.from(vector), label);
  }

  /** The k labels with the largest inner product, best first, with hnswlib's float32 product. */
  search(query: Float32Array, k: number): Array<{ label: number; sim: number }> {
    // hnswlib's scan seeds its heap with the first k slots without checking k against the count.
    const n = Math.min(k, this.size);
    if (n < 1) return [];
    const res = this.#index.searchKnn(Array.from(query), n);
    return res.neighbors.map((label, i) => ({ label, sim: 1 - (res.distances[i] ?? 1) }));
  }
}

/** A set of small non-negative integers as a byte per integer (a Set of a million numbers costs ~40 bytes each). */
class LabelSet {
  #has = new Uint8Array(1024);
  size = 0;

  has(label: number): boolean {
    return this.#has[label] === 1;
  }

  add(label: number): void {
    if (!Number.isInteger(label) || label < 0 || label >= 2 ** 32)
      throw new Error(`HNSW label ${label} is not a 32-bit unsigned integer`);
    if (label >= this.#has.length) {
      const next = new Uint8Array(Math.max(label + 1, this.#has.length * 2));
      next.set(this.#has);
      this.#has = next;
    }
    if (this.#has[label] === 1) return;
    this.#has[label] = 1;
    this.size += 1;
  }

  delete(label: number): boolean {
    if (this.#has[label] !== 1) return false;
    this.#has[label] = 0;
    this.size -= 1;
    return true;
  }
}

function isLive(index: InstanceType<typeof hnswlib.HierarchicalNSW>, label: number): boolean {
  try {
    index.getPoint(label);
    return true;
  } catch {
    return false;
  }
}
