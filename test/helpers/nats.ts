/**
 * nats-server (JetStream) as a child process for the cluster tests: one server, or a 3-server
 * JetStream cluster on loopback. Also reads a partition stream back, to audit who appended what.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { decodeEntry } from '../../src/cluster/stream-log.ts';
import { PartitionSnapshots } from '../../src/cluster/snapshots.ts';
import type { ShardState } from '../../src/shard/store/apply.ts';
import { freePort, ROOT } from './child.ts';
import { until } from './wait.ts';

/**
 * The environment of one Flashbulb node of a 3-replica test cluster (the fault and partition runs):
 * short shard timeouts, and no contradiction checks or reflection, whose background work only adds
 * noise to what those runs measure.
 */
export function clusterNodeEnv(o: {
  urls: readonly string[];
  id: string;
  name: string;
  partitions: number;
  leaseMs: number;
  snapshotIntervalS: number;
}): Record<string, string> {
  return {
    FLASHBULB_NATS_URL: o.urls.join(','),
    FLASHBULB_NODE_ID: o.id,
    FLASHBULB_CLUSTER_NAME: o.name,
    FLASHBULB_CLUSTER_PARTITIONS: String(o.partitions),
    FLASHBULB_CLUSTER_LEASE_MS: String(o.leaseMs),
    FLASHBULB_NATS_REPLICAS: '3',
    FLASHBULB_SHARD_TIMEOUT_MS: '5000',
    FLASHBULB_SNAPSHOT_INTERVAL_S: String(o.snapshotIntervalS),
    FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
    FLASHBULB_REFLECT_ENABLED: 'false',
  };
}

/** The version of the nats-server on PATH as [major, minor, patch], or null (none, or unreadable). */
export function natsServerVersion(): [number, number, number] | null {
  try {
    const out = execFileSync('nats-server', ['--version'], { encoding: 'utf8' });
    const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(out);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
  } catch {
    return null;
  }
}

/** True when a nats-server binary is on PATH (CI builds 2.12.1, Debian's package is the fallback). */
export function natsServerAvailable(): boolean {
  try {
    execFileSync('nats-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface NatsServer {
  proc: ChildProcess;
  url: string;
  log(): string;
  exited: Promise<void>;
  /** How it was started (a restart reuses them, with the client port it got). */
  opts: StartNatsOptions;
}

export interface StartNatsOptions {
  storeDir: string;
  /** For a cluster member: its name, its route port, and every member's route port. */
  cluster?: { name: string; port: number; routes: number[] };
  /** The client port (default: one the server picks). */
  port?: number;
  /** The HTTP monitoring port (/jsz), if any. */
  monitorPort?: number | undefined;
}

/** deploy/nats.conf, plus `server_tags: [<name>]` for a cluster member (written in its store directory, removed with it). */
function configFile(opts: StartNatsOptions): string {
  const deployed = join(ROOT, 'deploy', 'nats.conf');
  if (!opts.cluster) return deployed;
  mkdirSync(opts.storeDir, { recursive: true });
  const file = join(opts.storeDir, 'nats.conf');
  writeFileSync(
    file,
    `${readFileSync(deployed, 'utf8')}\nserver_tags: [${JSON.stringify(opts.cluster.name)}]\n`,
  );
  return file;
}

/** Starts nats-server with JetStream on 127.0.0.1 and a port it picks; resolves once it listens. */
export async function startNats(opts: StartNatsOptions): Promise<NatsServer> {
  // deploy/nats.conf, as deployed: pings every 2 s, so a silent peer (paused, cut off) is dropped
  // within seconds. A cluster member is also tagged with its name, so that a test can place a
  // stream on it (`placement: { tags: ['n1'] }`).
  const args = [
    '-c',
    configFile(opts),
    '-js',
    '-a',
    '127.0.0.1',
    '-p',
    String(opts.port ?? -1),
    '-sd',
    opts.storeDir,
  ];
  if (opts.monitorPort) args.push('-m', String(opts.monitorPort));
  if (opts.cluster) {
    const { name, port, routes } = opts.cluster;
    args.push('-n', name, '--cluster_name', 'fbtest', '--cluster', `nats://127.0.0.1:${port}`);
    args.push(
      '--routes',
      routes
        .filter((r) => r !== port)
        .map((r) => `nats://127.0.0.1:${r}`)
        .join(','),
    );
  }
  const proc = spawn('nats-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (log += d));
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (log += d));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const listening = (): number | null => {
    if (proc.exitCode !== null) throw new Error('nats-server exited');
    const m = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log);
    return m && /Server is ready/.test(log) ? Number(m[1]) : null;
  };
  try {
    const port = await until(listening, {
      what: 'nats-server to be ready',
      deadlineMs: 15_000,
      everyMs: 25,
    });
    return {
      proc,
      url: `nats://127.0.0.1:${port}`,
      log: () => log,
      exited,
      opts: { ...opts, port },
    };
  } catch {
    proc.kill('SIGKILL');
    throw new Error(`nats-server did not start:\n${log}`);
  }
}

/** Three JetStream servers routed to each other (replicas 3 possible); `monitor`: each with an HTTP monitoring port. */
export async function startNatsCluster(
  storeDir: (i: number) => string,
  monitor = false,
): Promise<NatsServer[]> {
  const ports = [await freePort(), await freePort(), await freePort()];
  const monitors = monitor ? [await freePort(), await freePort(), await freePort()] : [];
  return Promise.all(
    ports.map((port, i) =>
      startNats({
        storeDir: storeDir(i),
        cluster: { name: `n${i}`, port, routes: ports },
        monitorPort: monitors[i],
      }),
    ),
  );
}

/** Starts a stopped server again on the same client port and store (its clients reconnect to the same URL). */
export function restartNats(s: NatsServer): Promise<NatsServer> {
  return startNats(s.opts);
}

/** The JetStream meta leader's server name as `s` sees it (its monitoring /jsz), or null (none elected, or no answer). */
export async function metaLeader(s: NatsServer): Promise<string | null> {
  if (!s.opts.monitorPort) throw new Error('nats-server started without a monitoring port');
  try {
    const res = await fetch(`http://127.0.0.1:${s.opts.monitorPort}/jsz`, {
      signal: AbortSignal.timeout(2000),
    });
    const body = (await res.json()) as { meta_cluster?: { leader?: string } };
    return body.meta_cluster?.leader || null;
  } catch {
    return null;
  }
}

/** Waits until a replicated (R3) stream can be made and written through every server: the meta leader is elected. */
export async function waitJetStreamCluster(urls: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown = null;
  const writable = async (url: string): Promise<boolean> => {
    const nc = await connect({ servers: [url] });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2000 });
      await jsm.streams
        .add({ name: 'readiness', subjects: ['readiness'], num_replicas: 3 })
        .catch(() => undefined);
      await jetstream(nc, { timeout: 2000 }).publish('readiness', 'ok');
      return true;
    } catch (err) {
      lastErr = err;
      return false;
    } finally {
      await nc.close();
    }
  };
  for (const url of urls) {
    await until(() => writable(url), {
      what: () => `a replicated write through ${url}: ${String(lastErr)}`,
      deadlineMs: Math.max(1, deadline - Date.now()),
      everyMs: 250,
    });
  }
}

export async function stopNats(s: NatsServer | undefined): Promise<void> {
  if (!s || s.proc.exitCode !== null || s.proc.signalCode !== null) return;
  s.proc.kill('SIGKILL');
  await s.exited;
}

export interface StreamMessage {
  seq: number;
  node: string;
  kind: 'fence' | 'records';
  /** Memory ids of the `put` records in the message. */
  puts: string[];
  /** The message as stored. */
  data: Uint8Array;
}

/** Every message of a partition stream, in order (an empty list when the stream does not exist). */
/**
 * `readStream`, tried again until `deadlineMs` when NATS is not serving yet (right after a heal
 * its routes may still flap and a consumer get "no responders"): the audit reads what NATS holds,
 * once it answers.
 */
export async function readStreamWhenServed(
  servers: string[],
  stream: string,
  deadlineMs = 60_000,
): Promise<StreamMessage[]> {
  let lastErr: unknown = null;
  const read = (): Promise<StreamMessage[] | null> =>
    readStream(servers, stream).catch((err: unknown) => {
      lastErr = err;
      return null;
    });
  try {
    return await until(read, { what: `stream ${stream} read back`, deadlineMs, everyMs: 500 });
  } catch (err) {
    throw lastErr ?? err; // what NATS last said, not only that the wait ran out
  }
}

export async function readStream(servers: string[], stream: string): Promise<StreamMessage[]> {
  const nc = await connect({ servers });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream).catch(() => null);
    if (!info || info.state.messages === 0) return [];
    const last = info.state.last_seq;
    const js = jetstream(nc);
    const consumer = await js.consumers.get(stream, {
      opt_start_seq: info.state.first_seq,
      deliver_policy: DeliverPolicy.StartSequence,
    });
    const out: StreamMessage[] = [];
    while ((out[out.length - 1]?.seq ?? 0) < last) {
      const batch = await consumer.fetch({ max_messages: 256, expires: 3000 });
      let got = 0;
      for await (const m of batch) {
        got += 1;
        const e = decodeEntry(m.data);
        if ('fence' in e)
          out.push({ seq: m.seq, node: e.node, kind: 'fence', puts: [], data: m.data });
        else
          out.push({
            seq: m.seq,
            node: e.node,
            kind: 'records',
            puts: e.records.flatMap((r) => (r.t === 'put' ? [r.m.id] : [])),
            data: m.data,
          });
        if (m.seq >= last) break;
      }
      if (got === 0) throw new Error(`stream ${stream}: read stopped before sequence ${last}`);
    }
    await consumer.delete().catch(() => undefined);
    return out;
  } finally {
    await nc.close();
  }
}

/**
 * The fencing invariant: every batch of records in a partition stream was appended by the node
 * whose fence came last before it, i.e. no deposed owner ever appended after a takeover. A stream
 * trimmed below a snapshot may start after its owner's fence: its first writer stands in for it.
 */
export function appendsAfterFence(messages: readonly StreamMessage[]): string[] {
  const violations: string[] = [];
  let owner: string | null = messages[0]?.node ?? null;
  for (const m of messages) {
    if (m.kind === 'fence') owner = m.node;
    else if (m.node !== owner)
      violations.push(
        `seq ${m.seq}: records from ${m.node} while ${owner ?? 'nobody'} held the fence`,
      );
  }
  return violations;
}

/**
 * Sets up a one-partition cluster `name` whose partition 0 starts from a snapshot of `state`
 * (object store and pointer, as an owner's snapshot leaves them; an empty stream): a node that
 * joins takes it over. Returns the snapshot's size in bytes.
 */
export async function writePartitionSnapshot(
  url: string,
  name: string,
  state: ShardState,
): Promise<number> {
  const nc = await connect({ servers: [url] });
  try {
    const jsm = await jetstreamManager(nc);
    const meta = await new Kvm(nc).create(`${name}-meta`, { history: 1 });
    await meta.create('partitions', '1');
    const os = await new Objm(nc).create(`${name}-snapshots`);
    const store = new PartitionSnapshots(os, meta, jsm, `${name}-meta`);
    const data = store.encode(0, state, 0);
    await store.save(0, 0, data, () => Promise.resolve());
    return data.length;
  } finally {
    await nc.close();
  }
}
