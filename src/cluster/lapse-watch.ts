/**
 * @module cluster/lapse-watch — noticing at once that another node's lease has lapsed, instead of
 * on the next heartbeat (up to a third of a lease later). Every lease read records the server's
 * time of its last renewal; a timer then fires just after the moment the lease would lapse unless
 * renewed again. A live owner renews long before that, so each read moves its timer on and it
 * never fires; a dead owner's timer fires as its key vanishes, and the node looks at once. If the
 * key is still there then (the clocks disagree a little), it looks again every `RECHECK_MS`.
 */

/** How long after the computed lapse the key is read. */
const AFTER_MS = 50;
/** How often a lease that outlived its computed lapse is read again. */
const RECHECK_MS = 250;

interface Watched {
  revision: number;
  timer: NodeJS.Timeout;
  fired: boolean;
}

export class LapseWatch {
  readonly #watched = new Map<number, Watched>();
  readonly #leaseMs: number;
  readonly #check: (p: number) => void;

  /** `check(p)`: read partition p's lease now (and take the partition if it is free). */
  constructor(leaseMs: number, check: (p: number) => void) {
    this.#leaseMs = leaseMs;
    this.#check = check;
  }

  /** Another node holds `p` at `revision`, last renewed at `renewedAt` (server time, ms since the epoch). */
  seen(p: number, revision: number, renewedAt: number, now = Date.now()): void {
    const w = this.#watched.get(p);
    if (w?.revision === revision) {
      // Read again after the timer fired: the key outlived its computed lapse (clock skew); look again soon.
      if (w.fired) this.#arm(p, revision, RECHECK_MS);
      return;
    }
    this.#arm(p, revision, Math.max(AFTER_MS, renewedAt + this.#leaseMs + AFTER_MS - now));
  }

  /** `p` is free or ours: nothing to watch. */
  forget(p: number): void {
    const w = this.#watched.get(p);
    if (w) clearTimeout(w.timer);
    this.#watched.delete(p);
  }

  stop(): void {
    for (const p of [...this.#watched.keys()]) this.forget(p);
  }

  #arm(p: number, revision: number, inMs: number): void {
    const old = this.#watched.get(p);
    if (old) clearTimeout(old.timer);
    const w: Watched = {
      revision,
      fired: false,
      timer: setTimeout(() => {
        w.fired = true;
        this.#check(p);
      }, inMs),
    };
    this.#watched.set(p, w);
  }
}
