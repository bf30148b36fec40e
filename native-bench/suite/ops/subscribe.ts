/**
 * @module native-bench/suite/ops/subscribe — subscribe_push: one open subscription per client;
 * each operation feeds the exact text of a stored single-sentence memory that this subscription
 * has not been pushed yet, and completes when that memory's push arrives (and the feed's reply).
 * The server matches a fed chunk before it acknowledges the feed, so the time measured runs from
 * sending the text to receiving the push.
 */
import type { Operation } from '../../lib/closed-loop.ts';
import type { Dataset, Sample } from '../dataset.ts';
import type { Driver, Subscription } from '../driver.ts';

/**
 * A fed sentence pushes itself (cosine ~1) and its closest near-duplicates only: with the model on
 * this corpus, a median of 1 push per feed at 0.95 (2 at 0.9), so the phase measures the push path,
 * not serialising dozens of pushes.
 */
export const PUSH_THRESHOLD = 0.95;
const PUSH_TIMEOUT_MS = 10_000;

interface Probe {
  sub: Subscription;
  pushed: Set<string>;
  waiting: { id: string; done: () => void } | null;
}

export class PushProbes {
  readonly #idle: Probe[] = [];
  readonly #all: Probe[] = [];
  readonly #ds: Dataset;

  private constructor(ds: Dataset) {
    this.#ds = ds;
  }

  /** Opens `count` subscriptions. */
  static async open(d: Driver, ds: Dataset, count: number): Promise<PushProbes> {
    if (ds.samples.length === 0) throw new Error('subscribe_push needs stored single-sentence memories');
    const probes = new PushProbes(ds);
    for (let i = 0; i < count; i++) probes.#add(await d.subscribe({ threshold: PUSH_THRESHOLD }));
    return probes;
  }

  #add(sub: Subscription): void {
    const p: Probe = { sub, pushed: new Set(), waiting: null };
    sub.onPush((id) => {
      p.pushed.add(id);
      if (p.waiting?.id === id) p.waiting.done();
    });
    this.#idle.push(p);
    this.#all.push(p);
  }

  readonly op: Operation = async () => {
    const p = this.#idle.pop();
    if (!p) throw new Error('more clients than subscriptions');
    try {
      await this.#feedAndWait(p, this.#target(p));
      return true;
    } finally {
      p.waiting = null;
      this.#idle.push(p);
    }
  };

  async #feedAndWait(p: Probe, target: Sample): Promise<void> {
    const pushed = this.#awaitPush(p, target.id);
    try {
      await p.sub.feed(target.content.toLowerCase());
      await pushed.arrived;
    } finally {
      pushed.cancel();
    }
  }

  #target(p: Probe): Sample {
    for (let tries = 0; tries < this.#ds.samples.length; tries++) {
      const s = this.#ds.nextSample();
      if (!p.pushed.has(s.id)) return s;
    }
    throw new Error('every sample memory was already pushed to this subscription');
  }

  /** Resolves when `id` is pushed to `p`; rejects after PUSH_TIMEOUT_MS unless cancelled first. */
  #awaitPush(p: Probe, id: string): { arrived: Promise<void>; cancel: () => void } {
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no push of ${id} within ${PUSH_TIMEOUT_MS} ms`)), PUSH_TIMEOUT_MS);
      p.waiting = { id, done: resolve };
    });
    // Handled here so a timeout while the feed is still failing is not an unhandled rejection.
    arrived.catch(() => undefined);
    return { arrived, cancel: () => clearTimeout(timer) };
  }

  async close(): Promise<void> {
    await Promise.all(this.#all.map((p) => p.sub.close()));
  }
}
