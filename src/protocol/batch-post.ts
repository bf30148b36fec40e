/**
 * @module protocol/batch-post — messages across a thread boundary, coalesced: everything posted
 * during one turn of the event loop goes as one `postMessage` (an array) in the loop's check phase.
 * A post costs a structured clone plus a wake-up of the other thread whatever its size; under load,
 * the requests a socket read brings (and the replies a shard finishes together) share one.
 * A lone message goes as itself, so the receiver reads either with `unbatch`.
 */

/** The side of a MessagePort or Worker this needs. */
export interface PostTarget {
  postMessage(value: unknown, transfer?: readonly ArrayBuffer[]): void;
}

interface Queued<T> {
  msg: T;
  transfer: readonly ArrayBuffer[];
  /** Called when this message alone cannot be posted (it could not be cloned). */
  fail: (err: Error) => void;
}

export class BatchPoster<T> {
  readonly #target: PostTarget;
  #queue: Array<Queued<T>> = [];
  #scheduled = false;

  constructor(target: PostTarget) {
    this.#target = target;
  }

  /** Queues `msg` for the end of this turn; `fail` hears of a message that cannot be cloned. */
  post(msg: T, transfer: readonly ArrayBuffer[], fail: (err: Error) => void): void {
    this.#queue.push({ msg, transfer, fail });
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Posts what is queued now (also called by the timer). */
  flush(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    if (queue.length === 1) return this.#postOne(queue[0] as Queued<T>);
    try {
      this.#target.postMessage(
        queue.map((q) => q.msg),
        queue.flatMap((q) => q.transfer),
      );
    } catch {
      // One of them cannot be cloned (nothing was sent or moved): each goes alone, and only the
      // culprit fails.
      for (const q of queue) this.#postOne(q);
    }
  }

  #postOne(q: Queued<T>): void {
    try {
      this.#target.postMessage(q.msg, q.transfer);
    } catch (err) {
      q.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

/** The messages in what a BatchPoster sent: an array of them, or one alone. */
export function unbatch<T>(data: T | T[]): T[] {
  return Array.isArray(data) ? data : [data];
}
