/**
 * @module shard/commit-barrier — reads never see a write whose log append has not landed. A commit
 * applies its records to the state at once (so the writes behind it build on them) and then
 * appends them to the log (fsync locally, a JetStream publish in cluster mode). A read of the same
 * workspace that arrives in between waits here until those appends settle; when one failed, the
 * log has latched its failure and the read is refused, so nothing that may never become durable
 * (a write whose client saw a timeout, lost when a partition moves) is ever shown. Found by the
 * partition test's linearizability check (test/integration/cluster-partition.test.ts).
 */
import { FlashbulbError } from '../errors/codes.ts';

export class CommitBarrier {
  readonly #unsettled = new Map<string, Set<Promise<void>>>();

  /** Tracks `append` for each workspace its records touch. */
  track(workspaces: Iterable<string>, append: Promise<void>): void {
    const settled = append.then(
      () => undefined,
      () => undefined,
    );
    const touched = [...new Set(workspaces)];
    for (const ws of touched) {
      const set = this.#unsettled.get(ws) ?? new Set<Promise<void>>();
      set.add(settled);
      this.#unsettled.set(ws, set);
    }
    void settled.then(() => {
      for (const ws of touched) {
        const set = this.#unsettled.get(ws);
        set?.delete(settled);
        if (set?.size === 0) this.#unsettled.delete(ws);
      }
    });
  }

  /**
   * Resolves once every append of `ws` tracked so far has settled (at once when there is none);
   * refuses, as `unavailable`, when the log has failed (a write it held may never be durable).
   */
  async settled(ws: string, log: { readonly failed: Error | null }): Promise<void> {
    const set = this.#unsettled.get(ws);
    if (set && set.size > 0) await Promise.all([...set]);
    if (log.failed) throw storageFailure(log.failed);
  }
}

/** What a request to a shard whose log failed hears (shard.ts: every request after the failure, and the one that met it). */
export function storageFailure(failed: Error): FlashbulbError {
  return new FlashbulbError('unavailable', `storage failure: ${failed.message}`);
}

/**
 * Why a shard whose local log failed (a full disk, an I/O error) stops: it refuses every request
 * (Shard.handle) and writes no snapshot, since its memory may hold writes the log never took. What
 * is on disk, every acknowledged write, is what a restart recovers: the router restarts the shard
 * (router/shard-client), which it tells, as readiness does.
 */
export function logFailedWhy(err: Error): string {
  return (
    `${err.message}. The shard refuses every request and writes no snapshot; every acknowledged write is on disk. ` +
    'It is restarted from its files every few seconds until its log works again (free the disk).'
  );
}
