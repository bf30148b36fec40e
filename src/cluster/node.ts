/**
 * @module cluster/node — one Flashbulb node of a cluster on NATS JetStream: a `ShardRouter` that
 * routes each request to its partition's owner (here, or forwarded over NATS request-reply to
 * `<name>.node.<owner>.call`), runs the heartbeat (heartbeat.ts: node record, partition holders,
 * balancing, subscriptions following their partition) on a timer and reports the cluster's status;
 * partitions.ts holds the state machine of the partitions owned here, takeover.ts the snapshot,
 * replay and fence.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import type { Config } from '../config/index.ts';
import { FlashbulbError } from '../errors/codes.ts';
import { fromWireError, toWireError } from '../errors/wire.ts';
import type { CallOptions, ShardRouter } from '../router/router.ts';
import { shardFor } from '../router/shard-map.ts';
import type { Push, ShardEvent, ShardInput, ShardMethod, ShardOutput } from '../protocol/shard.ts';
import { answerWithin, ParkedReplies, parkKey } from '../protocol/reply-size.ts';
import { FencedError } from './stream-log.ts';
import { forward, pack, replyAsk, unpack, type Forward, type ForwardReply } from './forward.ts';
import { LeaseTable, type Lease } from './leases.ts';
import { FollowedSubscriptions } from './follow.ts';
import type { SubscriptionRelay } from '../subscribe/registry.ts';
import type { ClusterStatus } from './status.ts';
import { clusterStatus } from './status-view.ts';
import { openCluster, recordOnce, type ClusterHandles } from './setup.ts';
import { ClusterSubjects } from './subjects.ts';
import { OwnedPartitions, type Owned } from './partitions.ts';
import { subscriptionRelay } from './relay.ts';
import { SubscriptionOrigins } from './sub-origins.ts';
import { Heartbeat } from './heartbeat.ts';
import { NodeRecords } from './node-records.ts';
import { followedCall } from './sub-calls.ts';

/** How long a request waits for a partition to get a ready owner before a retryable 503. */
const ROUTE_WAIT_MS = 3000;

export interface ClusterOptions {
  config: Config;
  /** Events of the local shards (pushes for subscriptions opened on this node). */
  emit: (e: ShardEvent) => void;
  log: (line: string) => void;
}

export class ClusterNode implements ShardRouter {
  readonly #o: ClusterOptions;
  readonly #id: string;
  readonly #nc: NatsConnection;
  readonly #h: ClusterHandles;
  readonly #subjects: ClusterSubjects;
  readonly #leases: LeaseTable;
  readonly #nodes: NodeRecords;
  readonly partitions: number;
  readonly #owners = new Map<number, Lease>();
  /** The partitions held here and their state machine. */
  readonly #parts: OwnedPartitions;
  /** Subscriptions opened through another node, registered here. */
  readonly #subOrigins = new SubscriptionOrigins();
  /** Subscriptions whose stream this node holds, re-registered whenever their partition's owner changes. */
  readonly #followed: FollowedSubscriptions;
  readonly #subs: Subscription[] = [];
  #timer: NodeJS.Timeout | null = null;
  /** Node records, partition holders, balancing and followed subscriptions, every third of a lease. */
  readonly #beat: Heartbeat;
  /** Renewals run on their own timer, so a slow balancing round never lets a lease lapse. */
  #renewTimer: NodeJS.Timeout | null = null;
  #metricsTimer: NodeJS.Timeout | null = null;
  /** Replies over their first ask kept for the second (protocol/reply-size). */
  readonly #parked = new ParkedReplies();
  #inflight = 0;
  #stopping = false;

  private constructor(o: ClusterOptions, h: ClusterHandles) {
    this.#o = o;
    this.#id = o.config.nodeId;
    this.#nc = h.nc;
    this.#h = h;
    this.#subjects = new ClusterSubjects(o.config.clusterName);
    this.#leases = new LeaseTable(h.leases, o.config.nodeId);
    this.#nodes = new NodeRecords(h.nodes, h.jsm, `${o.config.clusterName}-nodes`, this.#id);
    this.partitions = h.partitions;
    this.#followed = new FollowedSubscriptions(o.config.clusterLeaseMs);
    this.#parts = new OwnedPartitions({
      config: o.config,
      log: o.log,
      nc: h.nc,
      leases: this.#leases,
      owners: this.#owners,
      onShardEvent: (e) => this.#onShardEvent(e),
      takeover: {
        node: this.#id,
        js: jetstream(h.nc),
        jsm: h.jsm,
        reader: h.reader,
        snapshots: h.snapshots,
        subjects: this.#subjects,
        replicas: o.config.natsReplicas,
        timeoutMs: o.config.shardTimeoutMs,
      },
    });
    this.#beat = new Heartbeat({
      id: this.#id,
      config: o.config,
      log: o.log,
      partitions: h.partitions,
      nodes: this.#nodes,
      leases: this.#leases,
      owners: this.#owners,
      parts: this.#parts,
      followed: this.#followed,
      subOrigins: this.#subOrigins,
      subOpen: (ws, spec) => this.#route(ws, 'subOpen', spec),
      stopping: () => this.#stopping,
    });
  }

  static async start(o: ClusterOptions): Promise<ClusterNode> {
    const { config } = o;
    const h = await openCluster(config, o.log);
    try {
      const node = new ClusterNode(o, h);
      node.#listen();
      await node.#beat.schedule();
      const every = Math.max(200, Math.floor(config.clusterLeaseMs / 3));
      node.#timer = setInterval(() => void node.#beat.schedule(), every);
      node.#renewTimer = setInterval(() => void node.#parts.renew(), every);
      node.#metricsTimer = setInterval(() => node.#emitMetrics(), 1000);
      node.#metricsTimer.unref();
      o.log(
        `cluster: node ${config.nodeId} joined '${config.clusterName}' on ${config.natsUrls.join(',')} (${h.partitions} partitions, replicas ${config.natsReplicas})`,
      );
      return node;
    } catch (err) {
      await h.nc.close().catch(() => undefined);
      throw err;
    }
  }

  get nodeId(): string {
    return this.#id;
  }

  /** The cluster's embedder record (JSON): this node's `mine` unless a node recorded one before. */
  recordEmbedder(mine: string): Promise<string> {
    return recordOnce(this.#h.meta, 'embedder', mine);
  }

  partitionOf(ws: string): number {
    return shardFor(ws, this.partitions);
  }

  // ---- requests ----------------------------------------------------------------------------

  async call<M extends ShardMethod>(
    ws: string,
    method: M,
    input: ShardInput<M>,
    _transfer?: ArrayBuffer[],
    opts: CallOptions = {},
  ): Promise<ShardOutput<M>> {
    this.#inflight += 1;
    try {
      if (method === 'subOpen' || method === 'subMatch' || method === 'subClose')
        return await followedCall(
          this.#followed,
          ws,
          method,
          input,
          (w, m, i) => this.#route(w, m, i),
          () => this.#owners.get(this.partitionOf(ws))?.term ?? null,
        );
      return await this.#route(ws, method, input, opts);
    } finally {
      this.#inflight -= 1;
    }
  }

  async #route<M extends ShardMethod>(
    ws: string,
    method: M,
    input: ShardInput<M>,
    opts: CallOptions = {},
  ): Promise<ShardOutput<M>> {
    const p = this.partitionOf(ws);
    const deadline = Date.now() + ROUTE_WAIT_MS;
    for (;;) {
      const local = this.#parts.get(p);
      if (local?.status === 'ready' && local.shard) {
        const out = await answerWithin(this.#parked, parkKey(method, ws), opts, () =>
          this.#handleLocal(local, method, ws, structuredClone(input), this.#id),
        );
        if (out.bytes !== undefined) opts.replyBytes?.(out.bytes);
        return structuredClone(out.value) as ShardOutput<M>;
      }
      const owner = this.#owners.get(p);
      if (owner && owner.node !== this.#id && !local) {
        const called = (o: Lease | undefined): boolean =>
          o?.node === owner.node && o.term === owner.term;
        const reply = await forward(
          this.#nc,
          this.#subjects.node(owner.node, 'call'),
          {
            p,
            ws,
            m: method,
            i: input,
            o: this.#id,
            ...replyAsk(opts),
          },
          this.#o.config.shardTimeoutMs,
          () => called(this.#owners.get(p)),
        );
        if (reply.ok && reply.b !== undefined) opts.replyBytes?.(reply.b);
        if (reply.ok) return reply.v as ShardOutput<M>;
        if (!reply.notOwner) throw fromWireError(reply);
      }
      if (this.#stopping || Date.now() >= deadline) {
        throw new FlashbulbError(
          'unavailable',
          `partition ${p} has no ready owner at the moment (failover or move in progress); retry shortly`,
          { retryAfterS: 1 },
        );
      }
      await sleep(100);
      await this.#beat.refreshOwner(p);
    }
  }

  async #handleLocal<M extends ShardMethod>(
    local: Owned,
    method: M,
    ws: string,
    input: ShardInput<M>,
    origin: string,
  ): Promise<ShardOutput<M>> {
    if (!this.#parts.leaseSure(local)) await this.#parts.confirmLease(local);
    const shard = local.shard;
    if (!shard)
      throw new FlashbulbError('unavailable', `partition ${local.partition} is not ready`);
    local.inflight += 1;
    try {
      if (method === 'subOpen' && origin !== this.#id)
        this.#subOrigins.opened((input as ShardInput<'subOpen'>).id, origin, ws);
      const out = await shard.handle(method, ws, input);
      if (method === 'subClose') this.#subOrigins.closed((input as ShardInput<'subClose'>).id);
      return out;
    } catch (err) {
      if (err instanceof FencedError || local.log?.failed) {
        throw new FlashbulbError(
          'unavailable',
          `partition ${local.partition} changed owner during the write; it was not acknowledged, retry`,
          { retryAfterS: 1 },
        );
      }
      throw err;
    } finally {
      local.inflight -= 1;
    }
  }

  #listen(): void {
    const calls = this.#nc.subscribe(this.#subjects.node(this.#id, 'call'), {
      callback: (err, msg) => {
        if (err) return;
        void this.#serveForward(unpack<Forward>(msg.data)).then((reply) =>
          msg.respond(pack(reply)),
        );
      },
    });
    const pushes = this.#nc.subscribe(this.#subjects.node(this.#id, 'push'), {
      callback: (err, msg) => {
        if (err) return;
        const e = unpack<{ ws: string; pushes: Push[] }>(msg.data);
        this.#followed.pushed(e.pushes);
        this.#o.emit({ kind: 'push', ws: e.ws, pushes: e.pushes });
      },
    });
    // A node handing a partition over names us: take it now (the lease decides if someone was faster).
    const takes = this.#nc.subscribe(this.#subjects.node(this.#id, 'take'), {
      callback: (err, msg) => {
        if (err || this.#stopping) return;
        const { p } = unpack<{ p: number }>(msg.data);
        if (Number.isInteger(p) && p >= 0 && p < this.partitions && !this.#parts.has(p))
          void this.#parts.acquire(p);
      },
    });
    this.#subs.push(calls, pushes, takes);
  }

  async #serveForward(req: Forward): Promise<ForwardReply> {
    const local = this.#parts.get(req.p);
    if (local?.status !== 'ready' || !local.shard) {
      return {
        ok: false,
        code: 'unavailable',
        message: `node ${this.#id} does not serve partition ${req.p}`,
        notOwner: true,
      };
    }
    this.#inflight += 1;
    try {
      const ask = { maxReplyBytes: req.x, parkBelow: req.y, claim: req.k };
      const out = await answerWithin(this.#parked, parkKey(req.m, req.ws), ask, () =>
        this.#handleLocal(local, req.m, req.ws, req.i as ShardInput<ShardMethod>, req.o),
      );
      return { ok: true, v: out.value, ...(out.bytes === undefined ? {} : { b: out.bytes }) };
    } catch (err) {
      return toWireError(err);
    } finally {
      this.#inflight -= 1;
    }
  }

  /** Pushes of a local shard go to the node where each subscription was opened. */
  #onShardEvent(e: ShardEvent): void {
    if (e.kind !== 'push') return this.#o.emit(e);
    const byOrigin = this.#subOrigins.byOrigin(e.pushes, this.#id);
    for (const [origin, pushes] of byOrigin) {
      if (origin === this.#id) {
        this.#followed.pushed(pushes);
        this.#o.emit({ kind: 'push', ws: e.ws, pushes });
      } else this.#nc.publish(this.#subjects.node(origin, 'push'), pack({ ws: e.ws, pushes }));
    }
  }

  async broadcast<M extends ShardMethod>(
    method: M,
    input: ShardInput<M>,
  ): Promise<ShardOutput<M>[]> {
    const out: ShardOutput<M>[] = [];
    for (const o of this.#parts.values())
      if (o.status === 'ready' && o.shard) out.push(await o.shard.handle(method, '', input));
    return out;
  }

  inflight(): number {
    return this.#inflight;
  }

  problems(): string[] {
    return this.#nc.isClosed() ? ['the NATS connection is closed'] : [];
  }

  /** The partitions' metrics, once a second (cluster/partitions.ts). */
  #emitMetrics(): void {
    this.#parts.metrics(this.#o.emit);
  }

  /**
   * Feeds and closes for a subscription reach the node holding its stream, whichever node they
   * arrived at (cluster/relay.ts).
   */
  relay(): SubscriptionRelay {
    return subscriptionRelay(this.#nc, this.#subjects, this.#o.config.shardTimeoutMs);
  }

  // ---- status and shutdown -------------------------------------------------------------------

  async status(): Promise<ClusterStatus> {
    await this.#nodes.read(this.#beat.nodeRecord()).catch(() => undefined);
    await Promise.all(
      Array.from({ length: this.partitions }, (_, p) => this.#beat.refreshOwner(p)),
    );
    return clusterStatus({
      self: this.#id,
      config: this.#o.config,
      partitions: this.partitions,
      owners: this.#owners,
      live: this.#nodes.live,
      // The reader's short timeout (2 s): a status is asked for while NATS fails over, too.
      lastSeq: (p) =>
        this.#h.reader.jsm.streams.info(this.#subjects.stream(p)).then(
          (i) => i.state.last_seq,
          () => 0,
        ),
    });
  }

  /** Hands every partition over (so others take them at once), leaves the cluster, closes NATS. */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    if (this.#metricsTimer) clearInterval(this.#metricsTimer);
    await this.#beat.stop();
    await this.#parts.settled();
    await Promise.all(
      [...this.#parts.values()].map((o) => this.#parts.release(o, 'shutting down')),
    );
    await this.#nodes.remove().catch(() => undefined);
    for (const s of this.#subs) s.unsubscribe();
    await this.#nc.drain().catch(() => undefined);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
