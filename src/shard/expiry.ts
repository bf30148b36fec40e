/**
 * @module shard/expiry — forgets the memories whose expiry has come, with forget's cascade,
 * tombstones and erasure, before any request reads their workspace and once a second for all of
 * them. The records apply to the state at once; the log append completes in the background (a
 * crash before it lands is covered by the erasure sweep at start-up). Counts what it forgot for
 * the metrics.
 */
import type { Clock } from '../model/clock.ts';
import { forgetRecords } from './ops/forget.ts';
import type { ShardState } from './store/apply.ts';
import type { LiveRecord } from './store/records.ts';

export interface ExpiryDeps {
  state: ShardState;
  clock: Clock;
  /** Applies and appends the forget's records. */
  commit: (records: LiveRecord[]) => Promise<void>;
  /** Erases the forgotten content from the shard's files (shard/compaction). */
  requestErasure: (records: LiveRecord[]) => void;
  /** True once nothing more can be written (the log failed). */
  failed: () => boolean;
  shard: number;
}

export class Expiry {
  readonly #deps: ExpiryDeps;
  /** Memories forgotten on expiry since the last `take()`. */
  #expired = 0;

  constructor(deps: ExpiryDeps) {
    this.#deps = deps;
  }

  /** Forgets what is due in `ws` (null: in every workspace). */
  due(ws: string | null): void {
    const { state, clock, failed } = this.#deps;
    if (failed()) return;
    const now = clock.nowUs();
    const workspaces = ws === null ? [...state.workspaces.values()] : [state.workspaces.get(ws)];
    for (const w of workspaces) {
      if (!w || w.expiring.next === null || w.expiring.next > now) continue;
      const due = w.takeExpired(now);
      if (due.length === 0) continue;
      const { records, all } = forgetRecords(w, due, { expired: true }, now);
      this.#expired += all;
      this.#deps
        .commit(records)
        .catch((err: unknown) => console.error(`shard ${this.#deps.shard}: expiry failed:`, err));
      this.#deps.requestErasure(records);
    }
  }

  /** Memories forgotten on expiry since the last call (for metrics). */
  take(): number {
    const n = this.#expired;
    this.#expired = 0;
    return n;
  }
}
