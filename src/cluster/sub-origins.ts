/**
 * @module cluster/sub-origins — subscriptions opened through another node and registered with
 * the partitions owned here: which node each came from, so that its pushes are published back to
 * that node (which holds the client's stream), and which to drop once their node has been gone for
 * three leases (their streams died with it).
 */
import type { Push } from '../protocol/shard.ts';

interface Origin {
  origin: string;
  ws: string;
  missingSince: number | null;
}

export class SubscriptionOrigins {
  readonly #byId = new Map<number, Origin>();

  opened(id: number, origin: string, ws: string): void {
    this.#byId.set(id, { origin, ws, missingSince: null });
  }

  closed(id: number): void {
    this.#byId.delete(id);
  }

  /** Pushes grouped by the node each subscription was opened on (`self` for the ones opened here). */
  byOrigin(pushes: readonly Push[], self: string): Map<string, Push[]> {
    const out = new Map<string, Push[]>();
    for (const push of pushes) {
      const origin = this.#byId.get(push.subscription)?.origin ?? self;
      out.set(origin, [...(out.get(origin) ?? []), push]);
    }
    return out;
  }

  /** Forgets subscriptions whose node is not in `live` for `goneMs`; calls `close` for each. */
  dropGone(
    live: ReadonlyMap<string, unknown>,
    now: number,
    goneMs: number,
    close: (id: number, ws: string) => void,
  ): void {
    for (const [id, s] of this.#byId) {
      if (live.has(s.origin)) {
        s.missingSince = null;
        continue;
      }
      s.missingSince ??= now;
      if (now - s.missingSince < goneMs) continue;
      this.#byId.delete(id);
      close(id, s.ws);
    }
  }
}
