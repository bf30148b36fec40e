/**
 * @module cluster/leases — partition ownership in the `<name>-leases` KV bucket. Key `p<n>` holds
 * the owner; it is created only when absent and renewed or deleted only with compare-and-set on
 * the revision the holder last saw. The bucket's max age removes a lease nobody renews.
 */
import type { KV } from '@nats-io/kv';
import { isWrongLastSequence } from './stream-log.ts';

export interface Lease {
  node: string;
  /** Chosen by the holder when it took the lease; renewals keep it, a new owner has a new one. */
  term: string;
  /** Wall-clock time of the last renewal, as the holder saw it (for display only). */
  at: number;
}

/** A lease as read from the bucket: its revision and the server's time of its last renewal too. */
export interface HeldLease extends Lease {
  revision: number;
  /** Milliseconds since the epoch, as the NATS server stamped the last renewal. */
  renewedAt: number;
}

export class LeaseTable {
  readonly #kv: KV;
  readonly #node: string;

  constructor(kv: KV, node: string) {
    this.#kv = kv;
    this.#node = node;
  }

  /** Takes the lease if nobody holds it; returns its revision, or null when it is held. */
  async acquire(partition: number, term: string): Promise<number | null> {
    try {
      return await this.#kv.create(key(partition), this.#value(term));
    } catch {
      return null;
    }
  }

  /**
   * Renews a lease held at `revision`, waiting at most `timeoutMs`; rejects when it is no longer
   * ours (expired or taken). A refused compare-and-set whose key still holds our term means an
   * earlier renewal was stored although its acknowledgement was lost: its revision is taken up.
   */
  async renew(
    partition: number,
    revision: number,
    term: string,
    timeoutMs: number,
  ): Promise<number> {
    try {
      return await this.#kv.update(key(partition), this.#value(term), revision, timeoutMs);
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      const e = await this.#kv.get(key(partition));
      if (e?.operation !== 'PUT' || e.revision <= revision) throw err;
      const l = JSON.parse(e.string()) as Partial<Lease>;
      if (l.node !== this.#node || l.term !== term) throw err;
      return await this.#kv.update(key(partition), this.#value(term), e.revision, timeoutMs);
    }
  }

  /** Gives a lease back, if it is still the one held at `revision`. */
  async release(partition: number, revision: number): Promise<void> {
    await this.#kv.delete(key(partition), { previousSeq: revision }).catch(() => undefined);
  }

  /** The current holder, or null (never taken, released or expired). */
  async holder(partition: number): Promise<HeldLease | null> {
    const e = await this.#kv.get(key(partition)).catch(() => null);
    if (e?.operation !== 'PUT') return null;
    const l = JSON.parse(e.string()) as Partial<Lease>;
    // A lease written by a version without terms: its holder stands in for the term.
    return {
      node: String(l.node),
      term: l.term ?? `node:${String(l.node)}`,
      at: Number(l.at ?? 0),
      revision: e.revision,
      renewedAt: e.created.getTime(),
    };
  }

  #value(term: string): string {
    return JSON.stringify({ node: this.#node, term, at: Date.now() } satisfies Lease);
  }
}

/**
 * What a failed renewal means. A refused compare-and-set: the lease expired or another node holds
 * it (`lost`). Anything else (a timeout, no responders while JetStream elects a leader) says
 * nothing about the lease: the holder keeps the partition and retries (`retry`) until a whole
 * lease has passed since its last successful renewal was sent, after which another node may
 * hold it (`lost`). Dropping the partition on every failed renewal turned each NATS leader
 * election into a round of takeovers, which need JetStream's meta leader (issue 23, item 3).
 */
export function renewalFailure(
  err: unknown,
  sinceSentMs: number,
  leaseMs: number,
): 'lost' | 'retry' {
  return isWrongLastSequence(err) || sinceSentMs >= leaseMs ? 'lost' : 'retry';
}

function key(partition: number): string {
  return `p${partition}`;
}
