/**
 * @module cluster/setup — joining a cluster: the NATS connection, and the buckets and stores every
 * node shares (meta, leases, nodes, snapshots), created by whichever node comes first. A NATS
 * cluster that is still forming (electing its meta leader, finding peers for the replicas) refuses
 * for a while, so each step is retried for up to a minute.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import type { Config } from '../config/index.ts';
import { PartitionSnapshots } from './snapshots.ts';
import type { StreamReader } from './stream-replay.ts';

/** How long one read of a takeover (a get) waits for its answer before it is asked again. */
const READ_TRY_MS = 2000;
/** How long a starting node keeps retrying JetStream set-up before it gives up. */
const SETUP_WAIT_MS = 60_000;

export interface ClusterHandles {
  nc: NatsConnection;
  jsm: JetStreamManager;
  /** For a takeover's reads: requests with a short timeout, each retried. */
  reader: StreamReader;
  /** The cluster's fixed facts (recordOnce): the partition count, the embedder. */
  meta: KV;
  leases: KV;
  nodes: KV;
  snapshots: PartitionSnapshots;
  partitions: number;
}

/** Connects and opens (or creates) the cluster's buckets; the connection is closed again on failure. */
export async function openCluster(
  config: Config,
  log: (line: string) => void,
): Promise<ClusterHandles> {
  const nc = await connect({
    servers: [...config.natsUrls],
    name: `flashbulb-${config.nodeId}`,
    maxReconnectAttempts: -1,
    ...pingOptions(config.clusterLeaseMs),
  });
  logConnectionEvents(nc, log).catch(() => undefined);
  try {
    const replicas = config.natsReplicas;
    const setup = <T>(what: string, fn: () => Promise<T>): Promise<T> =>
      untilAccepted(what, fn, log);
    const jsm = await setup('JetStream', () => jetstreamManager(nc));
    const kvm = new Kvm(nc);
    const meta = await setup('the meta bucket', () =>
      kvm.create(`${config.clusterName}-meta`, { history: 1, replicas }),
    );
    const leases = await setup('the lease bucket', () =>
      kvm.create(`${config.clusterName}-leases`, {
        history: 1,
        replicas,
        ttl: config.clusterLeaseMs,
      }),
    );
    const nodes = await setup('the node bucket', () =>
      kvm.create(`${config.clusterName}-nodes`, {
        history: 1,
        replicas,
        ttl: config.clusterLeaseMs,
      }),
    );
    const objects = await setup('the snapshot store', () =>
      new Objm(nc).create(`${config.clusterName}-snapshots`, { replicas }),
    );
    const partitions = await setup('the partition count', () =>
      partitionCount(meta, config.clusterPartitions),
    );
    if (partitions !== config.clusterPartitions) {
      log(
        `cluster: ${partitions} partitions (fixed when the cluster was created; FLASHBULB_CLUSTER_PARTITIONS=${config.clusterPartitions} ignored)`,
      );
    }
    // Reads on a takeover (snapshot, replay) are gets with a short timeout each, retried.
    const readJs = jetstream(nc, { timeout: READ_TRY_MS });
    const readJsm = await setup('JetStream', () => jetstreamManager(nc, { timeout: READ_TRY_MS }));
    const readOs = await setup('the snapshot store', () =>
      new Objm(readJs).open(`${config.clusterName}-snapshots`, false),
    );
    const snapshots = new PartitionSnapshots(objects, meta, jsm, `${config.clusterName}-meta`, {
      os: readOs,
      jsm: readJsm,
    });
    return {
      nc,
      jsm,
      reader: { js: readJs, jsm: readJsm },
      meta,
      leases,
      nodes,
      snapshots,
      partitions,
    };
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
}

/**
 * A server that stops answering without closing the connection (a network partition, a paused
 * host) is noticed only by pings: with the client's default (every 2 minutes, 2 unanswered) a
 * node whose server was cut off waited up to 4 minutes, every request timing out, before it
 * reconnected to another server (the partition bench: the majority took no partition for 150 s).
 * Pinging every half lease, it gives up on such a server within about a lease and a half.
 */
export function pingOptions(leaseMs: number): { pingInterval: number; maxPingOut: number } {
  return { pingInterval: Math.max(1000, Math.floor(leaseMs / 2)), maxPingOut: 2 };
}

/** Logs the connection's changes of server (not its pings), until it closes. */
async function logConnectionEvents(nc: NatsConnection, log: (line: string) => void): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'disconnect' || s.type === 'reconnect')
      log(
        `cluster: NATS ${s.type === 'disconnect' ? 'disconnected from' : 'reconnected to'} ${s.server}`,
      );
    else if (s.type === 'staleConnection')
      log('cluster: NATS server stopped answering pings; reconnecting to another');
  }
}

async function partitionCount(meta: KV, wanted: number): Promise<number> {
  const text = await recordOnce(meta, 'partitions', String(wanted));
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`cluster metadata holds an invalid partition count '${text}'`);
  return n;
}

/**
 * A fact fixed by the first node that states it: `value` is stored under `key` in the meta bucket
 * unless a value is there already (or another node's create won the race); returns what is stored.
 */
export async function recordOnce(meta: KV, key: string, value: string): Promise<string> {
  try {
    await meta.create(key, value);
    return value;
  } catch {
    const e = await meta.get(key);
    if (e === null) throw new Error(`cluster metadata: '${key}' could be neither created nor read`);
    return e.string();
  }
}

async function untilAccepted<T>(
  what: string,
  fn: () => Promise<T>,
  log: (line: string) => void,
): Promise<T> {
  const deadline = Date.now() + SETUP_WAIT_MS;
  for (let said = false; ; said = true) {
    try {
      return await fn();
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      if (Date.now() > deadline || /invalid partition count/.test(text))
        throw new Error(
          `cluster: ${what} could not be set up within ${SETUP_WAIT_MS / 1000} s: ${text}`,
        );
      if (!said) log(`cluster: waiting for JetStream to accept ${what} (${text})`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
