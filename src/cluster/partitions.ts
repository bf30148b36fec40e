/**
 * @module cluster/partitions — the partitions this node owns, and the state machine of each
 * (recovering → ready → releasing, or dropped at once): taking a lease and recovering
 * (cluster/takeover.ts), renewing leases, confirming them before a request, a pointer move or a
 * trim, giving partitions back. Ownership rests on the lease: a partition is served only while no
 * other node can hold it (the last successful renewal was sent less than a lease, minus a margin,
 * ago).
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Config } from '../config/index.ts';
import { FlashbulbError } from '../errors/codes.ts';
import type { ShardEvent, ShardWorkerData } from '../protocol/shard.ts';
import { Shard } from '../shard/shard.ts';
import { pack } from './forward.ts';
import { renewalFailure, type Lease, type LeaseTable } from './leases.ts';
import type { PartitionStatus } from './status.ts';
import { FencedError, StreamLog } from './stream-log.ts';
import { StreamStorage } from './stream-storage.ts';
import { recoverAndFence, type TakeoverDeps } from './takeover.ts';

/**
 * How long a snapshot is kept before the stream is trimmed below it (cluster/trim.ts): longer than
 * a NATS failover (elections took 4–9 s with nats-server 2.9), at most a quarter of the erasure
 * window so that forgotten content still leaves the stream within it.
 */
const TRIM_RETAIN_MS = 10_000;

export interface Owned {
  partition: number;
  status: PartitionStatus;
  /** Revision of our lease key; the next renewal must match it. */
  leaseRev: number;
  /** Our ownership term (in the lease value; subscriptions are registered per term). */
  term: string;
  /**
   * `performance.now()` when the create or update that gave us `leaseRev` was sent. JetStream
   * stamps the key no earlier, so nobody else can hold the lease before this plus the lease time.
   */
  leaseSentAt: number;
  shard: Shard | null;
  log: StreamLog | null;
  /** Stream sequence of our fence (where our ownership starts). */
  fenceSeq: number;
  since: number;
  replayedRecords: number;
  recoveryMs: number;
  inflight: number;
}

export interface PartitionsOptions {
  config: Config;
  log: (line: string) => void;
  nc: NatsConnection;
  leases: LeaseTable;
  takeover: TakeoverDeps;
  /** The cluster's view of every partition's holder; ours are set and removed here. */
  owners: Map<number, Lease>;
  /** Events of the partitions' shards. */
  onShardEvent: (e: ShardEvent) => void;
}

export class OwnedPartitions {
  readonly #o: PartitionsOptions;
  readonly #id: string;
  readonly #owned = new Map<number, Owned>();
  /** Partitions released on purpose recently: not taken back at once (partition → until). */
  readonly #cooldown = new Map<number, number>();
  #renewing: Promise<void> | null = null;
  /** Partitions whose metrics were reported (a dropped one is reported once more, as empty). */
  readonly #reported = new Set<number>();

  constructor(o: PartitionsOptions) {
    this.#o = o;
    this.#id = o.config.nodeId;
  }

  get(p: number): Owned | undefined {
    return this.#owned.get(p);
  }

  has(p: number): boolean {
    return this.#owned.has(p);
  }

  get size(): number {
    return this.#owned.size;
  }

  values(): IterableIterator<Owned> {
    return this.#owned.values();
  }

  coolingDown(p: number, now: number): boolean {
    return (this.#cooldown.get(p) ?? 0) > now;
  }

  async acquire(p: number): Promise<void> {
    const sent = performance.now();
    const term = randomBytes(6).toString('hex');
    const rev = await this.#o.leases.acquire(p, term);
    if (rev === null) return; // someone else holds it
    const o: Owned = {
      partition: p,
      status: 'recovering',
      leaseRev: rev,
      term,
      leaseSentAt: sent,
      shard: null,
      log: null,
      fenceSeq: 0,
      since: Date.now(),
      replayedRecords: 0,
      recoveryMs: 0,
      inflight: 0,
    };
    this.#owned.set(p, o);
    this.#o.owners.set(p, { node: this.#id, term, at: Date.now() });
    const started = performance.now();
    try {
      const { recovered, fenceSeq, loaded, fellBack, timing } = await recoverAndFence(
        this.#o.takeover,
        p,
        rev,
        () => this.#owned.get(p) === o,
      );
      if (this.#owned.get(p) !== o) return; // lost while recovering
      if (fellBack) this.#o.log(`cluster: partition ${p}: snapshot ${fellBack}`);
      const t = this.#o.takeover;
      const log = new StreamLog({
        js: t.js,
        subject: t.subjects.log(p),
        node: this.#id,
        term: rev,
        lastSeq: fenceSeq,
        timeoutMs: this.#o.config.shardTimeoutMs,
        onFailed: (err) =>
          this.lose(o, err instanceof FencedError ? err.message : `log failed: ${err.message}`),
        snapshots: {
          store: t.snapshots,
          partition: p,
          jsm: t.jsm,
          stream: t.subjects.stream(p),
          confirm: () => this.confirmFresh(o),
          retainMs: Math.min(TRIM_RETAIN_MS, (this.#o.config.eraseWithinS * 1000) / 4),
        },
      });
      o.log = log;
      o.fenceSeq = fenceSeq;
      if (loaded) log.keepLoaded(loaded.seq, loaded.object);
      o.shard = new Shard(
        this.#shardOptions(p),
        (e) => this.#o.onShardEvent(e),
        new StreamStorage(recovered, log),
      );
      o.replayedRecords = recovered.replayedRecords;
      o.recoveryMs = performance.now() - started;
      o.status = 'ready';
      const ms = (x: number): string => x.toFixed(0);
      this.#o.log(
        `cluster: partition ${p} owned by ${this.#id}: ${o.shard.memoryCount} memories (${recovered.replayedRecords} records replayed) in ${ms(o.recoveryMs)} ms ` +
          `(stream ${ms(timing.stream)}, snapshot ${ms(timing.snapshot)}, replay ${ms(timing.replay)}, fence ${ms(timing.fence)} ms, ${timing.attempts} attempt${timing.attempts === 1 ? '' : 's'})`,
      );
    } catch (err) {
      this.#o.log(
        `cluster: taking partition ${p} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
      this.lose(o, 'takeover failed');
    }
  }

  #shardOptions(p: number): ShardWorkerData {
    const c = this.#o.config;
    return {
      shard: p,
      dir: '',
      durability: c.durability,
      snapshotIntervalS: c.snapshotIntervalS,
      snapshotWalBytes: c.snapshotWalBytes,
      eraseWithinS: c.eraseWithinS,
      contradictions: c.contradictionsEnabled,
    };
  }

  /** Drops a partition at once (lease or log lost): its state may hold writes never acknowledged. */
  lose(o: Owned, reason: string): void {
    if (this.#owned.get(o.partition) !== o) return;
    this.#owned.delete(o.partition);
    if (this.#o.owners.get(o.partition)?.node === this.#id) this.#o.owners.delete(o.partition);
    this.#o.log(`cluster: partition ${o.partition} dropped by ${this.#id}: ${reason}`);
    void o.shard?.shutdown().catch(() => undefined);
    void o.log?.close().catch(() => undefined);
    // Our lease, if it is still ours, goes too, so that a fresh owner replays the stream.
    void this.#o.leases.release(o.partition, o.leaseRev);
  }

  /** Hands a partition over: stop taking requests, finish the ones in flight, free the lease. */
  /** `to`: the node that should take the partition; it is told at once instead of finding it free on its next heartbeat. */
  async release(o: Owned, reason: string, to?: string): Promise<void> {
    if (o.status !== 'ready') return;
    o.status = 'releasing';
    this.#cooldown.set(o.partition, Date.now() + 3 * this.#o.config.clusterLeaseMs);
    while (o.inflight > 0) await new Promise((r) => setTimeout(r, 5));
    await o.shard?.shutdown().catch(() => undefined);
    await o.log?.close().catch(() => undefined);
    await this.#o.leases.release(o.partition, o.leaseRev);
    if (this.#owned.get(o.partition) === o) this.#owned.delete(o.partition);
    this.#o.owners.delete(o.partition);
    if (to)
      this.#o.nc.publish(this.#o.takeover.subjects.node(to, 'take'), pack({ p: o.partition }));
    this.#o.log(
      `cluster: partition ${o.partition} released by ${this.#id} (${reason}${to ? `, to ${to}` : ''})`,
    );
  }

  /** Renews every lease we hold; one round at a time (a caller during a round waits for it). */
  renew(): Promise<void> {
    this.#renewing ??= this.#renewAll().finally(() => (this.#renewing = null));
    return this.#renewing;
  }

  /** Waits for a renewal round in flight, if any. */
  async settled(): Promise<void> {
    while (this.#renewing) await this.#renewing;
  }

  async #renewAll(): Promise<void> {
    await Promise.all(
      [...this.#owned.values()].map(async (o) => {
        if (o.status === 'releasing') return;
        try {
          const sent = performance.now();
          // A renewal sent on a connection that just died must not wait past the next one.
          o.leaseRev = await this.#o.leases.renew(
            o.partition,
            o.leaseRev,
            o.term,
            Math.max(500, Math.floor(this.#o.config.clusterLeaseMs / 3)),
          );
          o.leaseSentAt = sent;
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          if (
            renewalFailure(
              err,
              performance.now() - o.leaseSentAt,
              this.#o.config.clusterLeaseMs,
            ) === 'lost'
          )
            this.lose(o, `lease lost (${why})`);
          else
            this.#o.log(
              `cluster: renewing the lease of partition ${o.partition} failed (${why}); retrying`,
            );
        }
      }),
    );
  }

  /**
   * Whether no other node can own the partition yet: our last successful renewal was sent less
   * than the lease time ago, minus a margin for clock rates. Outside that window the state may be
   * stale (this process was paused, or NATS was slow to renew), so a request waits for a renewal.
   */
  leaseSure(o: Owned): boolean {
    const lease = this.#o.config.clusterLeaseMs;
    return performance.now() - o.leaseSentAt < lease - Math.max(200, lease / 10);
  }

  /**
   * The fence of snapshot pointer moves and stream trims: resolves only while no other node can
   * hold our lease, i.e. a renewal sent less than a lease (minus the margin) ago succeeded; one
   * older than a third of a lease is renewed first. A node that lost its lease, or that was
   * paused since its last renewal, gets an error and changes nothing.
   */
  async confirmFresh(o: Owned): Promise<void> {
    const ours = (): boolean => this.#owned.get(o.partition) === o;
    if (ours() && performance.now() - o.leaseSentAt >= this.#o.config.clusterLeaseMs / 3)
      await this.renew();
    if (!ours() || !this.leaseSure(o))
      throw new FencedError(
        `partition ${o.partition}: ownership not confirmed; the snapshot pointer and the stream are left as they are`,
      );
  }

  /** Renews now; a partition whose lease is gone is dropped and the request answered 503 (retryable). */
  async confirmLease(o: Owned): Promise<void> {
    await this.renew();
    if (this.#owned.get(o.partition) !== o || !this.leaseSure(o)) {
      throw new FlashbulbError(
        'unavailable',
        `partition ${o.partition}: this node could not confirm its ownership (it may have been paused or cut off); retry`,
        { retryAfterS: 1 },
      );
    }
  }

  /**
   * The same per-shard metrics a worker sends once a second, one series per owned partition (the
   * `shard` label is the partition number); a partition given up reports empty once.
   */
  metrics(emit: (e: ShardEvent) => void): void {
    for (const p of this.#reported) {
      if (this.#owned.get(p)?.shard) continue;
      this.#reported.delete(p);
      emit({
        kind: 'metrics',
        shard: p,
        memories: 0,
        syncMs: [],
        snapshotMs: [],
        expired: 0,
        contradictions: 0,
        checksSkipped: 0,
        checkBacklog: 0,
        indexBacklog: 0,
      });
    }
    for (const o of this.#owned.values()) {
      const shard = o.shard;
      if (!shard) continue;
      this.#reported.add(o.partition);
      emit({
        kind: 'metrics',
        shard: o.partition,
        ...shard.takeMetrics(),
        // The stream's publishes are this storage's group commits.
        syncMs: o.log ? o.log.publishMs.splice(0) : [],
      });
    }
  }
}
