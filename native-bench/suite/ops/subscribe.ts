/**
 * @module native-bench/suite/ops/subscribe — the push operations, each with one open subscription
 * per client plus idle ones up to the phase's open count (each idle one fed a sentence once, so
 * new writes are matched against its recent chunk too, as a real listener's would be):
 * - feed (subscribe_push, subscribe_push_N_open): feeds the exact text of a stored single-sentence
 *   memory that this subscription has not been pushed yet and completes when that memory's push
 *   arrives (and the feed's reply). The server matches a fed chunk before it acknowledges the feed,
 *   so the time runs from sending the text to receiving the push.
 * - write (write_push_N_open): feeds a new sentence first (untimed), then stores it as a new
 *   memory; the time runs from sending the remember to receiving the new memory's push.
 * - first (subscribe_first_push): each operation opens a new subscription at threshold 0.5 (the
 *   default, as an agent would hold one), feeds it a new sentence of the corpus and closes it;
 *   the time runs from sending the text to the first push, whichever memory it carries (issue 17:
 *   HEBBS pushes at most 5 per feed, and a server that pushes hundreds sends the first one late).
 *   A fresh subscription keeps one feed's pushes from being taken for the next one's. Opening
 *   and closing are outside the time but inside ops/s. A feed that pushes nothing is an error.
 * Fed text gets a random letter case: the model is uncased, so the embedding is the same, but the
 * embedding cache (keyed by the exact text) cannot answer — not for the stored memory's text, and
 * not for the same sample fed in an earlier phase.
 */
import type { Operation } from '../../lib/closed-loop.ts';
import type { Rng } from '../../lib/prng.ts';
import type { Dataset, Sample } from './dataset.ts';
import type { Driver, Subscription } from './driver.ts';

/**
 * A fed sentence pushes itself (cosine ~1) and its closest near-duplicates only: with the model on
 * this corpus, a median of 1 push per feed at 0.95 (2 at 0.9), so the phase measures the push path,
 * not serialising dozens of pushes.
 */
export const PUSH_THRESHOLD = 0.95;
/** subscribe_first_push: the threshold of issue 17's measurement (and the default). */
export const FIRST_PUSH_THRESHOLD = 0.5;
const PUSH_TIMEOUT_MS = 10_000;
/** After the feed's reply, how long a push may still be on its way (another stream) before the feed counts as pushing nothing. */
const FIRST_PUSH_GRACE_MS = 500;

/** The text with each letter's case drawn at random: same tokens for an uncased model, new cache key. */
function recase(text: string, rng: Rng): string {
  let out = '';
  for (const ch of text) out += rng.next() < 0.5 ? ch.toUpperCase() : ch.toLowerCase();
  return out;
}

interface Probe {
  sub: Subscription;
  pushed: Set<string>;
  waiting: { id: string; done: () => void } | null;
}

export class PushProbes {
  readonly #idle: Probe[] = [];
  readonly #all: Probe[] = [];
  readonly #ds: Dataset;
  readonly #d: Driver;

  private constructor(ds: Dataset, d: Driver) {
    this.#ds = ds;
    this.#d = d;
  }

  /** Opens `active` subscriptions that run operations and `open - active` idle ones. */
  static async open(d: Driver, ds: Dataset, active: number, open = active): Promise<PushProbes> {
    if (ds.samples.length === 0)
      throw new Error('subscribe_push needs stored single-sentence memories');
    const probes = new PushProbes(ds, d);
    for (let i = 0; i < Math.max(open, active); i++) {
      const p = probes.#add(await d.subscribe({ threshold: PUSH_THRESHOLD }), i < active);
      if (i >= active) await p.sub.feed(recase(ds.cue(), ds.rng));
    }
    return probes;
  }

  #add(sub: Subscription, active: boolean): Probe {
    const p: Probe = { sub, pushed: new Set(), waiting: null };
    sub.onPush((id) => {
      p.pushed.add(id);
      if (p.waiting?.id === id) p.waiting.done();
    });
    if (active) this.#idle.push(p);
    this.#all.push(p);
    return p;
  }

  /** Feed → push of a stored memory. */
  readonly feedOp: Operation = () =>
    this.#withProbe(async (p) => {
      await this.#feedAndWait(p, this.#target(p));
      return true;
    });

  /** Remember → push of the new memory to a subscription that was fed its text. */
  readonly writeOp: Operation = () =>
    this.#withProbe(async (p) => {
      const m = this.#ds.nextMemory();
      const content = this.#ds.cue();
      await p.sub.feed(recase(content, this.#ds.rng));
      const t0 = performance.now();
      const id = await this.#d.remember({ ...m, content });
      this.#ds.stored(id, { ...m, content });
      if (!p.pushed.has(id)) {
        const pushed = this.#awaitPush(p, id);
        try {
          await pushed.arrived;
        } finally {
          pushed.cancel();
        }
      }
      return performance.now() - t0;
    });

  async #withProbe<T>(run: (p: Probe) => Promise<T>): Promise<T> {
    const p = this.#idle.pop();
    if (!p) throw new Error('more clients than subscriptions');
    try {
      return await run(p);
    } finally {
      p.waiting = null;
      this.#idle.push(p);
    }
  }

  async #feedAndWait(p: Probe, target: Sample): Promise<void> {
    const pushed = this.#awaitPush(p, target.id);
    try {
      await p.sub.feed(recase(target.content, this.#ds.rng));
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
    throw new Error(
      `every sample memory was already pushed to this subscription (${p.pushed.size} pushed, ${this.#ds.samples.length} samples)`,
    );
  }

  /** Resolves when `id` is pushed to `p`; rejects after PUSH_TIMEOUT_MS unless cancelled first. */
  #awaitPush(p: Probe, id: string): { arrived: Promise<void>; cancel: () => void } {
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<void>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no push of ${id} within ${PUSH_TIMEOUT_MS} ms`)),
        PUSH_TIMEOUT_MS,
      );
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

/** subscribe_first_push: open (untimed), feed a new sentence, time to its first push, close. */
export function firstPushOp(d: Driver, ds: Dataset): Operation {
  return async () => {
    const sub = await d.subscribe({ threshold: FIRST_PUSH_THRESHOLD });
    let first = 0;
    let pushed: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => {
      pushed = resolve;
    });
    sub.onPush(() => {
      first ||= performance.now();
      pushed();
    });
    try {
      const t0 = performance.now();
      // The server matches the chunk before it replies, so its pushes were sent before the reply.
      await sub.feed(`${ds.cue()}.`);
      await Promise.race([arrived, new Promise((r) => setTimeout(r, FIRST_PUSH_GRACE_MS))]);
      if (first === 0)
        throw new Error(`the fed sentence pushed nothing at threshold ${FIRST_PUSH_THRESHOLD}`);
      return first - t0;
    } finally {
      await sub.close();
    }
  };
}
