/**
 * @module shard/index/vector-index — nearest-neighbour search over one workspace's live memories.
 * Small workspaces are scanned exactly (unfiltered scans from NATIVE_MIN vectors in native code,
 * over a copy of the vectors made at the first such search); past EXACT_MAX vectors an HNSW graph
 * is built. New or changed vectors wait in `pending` (searched exactly) until the shard's
 * background indexer moves them into the graph, so a write never waits for graph insertion and
 * results never miss them.
 */
import { dot } from '../../recall/vector.ts';
import { EF_CONSTRUCTION, FlatIp, Hnsw } from './hnsw.ts';

/** Below this many vectors an exact scan is as fast as HNSW (measured: ~0.7 µs per 384-d vector). */
export const EXACT_MAX = 1024;
/**
 * From this many vectors an unfiltered exact scan runs in native code; below it the JS scan is as
 * fast (the native call's fixed cost: native-bench/micro/exact-scan.ts, 0.05 ms either way at 200
 * 384-d vectors, 0.08 against 0.24 ms at 1,000).
 */
const NATIVE_MIN = 256;
/**
 * The graph keeps deleted points (see Hnsw.add); once they outnumber both this and half the live
 * ones, a new graph is built from the live vectors in the background, in the indexer's slices,
 * while searches use the old one. Each deletion so pays for about two insertions, later.
 */
const REBUILD_DELETED_MIN = 1024;

export interface Neighbour {
  id: string;
  sim: number;
}

export class VectorIndex {
  readonly #vectors = new Map<string, Float32Array>();
  readonly #labelOf = new Map<string, number>();
  /** Label → id (labels are small integers handed out in order, so an array). */
  readonly #idOf: Array<string | undefined> = [];
  readonly #pending = new Set<string>();
  #nextLabel = 0;
  #hnsw: Hnsw | null = null;
  /** A graph being built from the live labels below `end`, next at `at`; labels from `end` on go into both graphs. */
  #rebuild: { hnsw: Hnsw; at: number; end: number } | null = null;
  readonly #efConstruction: number;
  /** The native exact scan of a workspace without a graph, filled by its unfiltered searches. */
  #flat: FlatScan | null = null;
  /** Set when a copy could not be filled (vectors of two lengths), until the next write. */
  #flatFailed = false;

  /** `efConstruction`: the graph's build beam (benchmarks compare others; the shard takes the default). */
  constructor(opts: { efConstruction?: number } = {}) {
    this.#efConstruction = opts.efConstruction ?? EF_CONSTRUCTION;
  }

  get size(): number {
    return this.#vectors.size;
  }

  /** True while some vectors are not yet in the graph (or the graph is due but not built). */
  get needsIndexing(): boolean {
    return this.#hnsw
      ? this.#pending.size > 0 || this.#rebuild !== null
      : this.#vectors.size > EXACT_MAX;
  }

  /** Vectors waiting to enter the graph (searched by exact scan meanwhile). */
  get pendingSize(): number {
    return this.#hnsw
      ? this.#pending.size
      : this.#vectors.size > EXACT_MAX
        ? this.#vectors.size
        : 0;
  }

  get hasGraph(): boolean {
    return this.#hnsw !== null;
  }

  vectorOf(id: string): Float32Array | undefined {
    return this.#vectors.get(id);
  }

  upsert(id: string, vector: Float32Array): void {
    this.#vectors.set(id, vector);
    if (this.#hnsw) this.#pending.add(id);
    // A full copy (or one that can no longer serve) is dropped; later searches fill a new one.
    if (this.#flat && !this.#flat.set(id, vector)) this.#flat = null;
    this.#flatFailed = false;
  }

  remove(id: string): void {
    this.#vectors.delete(id);
    this.#pending.delete(id);
    this.#flat?.remove(id);
    if (this.#flat?.wasteful) this.#flat = null;
    this.#flatFailed = false;
    this.#forgetLabel(id);
  }

  #forgetLabel(id: string): void {
    const label = this.#labelOf.get(id);
    if (label === undefined) return;
    this.#hnsw?.remove(label);
    this.#rebuild?.hnsw.remove(label);
    this.#labelOf.delete(id);
    this.#idOf[label] = undefined;
    this.#maybeRebuild();
  }

  /**
   * Moves pending vectors into the graph for at most `budgetMs`, or until `stop` says a request is
   * waiting (asked after each insertion); true when some remain.
   */
  indexSome(budgetMs: number, stop: () => boolean = () => false): boolean {
    if (!this.#hnsw) {
      const first = this.#vectors.values().next().value;
      if (this.#vectors.size <= EXACT_MAX || !first) return false;
      this.#hnsw = Hnsw.create(first.length, this.#vectors.size * 2, this.#efConstruction);
      this.#flat = null;
      for (const id of this.#vectors.keys()) this.#pending.add(id);
    }
    const hnsw = this.#hnsw;
    const start = performance.now();
    let stopped = false;
    for (const id of this.#pending) {
      const vector = this.#vectors.get(id);
      this.#pending.delete(id);
      if (vector) {
        // A changed vector goes in under a new label (see Hnsw.add); its old point is deleted.
        this.#forgetLabel(id);
        const label = this.#label(id);
        hnsw.add(label, vector);
        this.#rebuild?.hnsw.add(label, vector);
      }
      if (performance.now() - start >= budgetMs || (stopped = stop())) break;
    }
    if (this.#pending.size === 0 && !stopped) this.#rebuildSome(start + budgetMs, stop);
    return this.#pending.size > 0 || this.#rebuild !== null;
  }

  /** Adds live points to the graph being rebuilt until `deadline`; swaps it in when complete. */
  #rebuildSome(deadline: number, stop: () => boolean): void {
    const r = this.#rebuild;
    if (!r) return;
    while (r.at < r.end && performance.now() < deadline && !stop()) {
      const label = r.at++;
      const id = this.#idOf[label];
      const vector = id === undefined ? undefined : this.#vectors.get(id);
      if (vector) r.hnsw.add(label, vector);
    }
    if (r.at < r.end) return;
    this.#hnsw = r.hnsw;
    this.#rebuild = null;
  }

  #maybeRebuild(): void {
    const hnsw = this.#hnsw;
    if (
      !hnsw ||
      this.#rebuild ||
      hnsw.deletedCount < Math.max(REBUILD_DELETED_MIN, this.#labelOf.size / 2)
    )
      return;
    this.#rebuild = {
      hnsw: Hnsw.create(
        hnsw.dim,
        Math.max(EXACT_MAX, this.#labelOf.size * 2),
        this.#efConstruction,
      ),
      at: 0,
      end: this.#nextLabel,
    };
  }

  #label(id: string): number {
    let label = this.#labelOf.get(id);
    if (label === undefined) {
      // Labels are never reused; the graph reuses deleted slots for new labels instead.
      label = this.#nextLabel++;
      this.#labelOf.set(id, label);
      this.#idOf[label] = id;
    }
    return label;
  }

  /**
   * The k most similar vectors. `only`: restrict to these ids (scanned exactly); `filter`: a
   * predicate applied inside the search; `exact`: scan every vector even when a graph exists
   * (cheaper than a graph walk when the filter passes few vectors).
   */
  search(
    query: Float32Array,
    opts: {
      k: number;
      ef: number;
      only?: Iterable<string>;
      filter?: (id: string) => boolean;
      exact?: boolean;
    },
  ): Neighbour[] {
    if (opts.k < 1) return [];
    if (opts.only) return this.#exact(query, opts.k, opts.only, opts.filter);
    if (
      !this.#hnsw &&
      !opts.filter &&
      !this.#flatFailed &&
      this.#vectors.size <= EXACT_MAX &&
      (this.#flat || this.#vectors.size >= NATIVE_MIN)
    ) {
      this.#flat ??= FlatScan.start(this.#vectors);
      const state = this.#flat?.fill(FILL_STEP);
      if (state === 'unusable') [this.#flat, this.#flatFailed] = [null, true];
      else if (state === 'ready' && this.#flat?.dim === query.length)
        return this.#flat.search(query, opts.k, this.#vectors);
    }
    if (!this.#hnsw || opts.exact)
      return this.#exact(query, opts.k, this.#vectors.keys(), opts.filter);
    const filter = opts.filter;
    const fromGraph = this.#hnsw.search(
      query,
      opts.k,
      opts.ef,
      filter ? (label) => filter(this.#idOf[label] ?? '') : undefined,
    );
    const out: Neighbour[] = [];
    for (const { label } of fromGraph) {
      const id = this.#idOf[label];
      const vector = id === undefined ? undefined : this.#vectors.get(id);
      // Pending ids are scored below from their current vector, so skip possibly stale graph hits.
      if (id === undefined || !vector || this.#pending.has(id)) continue;
      out.push({ id, sim: dot(query, vector) });
    }
    out.push(...this.#exact(query, opts.k, this.#pending, filter));
    return out.sort((a, b) => b.sim - a.sim).slice(0, opts.k);
  }

  #exact(
    query: Float32Array,
    k: number,
    ids: Iterable<string>,
    filter?: (id: string) => boolean,
  ): Neighbour[] {
    const top: Neighbour[] = [];
    for (const id of ids) {
      const vector = this.#vectors.get(id);
      if (!vector || (filter && !filter(id))) continue;
      const sim = dot(query, vector);
      if (top.length < k) {
        top.push({ id, sim });
        if (top.length === k) top.sort((a, b) => b.sim - a.sim);
      } else if (sim > (top[k - 1] as Neighbour).sim) {
        insertSorted(top, { id, sim });
      }
    }
    return top.sort((a, b) => b.sim - a.sim);
  }

  /** Labels and graph for saving; only when every vector is in the graph. */
  exportGraph(): { hnsw: Hnsw; labels: Array<[string, number]>; nextLabel: number } | null {
    if (!this.#hnsw) return null;
    while (this.indexSome(1000)) {
      /* drain */
    }
    return { hnsw: this.#hnsw, labels: [...this.#labelOf], nextLabel: this.#nextLabel };
  }

  /**
   * Adopts a graph saved with the snapshot just loaded, reconciling it with the vectors present:
   * labels of vectors that are gone are deleted, vectors missing from the graph go to pending.
   */
  adoptGraph(hnsw: Hnsw, labels: ReadonlyArray<readonly [string, number]>, nextLabel = 0): void {
    this.#hnsw = hnsw;
    this.#flat = null;
    this.#pending.clear();
    let maxLabel = -1;
    for (const [id, label] of labels) {
      maxLabel = Math.max(maxLabel, label);
      if (this.#vectors.has(id)) {
        this.#labelOf.set(id, label);
        this.#idOf[label] = id;
      } else {
        hnsw.remove(label);
      }
    }
    // Deleted points keep their labels inside the graph file, so new labels start past all of them.
    this.#nextLabel = Math.max(maxLabel + 1, nextLabel, hnsw.maxLabel + 1);
    for (const id of this.#vectors.keys()) if (!this.#labelOf.has(id)) this.#pending.add(id);
    this.#maybeRebuild();
  }
}

/** Room a FlatScan's copy leaves for growth. */
const GROWTH = 1.25;
/** Vectors copied into a FlatScan per search while it fills (~25 µs each). */
const FILL_STEP = 64;

/**
 * Ids over a FlatIp. The copy is filled FILL_STEP vectors a search (a live iterator over the
 * workspace's map, so writes meanwhile are seen: hnswlib converts each vector element by element,
 * ~25 µs a vector, so copying 1,000 at once held the thread for ~25 ms), and serves once complete;
 * until then searches scan in JS. A removed id's slot stays, unlabelled, and searches ask for k
 * plus those. A full copy, or one whose dead slots outnumber max(32, half the live), is dropped
 * and filled again with room for a quarter more (the index's own copy, as a graph's vectors are:
 * at most 1.25 vectors a memory). None is made for more than EXACT_MAX vectors or vectors of more
 * than one length. hnswlib's scan runs SSE dot products over one contiguous buffer.
 */
class FlatScan {
  readonly #flat: FlatIp;
  readonly #labelOf = new Map<string, number>();
  /** Label → id; undefined for a removed id's slot. */
  readonly #idOf: Array<string | undefined> = [];
  #dead = 0;
  /** The vectors still to copy, or null once the copy is complete. */
  #fill: Iterator<[string, Float32Array]> | null;

  private constructor(flat: FlatIp, fill: Iterator<[string, Float32Array]>) {
    this.#flat = flat;
    this.#fill = fill;
  }

  get dim(): number {
    return this.#flat.dim;
  }

  /** True when dead slots are worth a fresh copy. */
  get wasteful(): boolean {
    return this.#dead > Math.max(32, this.#labelOf.size / 2);
  }

  /** An empty copy of these vectors, to fill; null when they are too many. */
  static start(vectors: ReadonlyMap<string, Float32Array>): FlatScan | null {
    const first = vectors.values().next().value;
    if (!first || vectors.size > EXACT_MAX) return null;
    const capacity = Math.min(
      Math.max(64, Math.ceil(vectors.size * GROWTH)),
      Math.ceil(EXACT_MAX * GROWTH),
    );
    return new FlatScan(new FlatIp(first.length, capacity), vectors.entries());
  }

  /** Copies up to `count` more vectors: 'ready' once complete, 'unusable' when they do not fit. */
  fill(count: number): 'ready' | 'filling' | 'unusable' {
    for (let i = 0; this.#fill && i < count; i++) {
      const next = this.#fill.next();
      if (next.done === true) this.#fill = null;
      else if (!this.#put(next.value[0], next.value[1])) return 'unusable';
    }
    return this.#fill ? 'filling' : 'ready';
  }

  /** False, changing nothing, when the copy is full or the vector is of another length. */
  set(id: string, vector: Float32Array): boolean {
    // While filling, an id not copied yet is still ahead of the iterator (with its new vector).
    if (this.#fill && !this.#labelOf.has(id)) return true;
    return this.#put(id, vector);
  }

  remove(id: string): void {
    const label = this.#labelOf.get(id);
    if (label === undefined) return;
    this.#labelOf.delete(id);
    this.#idOf[label] = undefined;
    this.#dead += 1;
  }

  /** The k nearest, scored again by `dot` so similarities are the same as the JS scan's. */
  search(query: Float32Array, k: number, vectors: ReadonlyMap<string, Float32Array>): Neighbour[] {
    const out: Neighbour[] = [];
    for (const { label } of this.#flat.search(query, k + this.#dead)) {
      const id = this.#idOf[label];
      const vector = id === undefined ? undefined : vectors.get(id);
      if (id !== undefined && vector) out.push({ id, sim: dot(query, vector) });
      if (out.length === k) break;
    }
    return out.sort((a, b) => b.sim - a.sim);
  }

  #put(id: string, vector: Float32Array): boolean {
    if (vector.length !== this.#flat.dim) return false;
    let label = this.#labelOf.get(id);
    if (label === undefined) {
      if (this.#flat.size >= this.#flat.capacity) return false;
      label = this.#idOf.length;
      this.#labelOf.set(id, label);
      this.#idOf.push(id);
    }
    this.#flat.set(label, vector);
    return true;
  }
}

function insertSorted(top: Neighbour[], item: Neighbour): void {
  let i = top.length - 1;
  top[i] = item;
  while (i > 0 && (top[i - 1] as Neighbour).sim < item.sim) {
    top[i] = top[i - 1] as Neighbour;
    i -= 1;
  }
  top[i] = item;
}
