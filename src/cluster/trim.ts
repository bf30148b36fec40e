/**
 * @module cluster/trim — when a partition's stream is cut, and below which snapshot. The stream is
 * trimmed below a snapshot only once that snapshot has been kept for `retainMs` since its pointer
 * move (or since a takeover loaded it), the pointer read from the leader is not older than it, its
 * object is still listed, and the lease is confirmed; the objects older than it are then deleted.
 * Newer snapshots, and the one the stream now starts at, stay. So when NATS loses its newest
 * acknowledged writes in a failover (nats-server 2.9.10 after a meta-leader kill: the pointer read
 * back as its previous value and the newest object gone; issue 23), the stream still starts at or
 * before a snapshot that is there, and no record is lost.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import type { PartitionSnapshots } from './snapshots.ts';

/** Tries at confirming the lease before a trim (waits double from one second: 1 + 2 + 4 + 8 s). */
const CONFIRM_ATTEMPTS = 4;

export interface SnapshotTarget {
  store: PartitionSnapshots;
  partition: number;
  jsm: JetStreamManager;
  stream: string;
  /** Resolves only while this node still holds the partition's lease (renewed just now); the fence of pointer moves and trims. */
  confirm: () => Promise<void>;
  /** How long a snapshot is kept before the stream is trimmed below it (cluster/trim.ts). */
  retainMs: number;
}

interface Kept {
  seq: number;
  object: string;
  /** When the pointer moved to it (or a takeover loaded it), `Date.now()`. */
  at: number;
}

export class Trimmer {
  readonly #s: SnapshotTarget;
  /** Whether the log still holds the partition (false: failed or closed; nothing is trimmed). */
  readonly #live: () => boolean;
  #kept: Kept[] = [];
  /** The stream starts at this sequence (or before it) as far as this owner trimmed it. */
  #trimmedTo = 0;
  /** Trims not yet due, each with the release of the `trimmed` promise it settles. */
  #timers = new Map<NodeJS.Timeout, () => void>();
  #chain: Promise<void> = Promise.resolve();
  /** The trim that runs after the last snapshot kept, once it is old enough (tests and shutdown wait on it). */
  trimmed: Promise<void> = Promise.resolve();

  constructor(s: SnapshotTarget, live: () => boolean) {
    this.#s = s;
    this.#live = live;
  }

  /** A snapshot the pointer now names (moved by this owner, or loaded by its takeover): the stream may be trimmed below it `retainMs` from now. */
  keep(seq: number, object: string): void {
    this.#kept.push({ seq, object, at: Date.now() });
    this.trimmed = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.#chain = this.#chain
          .then(() => this.#run())
          .catch((err: unknown) => {
            console.error(
              `partition ${this.#s.partition}: trim skipped: ${err instanceof Error ? err.message : String(err)}`,
            );
          });
        void this.#chain.then(resolve);
      }, this.#s.retainMs + 5);
      timer.unref();
      this.#timers.set(timer, resolve);
    });
  }

  /** Cancels the trims not yet due; whoever waits on `trimmed` is let go. */
  close(): void {
    for (const [timer, resolve] of this.#timers) {
      clearTimeout(timer);
      resolve();
    }
    this.#timers.clear();
  }

  async #run(): Promise<void> {
    const due = Date.now() - this.#s.retainMs;
    const target = this.#kept.filter((k) => k.at <= due).at(-1);
    if (!target || target.seq <= this.#trimmedTo || !this.#live()) return;
    const s = this.#s;
    const current = await s.store.pointer(s.partition);
    // The pointer reads older than the snapshot (a move NATS did not keep), or its object is gone:
    // the stream stays as it is; a later snapshot tries again.
    if (!current || current.pointer.seq < target.seq) return;
    if (!(await s.store.exists(s.partition, target.object))) return;
    for (let attempt = 0; ; attempt++) {
      if (!this.#live()) return;
      try {
        await s.confirm();
        break;
      } catch (err) {
        // Not confirmed in time (NATS slow or electing): tried again, since a trim skipped for good
        // keeps forgotten content in the stream until the next snapshot.
        if (attempt >= CONFIRM_ATTEMPTS - 1) throw err;
        await new Promise((r) => setTimeout(r, 1000 * 2 ** attempt));
      }
    }
    await s.jsm.streams.purge(s.stream, { seq: target.seq });
    this.#trimmedTo = target.seq;
    const older = this.#kept.filter((k) => k.seq < target.seq).map((k) => k.object);
    this.#kept = this.#kept.filter((k) => k.seq >= target.seq);
    await s.store.discardBelow(s.partition, target.seq, older);
  }
}
