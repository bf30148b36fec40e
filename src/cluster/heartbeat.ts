/**
 * @module cluster/heartbeat — a node's heartbeat: it writes this node's record and reads the
 * others', refreshes every partition's holder (watching other nodes' leases for the moment one
 * lapses, which asks for a beat at once), takes free partitions up to a fair share or gives one
 * away above it, and registers followed subscriptions with their partitions' new owners. One beat
 * runs at a time; a beat asked for during one runs right after it.
 */
import type { Config } from '../config/index.ts';
import type { ShardInput } from '../protocol/shard.ts';
import { shardFor } from '../router/shard-map.ts';
import { balancePlan } from './balance.ts';
import type { FollowedSubscriptions } from './follow.ts';
import { LapseWatch } from './lapse-watch.ts';
import type { Lease, LeaseTable } from './leases.ts';
import type { NodeRecords } from './node-records.ts';
import type { OwnedPartitions } from './partitions.ts';
import type { NodeRecord } from './status-view.ts';
import type { SubscriptionOrigins } from './sub-origins.ts';

/** What the heartbeat reads and moves: the node's tables, shared with cluster/node. */
export interface HeartbeatParts {
  id: string;
  config: Config;
  log: (line: string) => void;
  partitions: number;
  nodes: NodeRecords;
  leases: LeaseTable;
  owners: Map<number, Lease>;
  parts: OwnedPartitions;
  followed: FollowedSubscriptions;
  subOrigins: SubscriptionOrigins;
  /** Registers a subscription with its partition's owner (the node's routing). */
  subOpen: (ws: string, spec: ShardInput<'subOpen'>) => Promise<unknown>;
  stopping: () => boolean;
}

export class Heartbeat {
  readonly #p: HeartbeatParts;
  readonly #startedAt = Date.now();
  /** Other nodes' leases, each watched for the moment it lapses unless renewed. */
  readonly lapses: LapseWatch;
  #ticking: Promise<void> | null = null;
  #tickAgain = false;

  constructor(p: HeartbeatParts) {
    this.#p = p;
    this.lapses = new LapseWatch(p.config.clusterLeaseMs, () => this.soon());
  }

  /** Stops watching leases and waits for a beat in flight. */
  async stop(): Promise<void> {
    this.lapses.stop();
    while (this.#ticking) await this.#ticking;
  }

  /** Starts a beat unless one is running (or the node is stopping); resolves when it is over. */
  schedule(): Promise<void> {
    if (this.#ticking || this.#p.stopping()) return this.#ticking ?? Promise.resolve();
    this.#ticking = this.#tick()
      .catch((err: unknown) =>
        this.#p.log(
          `cluster: heartbeat failed: ${err instanceof Error ? err.message : String(err)}`,
        ),
      )
      .finally(() => {
        this.#ticking = null;
        if (this.#tickAgain) void this.schedule();
        this.#tickAgain = false;
      });
    return this.#ticking;
  }

  /** A heartbeat now (after the one in flight, if any): another node's lease has just lapsed. */
  soon(): void {
    if (this.#ticking) this.#tickAgain = true;
    else void this.schedule();
  }

  /**
   * One heartbeat. Its steps fail on their own: a node bucket whose stream leader is being elected
   * again (seconds, after a NATS server is lost) must not stop lease reads and takeovers.
   */
  async #tick(): Promise<void> {
    const failed = (what: string) => (err: unknown) =>
      this.#p.log(
        `cluster: heartbeat: ${what} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    await this.#p.nodes.write(this.nodeRecord()).catch(failed("writing this node's record"));
    await this.#p.nodes.read(this.nodeRecord()).catch(failed('reading the node records'));
    await Promise.all(Array.from({ length: this.#p.partitions }, (_, p) => this.refreshOwner(p)));
    if (this.#p.stopping()) return;
    this.#balance();
    this.#followSubscriptions();
  }

  /**
   * Registers this node's subscriptions with owners that took their partitions since, and drops
   * subscriptions registered here whose node has been gone for three leases (its streams died with it).
   */
  #followSubscriptions(): void {
    this.#p.followed.reconcile(
      (ws) => {
        const owner = this.#p.owners.get(shardFor(ws, this.#p.partitions));
        // Our own partition only once it is ready (a recovering shard cannot take the registration yet).
        if (
          owner?.node === this.#p.id &&
          this.#p.parts.get(shardFor(ws, this.#p.partitions))?.status !== 'ready'
        )
          return null;
        return owner?.term ?? null;
      },
      (ws, spec) => this.#p.subOpen(ws, spec).then(() => undefined),
      (id, err) =>
        this.#p.log(
          `cluster: subscription ${id} could not be registered with its partition's new owner yet: ${err instanceof Error ? err.message : String(err)}`,
        ),
    );
    this.#p.subOrigins.dropGone(
      this.#p.nodes.live,
      Date.now(),
      3 * this.#p.config.clusterLeaseMs,
      (id, ws) => {
        const local = this.#p.parts.get(shardFor(ws, this.#p.partitions));
        if (local?.status === 'ready' && local.shard)
          void local.shard.handle('subClose', ws, { id }).catch(() => undefined);
      },
    );
  }

  /** This node's record: when it started, and each partition it holds with its state and applied sequence. */
  nodeRecord(): NodeRecord {
    const owned: NodeRecord['owned'] = {};
    for (const o of this.#p.parts.values())
      owned[String(o.partition)] = { status: o.status, applied_seq: o.log?.lastSeq ?? 0 };
    return { id: this.#p.id, started_at: this.#startedAt, owned };
  }

  /** Reads partition `p`'s lease holder into the owners table, and watches another node's lease for its lapse. */
  async refreshOwner(p: number): Promise<void> {
    const holder = await this.#p.leases.holder(p);
    if (holder) this.#p.owners.set(p, holder);
    else this.#p.owners.delete(p);
    if (holder && holder.node !== this.#p.id && !this.#p.stopping())
      this.lapses.seen(p, holder.revision, holder.renewedAt);
    else this.lapses.forget(p);
  }

  /** Takes free partitions up to a fair share; gives one away per heartbeat above it. */
  #balance(): void {
    const now = Date.now();
    const plan = balancePlan({
      self: this.#p.id,
      // A node whose record was not written for two heartbeats is not counted (cluster/node-records.ts).
      nodes: this.#p.nodes.recent((2 * this.#p.config.clusterLeaseMs) / 3, now),
      partitions: this.#p.partitions,
      owners: this.#p.owners,
      owned: new Set([...this.#p.parts.values()].map((o) => o.partition)),
      coolingDown: (p) => this.#p.parts.coolingDown(p, now),
    });
    for (const p of plan.take) void this.#p.parts.acquire(p);
    if (!plan.giveTo) return;
    const give = [...this.#p.parts.values()].find((o) => o.status === 'ready');
    if (give) void this.#p.parts.release(give, 'rebalancing', plan.giveTo);
  }
}
