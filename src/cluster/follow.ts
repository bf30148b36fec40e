/**
 * @module cluster/follow — subscriptions follow their partition: the node holding a subscriber's
 * stream keeps the subscription's spec, last chunk vectors and memories pushed, and registers it
 * with each new owner of the partition (takeover or move) with that state as `resume`, so pushes
 * go on and nothing is pushed twice.
 */
import type { Push, SubscriptionSpec } from '../protocol/shard.ts';

/** What a new owner needs to carry on a subscription as the old owner would have. */
export interface SubscriptionResume {
  /** The most recent chunk vectors, oldest first (the owner matches new writes against them). */
  recent: Array<{ vector: Float32Array; offset: number }>;
  /** Memories already pushed (the most recent RESUME_PUSHED_MAX). */
  pushed: string[];
  /** The new owner matches memories created since then against `recent` (writes made while the subscription moved). */
  sinceUs: number;
}

/** Chunks kept per subscription: as many as the owner keeps (shard/subscriptions.ts). */
export const RESUME_RECENT = 8;
/** Pushed memory ids carried to a new owner; older pushes may be repeated after a move. */
export const RESUME_PUSHED_MAX = 10_000;

interface Followed {
  ws: string;
  spec: SubscriptionSpec;
  /** The ownership term the subscription is registered under (null: not registered with the current owner). */
  term: string | null;
  /** When this node last saw `term` still hold the partition (µs): writes before it were matched by that owner. */
  confirmedAtUs: number;
  recent: Array<{ vector: Float32Array; offset: number }>;
  pushed: Set<string>;
  reopening: Promise<void> | null;
}

export class FollowedSubscriptions {
  readonly #subs = new Map<number, Followed>();
  readonly #marginUs: number;

  /** `marginMs`: how far before the last confirmation a new owner looks for missed writes (a lease covers pushes lost with a dying owner, and clock offsets). */
  constructor(marginMs: number) {
    this.#marginUs = marginMs * 1000;
  }

  get size(): number {
    return this.#subs.size;
  }

  /** A subscription opened through this node, registered with the owner of `term`. */
  opened(ws: string, spec: SubscriptionSpec, term: string | null): void {
    const { resume: _ignored, ...plain } = spec;
    this.#subs.set(spec.id, {
      ws,
      spec: plain,
      term,
      confirmedAtUs: Date.now() * 1000,
      recent: [],
      pushed: new Set(),
      reopening: null,
    });
  }

  closed(id: number): void {
    this.#subs.delete(id);
  }

  has(id: number): boolean {
    return this.#subs.has(id);
  }

  /** A chunk was matched: remember its vector, and what it pushed. */
  matched(id: number, vector: Float32Array, offset: number, pushes: readonly Push[]): void {
    const f = this.#subs.get(id);
    if (!f) return;
    f.recent.push({ vector, offset });
    if (f.recent.length > RESUME_RECENT) f.recent.shift();
    this.pushed(pushes);
  }

  /** Pushes delivered to subscribers on this node (for writes, or from a chunk). */
  pushed(pushes: readonly Push[]): void {
    for (const p of pushes) {
      const f = this.#subs.get(p.subscription);
      if (!f) continue;
      f.pushed.delete(p.memory.id);
      f.pushed.add(p.memory.id);
      if (f.pushed.size > RESUME_PUSHED_MAX)
        f.pushed.delete(f.pushed.values().next().value as string);
    }
  }

  /** The spec to register with a new owner: the original one plus the state to resume from. */
  resumeSpec(id: number): SubscriptionSpec | null {
    const f = this.#subs.get(id);
    if (!f) return null;
    return {
      ...f.spec,
      resume: {
        recent: f.recent.map((r) => ({ vector: r.vector, offset: r.offset })),
        pushed: [...f.pushed],
        sinceUs: f.confirmedAtUs - this.#marginUs,
      },
    };
  }

  /**
   * Registers, with the current owner, every subscription whose registration predates that
   * owner's term. `termOf` gives the current term of a workspace's partition (null: no owner now);
   * `register` sends the spec; a failure leaves the subscription to the next round.
   */
  reconcile(
    termOf: (ws: string) => string | null,
    register: (ws: string, spec: SubscriptionSpec) => Promise<void>,
    onError: (id: number, err: unknown) => void,
  ): void {
    for (const [id, f] of this.#subs) {
      const term = termOf(f.ws);
      if (term !== null && term === f.term) f.confirmedAtUs = Date.now() * 1000;
      if (term === null || term === f.term || f.reopening) continue;
      const spec = this.resumeSpec(id);
      if (!spec) continue;
      f.reopening = register(f.ws, spec)
        .then(() => {
          if (this.#subs.get(id) !== f) return;
          f.term = term;
          f.confirmedAtUs = Date.now() * 1000;
        })
        .catch((err: unknown) => onError(id, err))
        .finally(() => (f.reopening = null));
    }
  }

  /** Registers one subscription again now (a feed found the owner did not know it). */
  async reopen(
    id: number,
    term: string | null,
    register: (ws: string, spec: SubscriptionSpec) => Promise<void>,
  ): Promise<boolean> {
    const f = this.#subs.get(id);
    const spec = this.resumeSpec(id);
    if (!f || !spec) return false;
    await register(f.ws, spec);
    if (this.#subs.get(id) === f) {
      f.term = term;
      f.confirmedAtUs = Date.now() * 1000;
    }
    return true;
  }
}
