/**
 * @module threads/turn — how long work on a worker's thread (a shard's) gives way to its
 * requests: for a whole turn of the event loop. The first `setImmediate` is queued ahead of the
 * replies that requests served meanwhile post (the worker's BatchPoster flushes in a
 * `setImmediate`), so they go out in the same check phase; the second runs after the next poll
 * phase has read what arrived. With one hop the next slice ran ahead of those replies, and every
 * reply waited a slice.
 */

/**
 * The least work a slice does before it ends for a waiting request: a request waits at most this
 * long (not the slice's 4 ms), and the work still gets this much of each turn of the event loop
 * under a steady stream of requests.
 */
export const MIN_SLICE_MS = 1;

/** True when a slice begun at `start` has done MIN_SLICE_MS and a request is waiting: it ends now. */
export function givesWay(start: number, requestWaiting: () => boolean): boolean {
  return performance.now() - start >= MIN_SLICE_MS && requestWaiting();
}

/** Runs `fn` a whole turn of the event loop from now. */
export function afterTurn(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

/** Resolves a whole turn of the event loop from now. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => afterTurn(resolve));
}
