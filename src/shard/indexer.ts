/**
 * @module shard/indexer — the shard's background indexing: moves pending vectors into HNSW graphs
 * (and memories recovery left into lexical indexes), then computes new memories' densities
 * (index/density), in slices of a few ms, between requests.
 */
import type { ShardState } from './store/apply.ts';
import { afterTurn, givesWay } from '../threads/turn.ts';

/** Longest stretch the background indexer holds the shard's thread. */
const INDEX_SLICE_MS = 4;
/**
 * Unindexed vectors in one workspace past which indexing no longer yields to requests and
 * contradiction checks pause: every search scans the unindexed vectors exactly (~0.5 µs each).
 */
export const PENDING_URGENT = 1024;

export interface IndexerHooks {
  /** The shard is draining: no new slice starts. */
  stopped: () => boolean;
  /** Requests are in flight. */
  busy: () => boolean;
  /** A request is waiting on the shard's port (the worker's `requestWaiting`). */
  requestWaiting: () => boolean;
}

export class Indexer {
  readonly #state: ShardState;
  readonly #hooks: IndexerHooks;
  #running = false;

  constructor(state: ShardState, hooks: IndexerHooks) {
    this.#state = state;
    this.#hooks = hooks;
  }

  /** Starts a slice soon, unless one is scheduled already. */
  schedule(): void {
    if (this.#running || this.#hooks.stopped()) return;
    this.#running = true;
    // While requests are in flight the indexer takes every other few ms, leaving CPU to the
    // router and the requests (pending vectors are still found, by exact scan). A long backlog
    // makes those scans costly, so past PENDING_URGENT the indexer runs at full pace again.
    if (this.#hooks.busy() && this.backlog() < PENDING_URGENT)
      setTimeout(() => this.#step(), INDEX_SLICE_MS);
    else afterTurn(() => this.#step());
  }

  /** Unindexed vectors in the workspace furthest behind. */
  backlog(): number {
    let backlog = 0;
    for (const w of this.#state.workspaces.values())
      backlog = Math.max(backlog, w.vectors.pendingSize);
    return backlog;
  }

  /** Unindexed vectors in all workspaces. */
  pending(): number {
    let pending = 0;
    for (const w of this.#state.workspaces.values()) pending += w.vectors.pendingSize;
    return pending;
  }

  #step(): void {
    const start = performance.now();
    let more = false;
    // Past MIN_SLICE_MS the slice also ends after the insertion during which a request arrived,
    // unless the indexer is far behind (searches scan its backlog): then it takes whole slices.
    let waiting = false;
    const urgent = this.backlog() >= PENDING_URGENT;
    const stop = (): boolean =>
      (waiting ||= !urgent && givesWay(start, this.#hooks.requestWaiting));
    for (const w of this.#state.workspaces.values()) {
      if (!w.vectors.needsIndexing && w.lexicalBacklog === 0 && w.densities.backlog === 0) continue;
      const left = start + INDEX_SLICE_MS - performance.now();
      if (left <= 0 || waiting) {
        more = true;
        break;
      }
      // Lexical entries left by recovery first: a query that finds them missing must wait for all.
      if (w.lexicalBacklog > 0)
        more =
          w.indexLexicalSome(left) || w.vectors.needsIndexing || w.densities.backlog > 0 || more;
      else if (w.vectors.needsIndexing)
        more = w.vectors.indexSome(left, stop) || w.densities.backlog > 0 || more;
      // Densities once the vectors are in the graph (a search then scans no pending vectors).
      else more = w.densities.fillSome(left, (id) => w.memories.get(id), w.earlier) || more;
    }
    this.#running = false;
    if (more) this.schedule();
  }
}
