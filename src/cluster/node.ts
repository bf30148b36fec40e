/**
 * @module cluster/node — one Flashbulb node of a cluster on NATS JetStream.
 *
 * Workspaces hash to P partitions (P stored once in the `<name>-meta` bucket). Each partition has
 * a stream `<name>_p<n>` that is its write-ahead log, and at most one owner: the node holding the
 * lease key `p<n>` in the `<name>-leases` bucket. Leases are created and renewed with
 * compare-and-set on the key's revision; the bucket's max age makes a lease that is not renewed
 * disappear after FLASHBULB_CLUSTER_LEASE_MS. The owner replays the stream into an ordinary Shard
 * (in this process's main thread), publishes a fence, and from then on every write the shard
 * makes is published (StreamLog) and acknowledged only after JetStream acknowledges it.
 *
 * Requests for a partition owned elsewhere are forwarded over NATS request-reply to
 * `<name>.node.<owner>.call`: the nodes already share the NATS connection, so there is no second
 * address to configure, discover or secure, and "no responders" tells at once that an owner is gone.
 */
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { ShardState } from '../shard/store/apply.ts';
import { PartitionSnapshots } from './snapshots.ts';
import type { Config } from '../config/index.ts';
import { FlashbulbError } from '../errors/codes.ts';
import { fromWireError, toWireError } from '../errors/wire.ts';
import type { ShardRouter } from '../router/router.ts';
import { shardFor } from '../router/shard-map.ts';
import type { Push, ShardEvent, ShardInput, ShardMethod, ShardOutput, ShardWorkerData } from '../protocol/shard.ts';
import { Shard } from '../shard/shard.ts';
import { encodeEntry, FencedError, isWrongLastSequence, StreamLog } from './stream-log.ts';
import { ensureStream, replayStream, StreamGapError, type StreamReader } from './stream-replay.ts';
import { forward, pack, unpack, type Forward, type ForwardReply } from './forward.ts';
import { LeaseTable, renewalFailure, type Lease } from './leases.ts';
import { FollowedSubscriptions } from './follow.ts';
import { randomBytes } from 'node:crypto';
import type { RelayedRequest, SubscriptionRelay } from '../subscribe/registry.ts';
import type { ClusterStatus, PartitionStatus } from './status.ts';

/** How long a request waits for a partition to get a ready owner before a retryable 503. */
const ROUTE_WAIT_MS = 3000;
const FENCE_ATTEMPTS = 20;
/** How long one read of a takeover (a get) waits for its answer before it is asked again. */
const READ_TRY_MS = 2000;
/** How long after a snapshot pointer moves the stream is trimmed below it (after reading the pointer back). */
const TRIM_SETTLE_MS = 1000;

export interface ClusterOptions {
  config: Config;
  /** Events of the local shards (pushes for subscriptions opened on this node). */
  emit: (e: ShardEvent) => void;
  log: (line: string) => void;
}

interface Owned {
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

interface NodeRecord {
  id: string;
  started_at: number;
  /** Partition → the last stream sequence this node appended or replayed. */
  owned: Record<string, { status: PartitionStatus; applied_seq: number }>;
}

export class ClusterNode implements ShardRouter {
  readonly #o: ClusterOptions;
  readonly #id: string;
  readonly #name: string;
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #reader: StreamReader;
  readonly #leases: LeaseTable;
  readonly #nodes: KV;
  readonly #snapshots: PartitionSnapshots;
  readonly partitions: number;
  readonly #owned = new Map<number, Owned>();
  readonly #owners = new Map<number, Lease>();
  #live = new Map<string, NodeRecord>();
  /** Subscriptions opened through another node, registered here: id → that node and the workspace. */
  readonly #subOrigins = new Map<number, { origin: string; ws: string; missingSince: number | null }>();
  /** Subscriptions whose stream this node holds, re-registered whenever their partition's owner changes. */
  readonly #followed: FollowedSubscriptions;
  /** Partitions released on purpose recently: not taken back at once (partition → until). */
  readonly #cooldown = new Map<number, number>();
  readonly #subs: Subscription[] = [];
  readonly #startedAt = Date.now();
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;
  /** Renewals run on their own timer, so a slow balancing round never lets a lease lapse. */
  #renewTimer: NodeJS.Timeout | null = null;
  #renewing: Promise<void> | null = null;
  #metricsTimer: NodeJS.Timeout | null = null;
  /** Partitions whose metrics were reported (a dropped one is reported once more, as empty). */
  readonly #reported = new Set<number>();
  #inflight = 0;
  #stopping = false;

  private constructor(o: ClusterOptions, nc: NatsConnection, jsm: JetStreamManager, reader: StreamReader, leases: KV, nodes: KV, snapshots: PartitionSnapshots, partitions: number) {
    this.#o = o;
    this.#id = o.config.nodeId;
    this.#name = o.config.clusterName;
    this.#nc = nc;
    this.#js = jetstream(nc);
    this.#jsm = jsm;
    this.#reader = reader;
    this.#leases = new LeaseTable(leases, o.config.nodeId);
    this.#nodes = nodes;
    this.#snapshots = snapshots;
    this.partitions = partitions;
    this.#followed = new FollowedSubscriptions(o.config.clusterLeaseMs);
  }

  static async start(o: ClusterOptions): Promise<ClusterNode> {
    const { config } = o;
    const nc = await connect({ servers: [...config.natsUrls], name: `flashbulb-${config.nodeId}`, maxReconnectAttempts: -1 });
    try {
      const replicas = config.natsReplicas;
      // A NATS cluster that is still forming (meta leader, peers for the replicas) refuses for a while.
      const setup = <T>(what: string, fn: () => Promise<T>): Promise<T> => untilAccepted(what, fn, o.log);
      const jsm = await setup('JetStream', () => jetstreamManager(nc));
      const kvm = new Kvm(nc);
      const meta = await setup('the meta bucket', () => kvm.create(`${config.clusterName}-meta`, { history: 1, replicas }));
      const leases = await setup('the lease bucket', () => kvm.create(`${config.clusterName}-leases`, { history: 1, replicas, ttl: config.clusterLeaseMs }));
      const nodes = await setup('the node bucket', () => kvm.create(`${config.clusterName}-nodes`, { history: 1, replicas, ttl: config.clusterLeaseMs }));
      const objects = await setup('the snapshot store', () => new Objm(nc).create(`${config.clusterName}-snapshots`, { replicas }));
      const partitions = await setup('the partition count', () => partitionCount(meta, config.clusterPartitions));
      if (partitions !== config.clusterPartitions) {
        o.log(`cluster: ${partitions} partitions (fixed when the cluster was created; FLASHBULB_CLUSTER_PARTITIONS=${config.clusterPartitions} ignored)`);
      }
      // Reads on a takeover (snapshot, replay) are gets with a short timeout each, retried.
      const readJs = jetstream(nc, { timeout: READ_TRY_MS });
      const readJsm = await setup('JetStream', () => jetstreamManager(nc, { timeout: READ_TRY_MS }));
      const readOs = await setup('the snapshot store', () => new Objm(readJs).open(`${config.clusterName}-snapshots`, false));
      const snapshots = new PartitionSnapshots(objects, meta, jsm, `${config.clusterName}-meta`, { os: readOs, jsm: readJsm });
      const node = new ClusterNode(o, nc, jsm, { js: readJs, jsm: readJsm }, leases, nodes, snapshots, partitions);
      node.#listen();
      await node.#scheduleTick();
      const every = Math.max(200, Math.floor(config.clusterLeaseMs / 3));
      node.#timer = setInterval(() => void node.#scheduleTick(), every);
      node.#renewTimer = setInterval(() => {
        node.#renewing ??= node.#renew().finally(() => (node.#renewing = null));
      }, every);
      node.#metricsTimer = setInterval(() => node.#emitMetrics(), 1000);
      node.#metricsTimer.unref();
      o.log(`cluster: node ${config.nodeId} joined '${config.clusterName}' on ${config.natsUrls.join(',')} (${partitions} partitions, replicas ${replicas})`);
      return node;
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  get nodeId(): string {
    return this.#id;
  }

  partitionOf(ws: string): number {
    return shardFor(ws, this.partitions);
  }

  #stream(p: number): string {
    return `${this.#name}_p${p}`;
  }

  #subject(p: number): string {
    return `${this.#name}.p.${p}.log`;
  }

  #nodeSubject(node: string, what: 'call' | 'push' | 'take'): string {
    return `${this.#name}.node.${node}.${what}`;
  }

  // ---- requests ----------------------------------------------------------------------------

  async call<M extends ShardMethod>(ws: string, method: M, input: ShardInput<M>): Promise<ShardOutput<M>> {
    this.#inflight += 1;
    try {
      if (method === 'subOpen' || method === 'subMatch' || method === 'subClose') return await this.#subscriptionCall(ws, method, input);
      return await this.#route(ws, method, input);
    } finally {
      this.#inflight -= 1;
    }
  }

  /** Subscription calls from this node's streams: remembered here, so they can follow their partition. */
  async #subscriptionCall<M extends ShardMethod>(ws: string, method: M, input: ShardInput<M>): Promise<ShardOutput<M>> {
    const termNow = (): string | null => this.#owners.get(this.partitionOf(ws))?.term ?? null;
    if (method === 'subOpen') {
      const spec = input as ShardInput<'subOpen'>;
      const term = termNow();
      const out = await this.#route(ws, method, input);
      this.#followed.opened(ws, spec, term);
      return out;
    }
    if (method === 'subClose') {
      this.#followed.closed((input as ShardInput<'subClose'>).id);
      return await this.#route(ws, method, input);
    }
    const m = input as ShardInput<'subMatch'>;
    const vector = Float32Array.from(m.vector);
    let pushes: ShardOutput<'subMatch'>;
    try {
      pushes = await this.#route(ws, 'subMatch', m);
    } catch (err) {
      // The owner does not know the subscription (it took the partition over since): register it, match again.
      if (!(err instanceof FlashbulbError && err.code === 'not_found' && this.#followed.has(m.id))) throw err;
      const term = termNow();
      await this.#followed.reopen(m.id, term, (w, spec) => this.#route(w, 'subOpen', spec).then(() => undefined));
      pushes = await this.#route(ws, 'subMatch', { ...m, vector: Float32Array.from(vector) });
    }
    this.#followed.matched(m.id, vector, m.offset, pushes);
    return pushes as ShardOutput<M>;
  }

  async #route<M extends ShardMethod>(ws: string, method: M, input: ShardInput<M>): Promise<ShardOutput<M>> {
    const p = this.partitionOf(ws);
    const deadline = Date.now() + ROUTE_WAIT_MS;
    for (;;) {
      const local = this.#owned.get(p);
      if (local?.status === 'ready' && local.shard) return structuredClone(await this.#handleLocal(local, method, ws, structuredClone(input), this.#id));
      const owner = this.#owners.get(p);
      if (owner && owner.node !== this.#id && !local) {
        const reply = await forward(this.#nc, this.#nodeSubject(owner.node, 'call'), { p, ws, m: method, i: input, o: this.#id }, this.#o.config.shardTimeoutMs);
        if (reply.ok) return reply.v as ShardOutput<M>;
        if (!reply.notOwner) throw fromWireError(reply);
      }
      if (this.#stopping || Date.now() >= deadline) {
        throw new FlashbulbError('unavailable', `partition ${p} has no ready owner at the moment (failover or move in progress); retry shortly`, { retryAfterS: 1 });
      }
      await sleep(100);
      await this.#refreshOwner(p);
    }
  }

  async #handleLocal<M extends ShardMethod>(local: Owned, method: M, ws: string, input: ShardInput<M>, origin: string): Promise<ShardOutput<M>> {
    if (!this.#leaseSure(local)) await this.#confirmLease(local);
    const shard = local.shard;
    if (!shard) throw new FlashbulbError('unavailable', `partition ${local.partition} is not ready`);
    local.inflight += 1;
    try {
      if (method === 'subOpen' && origin !== this.#id) this.#subOrigins.set((input as ShardInput<'subOpen'>).id, { origin, ws, missingSince: null });
      const out = await shard.handle(method, ws, input);
      if (method === 'subClose') this.#subOrigins.delete((input as ShardInput<'subClose'>).id);
      return out;
    } catch (err) {
      if (err instanceof FencedError || local.log?.failed) {
        throw new FlashbulbError('unavailable', `partition ${local.partition} changed owner during the write; it was not acknowledged, retry`, { retryAfterS: 1 });
      }
      throw err;
    } finally {
      local.inflight -= 1;
    }
  }

  /**
   * Whether no other node can own the partition yet: our last successful renewal was sent less
   * than the lease time ago, minus a margin for clock rates. Outside that window the state may be
   * stale (this process was paused, or NATS was slow to renew), so a request waits for a renewal.
   */
  #leaseSure(o: Owned): boolean {
    const lease = this.#o.config.clusterLeaseMs;
    return performance.now() - o.leaseSentAt < lease - Math.max(200, lease / 10);
  }

  /**
   * The fence of snapshot pointer moves and stream trims: resolves only while no other node can
   * hold our lease, i.e. a renewal sent less than a lease (minus the margin) ago succeeded; one
   * older than a third of a lease is renewed first. A node that lost its lease, or that was
   * paused since its last renewal, gets an error and changes nothing.
   */
  async #confirmFresh(o: Owned): Promise<void> {
    const ours = (): boolean => this.#owned.get(o.partition) === o;
    if (ours() && performance.now() - o.leaseSentAt >= this.#o.config.clusterLeaseMs / 3) {
      this.#renewing ??= this.#renew().finally(() => (this.#renewing = null));
      await this.#renewing;
    }
    if (!ours() || !this.#leaseSure(o)) throw new FencedError(`partition ${o.partition}: ownership not confirmed; the snapshot pointer and the stream are left as they are`);
  }

  /** Renews now; a partition whose lease is gone is dropped and the request answered 503 (retryable). */
  async #confirmLease(o: Owned): Promise<void> {
    this.#renewing ??= this.#renew().finally(() => (this.#renewing = null));
    await this.#renewing;
    if (this.#owned.get(o.partition) !== o || !this.#leaseSure(o)) {
      throw new FlashbulbError('unavailable', `partition ${o.partition}: this node could not confirm its ownership (it may have been paused or cut off); retry`, { retryAfterS: 1 });
    }
  }

  #listen(): void {
    const calls = this.#nc.subscribe(this.#nodeSubject(this.#id, 'call'), {
      callback: (err, msg) => {
        if (err) return;
        void this.#serveForward(unpack<Forward>(msg.data)).then((reply) => msg.respond(pack(reply)));
      },
    });
    const pushes = this.#nc.subscribe(this.#nodeSubject(this.#id, 'push'), {
      callback: (err, msg) => {
        if (err) return;
        const e = unpack<{ ws: string; pushes: Push[] }>(msg.data);
        this.#followed.pushed(e.pushes);
        this.#o.emit({ kind: 'push', ws: e.ws, pushes: e.pushes });
      },
    });
    // A node handing a partition over names us: take it now (the lease decides if someone was faster).
    const takes = this.#nc.subscribe(this.#nodeSubject(this.#id, 'take'), {
      callback: (err, msg) => {
        if (err || this.#stopping) return;
        const { p } = unpack<{ p: number }>(msg.data);
        if (Number.isInteger(p) && p >= 0 && p < this.partitions && !this.#owned.has(p)) void this.#acquire(p);
      },
    });
    this.#subs.push(calls, pushes, takes);
  }

  async #serveForward(req: Forward): Promise<ForwardReply> {
    const local = this.#owned.get(req.p);
    if (local?.status !== 'ready' || !local.shard) {
      return { ok: false, code: 'unavailable', message: `node ${this.#id} does not serve partition ${req.p}`, notOwner: true };
    }
    this.#inflight += 1;
    try {
      return { ok: true, v: await this.#handleLocal(local, req.m, req.ws, req.i as ShardInput<ShardMethod>, req.o) };
    } catch (err) {
      return toWireError(err);
    } finally {
      this.#inflight -= 1;
    }
  }

  /** Pushes of a local shard go to the node where each subscription was opened. */
  #onShardEvent(e: ShardEvent): void {
    if (e.kind !== 'push') return this.#o.emit(e);
    const byOrigin = new Map<string, Push[]>();
    for (const push of e.pushes) {
      const origin = this.#subOrigins.get(push.subscription)?.origin ?? this.#id;
      byOrigin.set(origin, [...(byOrigin.get(origin) ?? []), push]);
    }
    for (const [origin, pushes] of byOrigin) {
      if (origin === this.#id) {
        this.#followed.pushed(pushes);
        this.#o.emit({ kind: 'push', ws: e.ws, pushes });
      }
      else this.#nc.publish(this.#nodeSubject(origin, 'push'), pack({ ws: e.ws, pushes }));
    }
  }

  async broadcast<M extends ShardMethod>(method: M, input: ShardInput<M>): Promise<ShardOutput<M>[]> {
    const out: ShardOutput<M>[] = [];
    for (const o of this.#owned.values()) if (o.status === 'ready' && o.shard) out.push(await o.shard.handle(method, '', input));
    return out;
  }

  inflight(): number {
    return this.#inflight;
  }

  problems(): string[] {
    return this.#nc.isClosed() ? ['the NATS connection is closed'] : [];
  }

  // ---- ownership -----------------------------------------------------------------------------

  #scheduleTick(): Promise<void> {
    if (this.#ticking || this.#stopping) return this.#ticking ?? Promise.resolve();
    this.#ticking = this.#tick()
      .catch((err: unknown) => this.#o.log(`cluster: heartbeat failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => (this.#ticking = null));
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    await this.#nodes.put(`n.${this.#id}`, JSON.stringify(this.#nodeRecord()));
    await this.#readNodes();
    await Promise.all(Array.from({ length: this.partitions }, (_, p) => this.#refreshOwner(p)));
    if (this.#stopping) return;
    this.#balance();
    this.#followSubscriptions();
  }

  /**
   * Registers this node's subscriptions with owners that took their partitions since, and drops
   * subscriptions registered here whose node has been gone for three leases (its streams died with it).
   */
  #followSubscriptions(): void {
    this.#followed.reconcile(
      (ws) => {
        const owner = this.#owners.get(this.partitionOf(ws));
        // Our own partition only once it is ready (a recovering shard cannot take the registration yet).
        if (owner?.node === this.#id && this.#owned.get(this.partitionOf(ws))?.status !== 'ready') return null;
        return owner?.term ?? null;
      },
      (ws, spec) => this.#route(ws, 'subOpen', spec).then(() => undefined),
      (id, err) => this.#o.log(`cluster: subscription ${id} could not be registered with its partition's new owner yet: ${err instanceof Error ? err.message : String(err)}`),
    );
    const now = Date.now();
    for (const [id, s] of this.#subOrigins) {
      if (this.#live.has(s.origin)) {
        s.missingSince = null;
        continue;
      }
      s.missingSince ??= now;
      if (now - s.missingSince < 3 * this.#o.config.clusterLeaseMs) continue;
      this.#subOrigins.delete(id);
      const local = this.#owned.get(this.partitionOf(s.ws));
      if (local?.status === 'ready' && local.shard) void local.shard.handle('subClose', s.ws, { id }).catch(() => undefined);
    }
  }

  #nodeRecord(): NodeRecord {
    const owned: NodeRecord['owned'] = {};
    for (const o of this.#owned.values()) owned[String(o.partition)] = { status: o.status, applied_seq: o.log?.lastSeq ?? 0 };
    return { id: this.#id, started_at: this.#startedAt, owned };
  }

  async #renew(): Promise<void> {
    await Promise.all(
      [...this.#owned.values()].map(async (o) => {
        if (o.status === 'releasing') return;
        try {
          const sent = performance.now();
          // A renewal sent on a connection that just died must not wait past the next one.
          o.leaseRev = await this.#leases.renew(o.partition, o.leaseRev, o.term, Math.max(500, Math.floor(this.#o.config.clusterLeaseMs / 3)));
          o.leaseSentAt = sent;
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          if (renewalFailure(err, performance.now() - o.leaseSentAt, this.#o.config.clusterLeaseMs) === 'lost') this.#lose(o, `lease lost (${why})`);
          else this.#o.log(`cluster: renewing the lease of partition ${o.partition} failed (${why}); retrying`);
        }
      }),
    );
  }

  async #readNodes(): Promise<void> {
    const live = new Map<string, NodeRecord>();
    const keys: string[] = [];
    for await (const k of await this.#nodes.keys()) keys.push(k);
    await Promise.all(
      keys.map(async (k) => {
        const e = await this.#nodes.get(k);
        if (e && e.operation === 'PUT') {
          const rec = JSON.parse(e.string()) as NodeRecord;
          live.set(rec.id, rec);
        }
      }),
    );
    live.set(this.#id, this.#nodeRecord());
    this.#live = live;
  }

  async #refreshOwner(p: number): Promise<void> {
    const holder = await this.#leases.holder(p);
    if (holder) this.#owners.set(p, holder);
    else this.#owners.delete(p);
  }

  /** Takes free partitions up to a fair share; gives one away per heartbeat above it. */
  #balance(): void {
    const nodes = [...this.#live.keys()].sort();
    const target = Math.ceil(this.partitions / Math.max(1, nodes.length));
    const now = Date.now();
    let mine = this.#owned.size;
    const offset = nodes.indexOf(this.#id) * Math.ceil(this.partitions / Math.max(1, nodes.length));
    for (let k = 0; k < this.partitions && mine < target; k++) {
      const p = (offset + k) % this.partitions;
      if (this.#owners.has(p) || this.#owned.has(p) || (this.#cooldown.get(p) ?? 0) > now) continue;
      mine += 1;
      void this.#acquire(p);
    }
    if (mine <= target) return;
    const counts = new Map<string, number>(nodes.map((n) => [n, 0]));
    for (const l of this.#owners.values()) counts.set(l.node, (counts.get(l.node) ?? 0) + 1);
    const floor = Math.floor(this.partitions / nodes.length);
    const starving = nodes.filter((n) => n !== this.#id && (counts.get(n) ?? 0) < floor).sort((x, y) => (counts.get(x) ?? 0) - (counts.get(y) ?? 0));
    if (starving.length === 0) return;
    const give = [...this.#owned.values()].find((o) => o.status === 'ready');
    if (give) void this.#release(give, 'rebalancing', starving[0]);
  }

  async #acquire(p: number): Promise<void> {
    const sent = performance.now();
    const term = randomBytes(6).toString('hex');
    const rev = await this.#leases.acquire(p, term);
    if (rev === null) return; // someone else holds it
    const o: Owned = { partition: p, status: 'recovering', leaseRev: rev, term, leaseSentAt: sent, shard: null, log: null, fenceSeq: 0, since: Date.now(), replayedRecords: 0, recoveryMs: 0, inflight: 0 };
    this.#owned.set(p, o);
    this.#owners.set(p, { node: this.#id, term, at: Date.now() });
    const started = performance.now();
    try {
      await ensureStream(this.#jsm, this.#stream(p), this.#subject(p), this.#o.config.natsReplicas);
      const { recovered, fenceSeq, loaded } = await this.#recoverAndFence(p, rev, o);
      if (this.#owned.get(p) !== o) return; // lost while recovering
      const log = new StreamLog({
        js: this.#js,
        subject: this.#subject(p),
        node: this.#id,
        term: rev,
        lastSeq: fenceSeq,
        timeoutMs: this.#o.config.shardTimeoutMs,
        onFailed: (err) => this.#lose(o, err instanceof FencedError ? err.message : `log failed: ${err.message}`),
        snapshots: { store: this.#snapshots, partition: p, jsm: this.#jsm, stream: this.#stream(p), confirm: () => this.#confirmFresh(o), settleMs: TRIM_SETTLE_MS },
      });
      o.log = log;
      o.fenceSeq = fenceSeq;
      if (loaded) log.trimBelowLoaded(loaded.seq, loaded.object);
      o.shard = new Shard(this.#shardOptions(p), (e) => this.#onShardEvent(e), { recovered, log });
      o.replayedRecords = recovered.replayedRecords;
      o.recoveryMs = performance.now() - started;
      o.status = 'ready';
      this.#o.log(`cluster: partition ${p} owned by ${this.#id}: ${o.shard.memoryCount} memories (${recovered.replayedRecords} records replayed) in ${o.recoveryMs.toFixed(0)} ms`);
    } catch (err) {
      this.#o.log(`cluster: taking partition ${p} failed: ${err instanceof Error ? err.message : String(err)}`);
      this.#lose(o, 'takeover failed');
    }
  }

  /** Replays the whole stream, then appends a fence; a deposed owner's later appends fail. */
  async #recoverAndFence(p: number, term: number, o: Owned): Promise<{ recovered: Awaited<ReturnType<typeof replayStream>>['recovered']; fenceSeq: number; loaded: { seq: number; object: string } | null }> {
    for (let attempt = 0; attempt < FENCE_ATTEMPTS; attempt++) {
      const info = await this.#jsm.streams.info(this.#stream(p));
      const last = info.state.last_seq;
      const state = new ShardState();
      const snap = await this.#snapshots.load(p, state);
      const from = Math.max(info.state.first_seq, snap.seq + 1);
      if (snap.seq + 1 < info.state.first_seq && info.state.messages > 0) {
        throw new Error(`partition ${p}: the stream starts at ${info.state.first_seq} but the newest snapshot covers only up to ${snap.seq}`);
      }
      let replayed: Awaited<ReturnType<typeof replayStream>>;
      try {
        replayed = await replayStream(this.#reader, this.#stream(p), from, last, state);
      } catch (err) {
        // Trimmed between reading the pointer and reading the stream: the pointer has moved on.
        if (err instanceof StreamGapError && attempt < FENCE_ATTEMPTS - 1) continue;
        throw err;
      }
      const { recovered } = replayed;
      if (this.#owned.get(p) !== o) throw new Error(`partition ${p}: lost while recovering`); // no fence from a takeover given up
      try {
        const ack = await this.#js.publish(this.#subject(p), encodeEntry({ node: this.#id, fence: term }), {
          msgID: `${this.#id}.${term}.fence`,
          expect: { lastSubjectSequence: last },
          timeout: this.#o.config.shardTimeoutMs,
        });
        // Records the loaded snapshot covers are still in the stream: trim them once we own it.
        const loaded = snap.object !== null && info.state.messages > 0 && info.state.first_seq < snap.seq ? { seq: snap.seq, object: snap.object } : null;
        return { recovered, fenceSeq: ack.seq, loaded };
      } catch (err) {
        // The previous owner appended after we read: read again. Anything else (NATS did not
        // answer): give the lease back rather than hold the partition through more timeouts.
        if (!isWrongLastSequence(err) || attempt === FENCE_ATTEMPTS - 1) throw err;
      }
    }
    throw new Error('unreachable');
  }

  #shardOptions(p: number): ShardWorkerData {
    const c = this.#o.config;
    return { shard: p, dir: '', durability: c.durability, snapshotIntervalS: c.snapshotIntervalS, snapshotWalBytes: c.snapshotWalBytes, eraseWithinS: c.eraseWithinS, contradictions: c.contradictionsEnabled };
  }

  /** Drops a partition at once (lease or log lost): its state may hold writes never acknowledged. */
  #lose(o: Owned, reason: string): void {
    if (this.#owned.get(o.partition) !== o) return;
    this.#owned.delete(o.partition);
    if (this.#owners.get(o.partition)?.node === this.#id) this.#owners.delete(o.partition);
    this.#o.log(`cluster: partition ${o.partition} dropped by ${this.#id}: ${reason}`);
    void o.shard?.shutdown().catch(() => undefined);
    void o.log?.close().catch(() => undefined);
    // Our lease, if it is still ours, goes too, so that a fresh owner replays the stream.
    void this.#leases.release(o.partition, o.leaseRev);
  }

  /** Hands a partition over: stop taking requests, finish the ones in flight, free the lease. */
  /** `to`: the node that should take the partition; it is told at once instead of finding it free on its next heartbeat. */
  async #release(o: Owned, reason: string, to?: string): Promise<void> {
    if (o.status !== 'ready') return;
    o.status = 'releasing';
    this.#cooldown.set(o.partition, Date.now() + 3 * this.#o.config.clusterLeaseMs);
    while (o.inflight > 0) await sleep(5);
    await o.shard?.shutdown().catch(() => undefined);
    await o.log?.close().catch(() => undefined);
    await this.#leases.release(o.partition, o.leaseRev);
    if (this.#owned.get(o.partition) === o) this.#owned.delete(o.partition);
    this.#owners.delete(o.partition);
    if (to) this.#nc.publish(this.#nodeSubject(to, 'take'), pack({ p: o.partition }));
    this.#o.log(`cluster: partition ${o.partition} released by ${this.#id} (${reason}${to ? `, to ${to}` : ''})`);
  }

  /**
   * The same per-shard metrics a worker sends once a second, one series per owned partition (the
   * `shard` label is the partition number); a partition given up reports empty once.
   */
  #emitMetrics(): void {
    for (const p of this.#reported) {
      if (this.#owned.get(p)?.shard) continue;
      this.#reported.delete(p);
      this.#o.emit({ kind: 'metrics', shard: p, memories: 0, syncMs: [], snapshotMs: [], expired: 0, contradictions: 0, checksSkipped: 0, checkBacklog: 0, indexBacklog: 0 });
    }
    for (const o of this.#owned.values()) {
      const shard = o.shard;
      if (!shard) continue;
      this.#reported.add(o.partition);
      const c = shard.takeContradictions();
      const b = shard.backlogs();
      this.#o.emit({
        kind: 'metrics',
        shard: o.partition,
        memories: shard.memoryCount,
        syncMs: o.log ? o.log.publishMs.splice(0) : [],
        snapshotMs: shard.snapshotMs.splice(0),
        expired: shard.takeExpired(),
        contradictions: c.found,
        checksSkipped: c.skipped,
        checkBacklog: b.checks,
        indexBacklog: b.index,
      });
    }
  }

  /**
   * Feeds and closes for a subscription reach the node holding its stream, whichever node they
   * arrived at: the holder answers on `<name>.sub.<id>` while the subscription is open.
   */
  relay(): SubscriptionRelay {
    const subject = (id: number): string => `${this.#name}.sub.${id}`;
    return {
      serve: (id, handler) => {
        const sub = this.#nc.subscribe(subject(id), {
          callback: (err, msg) => {
            if (err) return;
            void handler(unpack<RelayedRequest>(msg.data)).then(
              () => msg.respond(pack({ ok: true, v: null } satisfies ForwardReply)),
              (e: unknown) => msg.respond(pack(toWireError(e))),
            );
          },
        });
        return () => sub.unsubscribe();
      },
      send: async (id, req) => {
        let reply: ForwardReply;
        try {
          reply = unpack<ForwardReply>((await this.#nc.request(subject(id), pack(req), { timeout: this.#o.config.shardTimeoutMs })).data);
        } catch (err) {
          const text = err instanceof Error ? err.message : String(err);
          if (/no responders/i.test(text)) throw new FlashbulbError('not_found', `subscription ${id} not found`);
          throw new FlashbulbError('unavailable', `the node holding subscription ${id} did not answer (${text}); retry`, { retryAfterS: 1 });
        }
        if (!reply.ok) throw fromWireError(reply);
      },
    };
  }

  // ---- status and shutdown -------------------------------------------------------------------

  async status(): Promise<ClusterStatus> {
    await this.#readNodes().catch(() => undefined);
    await Promise.all(Array.from({ length: this.partitions }, (_, p) => this.#refreshOwner(p)));
    const byNode = new Map<string, number[]>();
    for (const [p, l] of this.#owners) byNode.set(l.node, [...(byNode.get(l.node) ?? []), p]);
    const rows: ClusterStatus['partition_owners'] = [];
    for (let p = 0; p < this.partitions; p++) {
      const owner = this.#owners.get(p)?.node ?? null;
      const lastSeq = await this.#jsm.streams
        .info(this.#stream(p))
        .then((i) => i.state.last_seq)
        .catch(() => 0);
      const reported = owner ? this.#live.get(owner)?.owned[String(p)] : undefined;
      const applied = reported?.applied_seq ?? null;
      rows.push({
        partition: p,
        owner,
        status: owner === null ? 'unowned' : (reported?.status ?? 'unknown'),
        stream_last_seq: lastSeq,
        applied_seq: applied,
        lag: applied === null ? null : Math.max(0, lastSeq - applied),
      });
    }
    return {
      node: this.#id,
      cluster: this.#name,
      partitions: this.partitions,
      replicas: this.#o.config.natsReplicas,
      lease_ms: this.#o.config.clusterLeaseMs,
      nodes: [...this.#live.values()]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((n) => ({ id: n.id, started_at: new Date(n.started_at).toISOString(), partitions: (byNode.get(n.id) ?? []).sort((a, b) => a - b), self: n.id === this.#id })),
      partition_owners: rows,
    };
  }

  /** Hands every partition over (so others take them at once), leaves the cluster, closes NATS. */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    if (this.#metricsTimer) clearInterval(this.#metricsTimer);
    while (this.#ticking) await this.#ticking;
    while (this.#renewing) await this.#renewing;
    await Promise.all([...this.#owned.values()].map((o) => this.#release(o, 'shutting down')));
    await this.#nodes.delete(`n.${this.#id}`).catch(() => undefined);
    for (const s of this.#subs) s.unsubscribe();
    await this.#nc.drain().catch(() => undefined);
  }
}

async function partitionCount(meta: KV, wanted: number): Promise<number> {
  try {
    await meta.create('partitions', String(wanted));
    return wanted;
  } catch {
    const e = await meta.get('partitions');
    const n = Number(e?.string());
    if (!Number.isInteger(n) || n < 1) throw new Error(`cluster metadata holds an invalid partition count '${e?.string() ?? ''}'`);
    return n;
  }
}

/** How long a starting node keeps retrying JetStream set-up before it gives up. */
const SETUP_WAIT_MS = 60_000;

async function untilAccepted<T>(what: string, fn: () => Promise<T>, log: (line: string) => void): Promise<T> {
  const deadline = Date.now() + SETUP_WAIT_MS;
  for (let said = false; ; said = true) {
    try {
      return await fn();
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      if (Date.now() > deadline || /invalid partition count/.test(text)) throw new Error(`cluster: ${what} could not be set up within ${SETUP_WAIT_MS / 1000} s: ${text}`);
      if (!said) log(`cluster: waiting for JetStream to accept ${what} (${text})`);
      await sleep(500);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

