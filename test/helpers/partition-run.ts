/**
 * Issue 23 item 4: a real network partition. Three nats-servers and three Flashbulb nodes, each in
 * its own network namespace (netns.ts). One writer per key revises its memory through every node
 * in turn (v1, v2…) and readers read random keys through random nodes, recording every operation
 * (call and return times, value; a timeout or 5xx write as unknown). A partition owner and its
 * local nats-server are cut off from the majority while clients go on through both sides, until
 * the majority has taken the owner's partitions and acknowledged more writes; then the network
 * heals, and every key is read through every node. Used by test/integration/cluster-partition.test.ts
 * (one partition) and native-bench/cluster-partition.ts (as many as asked).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shardFor } from '../../src/router/shard-map.ts';
import { killQuietly, waitReady, type ChildServer } from './child.ts';
import { now, type Op } from './linearizability.ts';
import {
  appendsAfterFence,
  clusterNodeEnv,
  readStreamWhenServed,
  waitJetStreamCluster,
} from './nats.ts';
import { createNet, spawnNodeIn, startNatsIn, type Net } from './netns.ts';
import { sleep, until } from './wait.ts';

/** How long the majority (and, after the heal, everyone) gets to own every partition. */
const MAJORITY_WAIT_MS = 150_000;

export interface PartitionRunOptions {
  /** How many partition/heal cycles. */
  cycles: number;
  leaseMs: number;
  partitions: number;
  keys: number;
  readers: number;
  /** Temporary directories made here are added to it (the caller removes them). */
  dirs: string[];
  log: (line: string) => void;
}

export interface PartitionRunReport {
  history: Op[];
  /** Key → the value read through each node at the end. */
  finals: Map<string, Array<{ via: string; value: string }>>;
  /** Stream appends by a node after another node's fence. */
  violations: string[];
  /** Writes acknowledged through the cut-off node while it was cut off. */
  ackedByCutOff: number;
  /** Per cycle: ms from the cut until the majority owned every partition again, and until 20 more writes were acknowledged. */
  /** Per cut: when the majority owned every partition and had 20 more writes (null: not within the wait). */
  cycles: Array<{ cut: string; takeoverMs: number | null; writesMs: number | null }>;
}

interface Node {
  id: string;
  child: ChildServer;
}

const NAME = 'partition';
const REQUEST_TIMEOUT_MS = 4000;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<Answer | null> {
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { text };
    }
    return { status: res.status, body: parsed as Record<string, unknown> };
  } catch {
    return null; // timed out or refused: the outcome is unknown
  }
}

const ok = (a: Answer | null): boolean => a !== null && a.status >= 200 && a.status < 300;
/** No answer or a 5xx: the write may or may not have happened. A 4xx is a refusal. */
const unknownOutcome = (a: Answer | null): boolean => a === null || a.status >= 500;

interface PartitionRow {
  partition: number;
  owner: string | null;
  status: string;
}

async function owners(nodes: readonly Node[]): Promise<PartitionRow[] | null> {
  for (const n of nodes) {
    // The status asks NATS about every partition stream: slow while streams elect leaders.
    const res = await request(n.child.base, 'GET', '/v1/cluster', undefined, 20_000);
    if (res?.status === 200) return res.body['partition_owners'] as PartitionRow[];
  }
  return null;
}

/** How the run waits: a cut makes checks throw (a node unreachable). */
const CUTS = { everyMs: 100, retryErrors: true } as const;

/** Every partition has a ready owner among `ids`, as `asked` sees it. */
async function settled(
  asked: readonly Node[],
  ids: readonly string[],
  partitions: number,
  timeoutMs: number,
): Promise<void> {
  let last: PartitionRow[] | null = null;
  await until(
    async () => {
      last = await owners(asked);
      return (
        last !== null &&
        last.length === partitions &&
        last.every((p) => p.owner !== null && ids.includes(p.owner) && p.status === 'ready')
      );
    },
    {
      ...CUTS,
      deadlineMs: timeoutMs,
      what: () =>
        `every partition to have a ready owner among ${ids.join(',')}: ${JSON.stringify(last)}`,
    },
  );
}

export async function runPartitions(o: PartitionRunOptions): Promise<PartitionRunReport> {
  const temp = (prefix: string): string => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    o.dirs.push(d);
    return d;
  };
  const ids = ['a', 'b', 'c'];
  const net: Net = createNet([
    ...ids.map((id) => ({ name: `nats-${id}`, clientLink: false })),
    ...ids.map((id) => ({ name: `node-${id}`, clientLink: true })),
  ]);
  const member = (name: string): NonNullable<ReturnType<Net['members']['get']>> =>
    net.members.get(name) as NonNullable<ReturnType<Net['members']['get']>>;
  const natsIps = ids.map((id) => member(`nats-${id}`).clusterIp);
  const procs: ChildServer['proc'][] = [];
  const nodes: Node[] = [];
  const history: Op[] = [];
  let running = true;
  let loops: Promise<void>[] = [];
  const natsLogs: Array<() => string> = [];
  try {
    const nats = await Promise.all(
      ids.map((id) => startNatsIn(member(`nats-${id}`), temp(`fb-part-nats-${id}-`), natsIps)),
    );
    for (const s of nats) {
      procs.push(s.proc);
      natsLogs.push(s.log);
    }
    const urls = nats.map((s) => s.url);
    await waitJetStreamCluster(urls, 60_000);
    for (const id of ids) {
      const child = spawnNodeIn(member(`node-${id}`), {
        FLASHBULB_DATA_DIR: temp(`fb-part-${id}-`),
        ...clusterNodeEnv({
          urls,
          id,
          name: NAME,
          partitions: o.partitions,
          leaseMs: o.leaseMs,
          snapshotIntervalS: 2,
        }),
      });
      nodes.push({ id, child });
      procs.push(child.proc);
      await waitReady(child, 60_000);
    }
    await settled(nodes, ids, o.partitions, 60_000);

    // A key is a memory, written by one writer: created (v0), then revised (v1, v2…). A write whose
    // outcome is unknown retires its key (it stays in the readers' set): with at most one write in
    // doubt per key, Porcupine's search stays small. The writer goes on with a new key.
    const workspaces = Array.from({ length: o.keys }, (_, i) => `part-${i}`);
    type Key = { ws: string; id: string; key: string; version: number };
    const keys: Key[] = [];
    let acked = 0;
    let cutOff: string | null = null;
    let ackedByCutOff = 0;
    let turn = 0;
    const write = async (
      client: number,
      path: string,
      method: string,
      key: (id: string) => string,
      value: string,
    ): Promise<Answer | null> => {
      const node = nodes[turn++ % nodes.length] as Node;
      const call = now();
      const res = await request(node.child.base, method, path, { content: value });
      const ret = now();
      if (ok(res)) {
        acked += 1;
        if (node.id === cutOff) ackedByCutOff += 1;
      }
      // An unknown create names no key: nobody can read it, so it is left out.
      const id =
        method === 'POST'
          ? ok(res)
            ? String(res?.body['memory_id'])
            : null
          : path.slice(path.lastIndexOf('/') + 1);
      if (id !== null && (ok(res) || unknownOutcome(res)))
        history.push({
          client,
          op: 'write',
          key: key(id),
          value,
          call,
          ret,
          unknown: !ok(res),
          via: node.id,
        });
      return res;
    };
    const create = async (client: number): Promise<Key | null> => {
      const ws = workspaces[client % workspaces.length] as string;
      for (;;) {
        const res = await write(
          client,
          `/v1/workspaces/${ws}/memories`,
          'POST',
          (id) => `${ws}/${id.slice(0, 12)}`,
          'v0',
        );
        if (ok(res)) {
          const id = String(res?.body['memory_id']);
          const k = { ws, id, key: `${ws}/${id.slice(0, 12)}`, version: 0 };
          keys.push(k);
          return k;
        }
        if (!running) return null;
        await sleep(100);
      }
    };
    const writer = async (client: number): Promise<void> => {
      let k = await create(client);
      while (running && k) {
        const value = `v${++k.version}`;
        const key = k.key;
        const res = await write(
          client,
          `/v1/workspaces/${k.ws}/revise/${k.id}`,
          'PUT',
          () => key,
          value,
        );
        if (ok(res)) continue;
        await sleep(100);
        if (unknownOutcome(res)) k = await create(client);
      }
    };
    const writers = Array.from({ length: o.keys }, (_, i) => writer(i));
    const reader = async (r: number): Promise<void> => {
      let n = r;
      while (running) {
        const k = keys[(n * 7 + r) % keys.length];
        if (!k) {
          await until(() => !running || keys.length > 0, {
            what: 'a first acknowledged key to read',
            deadlineMs: 120_000,
          });
          continue;
        }
        const node = nodes[n++ % nodes.length] as Node;
        const call = now();
        const res = await request(
          node.child.base,
          'GET',
          `/v1/workspaces/${k.ws}/memories/${k.id}`,
        );
        const ret = now();
        if (res?.status === 200)
          history.push({
            client: o.keys + r,
            op: 'read',
            key: k.key,
            value: String(res.body['content']),
            call,
            ret,
            unknown: false,
            via: node.id,
          });
        else await sleep(100);
      }
    };
    loops = [...writers, ...Array.from({ length: o.readers }, (_, r) => reader(r))];
    const moreWrites = async (count: number, what: string): Promise<void> => {
      const from = acked;
      await until(async () => acked >= from + count, {
        ...CUTS,
        deadlineMs: 60_000,
        what: `${count} acknowledged writes ${what}`,
      });
    };
    await moreWrites(20, 'before the first partition');

    const cycles: PartitionRunReport['cycles'] = [];
    for (let c = 0; c < o.cycles; c++) {
      // The cut: a node that owns partitions, with its local nats-server.
      const rows = (await owners(nodes)) ?? [];
      const victim = nodes[c % nodes.length] as Node;
      const owner = rows.some((p) => p.owner === victim.id)
        ? victim
        : (nodes.find((n) => rows.some((p) => p.owner === n.id)) as Node);
      const majority = nodes.filter((n) => n !== owner);
      const cutAt = Date.now();
      net.partition([`node-${owner.id}`, `nats-${owner.id}`]);
      cutOff = owner.id;
      o.log(
        `cycle ${c}: cut node ${owner.id} and nats-${owner.id} (owner of ${rows
          .filter((p) => p.owner === owner.id)
          .map((p) => p.partition)
          .join(',')}) off`,
      );
      // Liveness under the cut is NATS's as much as ours (on a loaded machine nats-server 2.12.1's
      // majority once answered no JetStream request for 90 s): a majority that has not taken every
      // partition within the window is reported, and the history is checked all the same.
      let takeoverMs: number | null = null;
      let writesMs: number | null = null;
      try {
        await settled(
          majority,
          majority.map((n) => n.id),
          o.partitions,
          MAJORITY_WAIT_MS,
        );
        takeoverMs = Date.now() - cutAt;
        await moreWrites(20, `on the majority side while ${owner.id} is cut off`);
        writesMs = Date.now() - cutAt;
        o.log(
          `cycle ${c}: the majority owns every partition after ${takeoverMs} ms; 20 more writes after ${writesMs} ms`,
        );
      } catch (err) {
        o.log(
          `cycle ${c}: LIVENESS: ${err instanceof Error ? err.message : String(err)}; healing and checking the history all the same`,
        );
      }
      net.heal();
      cutOff = null;
      await settled(nodes, ids, o.partitions, MAJORITY_WAIT_MS);
      await moreWrites(20, `after healing (cycle ${c})`);
      cycles.push({ cut: owner.id, takeoverMs, writesMs });
    }
    running = false;
    await Promise.all(loops);

    // Every key read through every node: the final reads join the history (after every write).
    const finals = new Map<string, Array<{ via: string; value: string }>>();
    for (const k of keys) {
      for (const n of nodes) {
        let res: Answer | null = null;
        const call = now();
        await until(
          async () =>
            (res = await request(n.child.base, 'GET', `/v1/workspaces/${k.ws}/memories/${k.id}`))
              ?.status !== 503 && res !== null,
          { ...CUTS, deadlineMs: 30_000, what: `a read of ${k.key} through ${n.id}` },
        );
        const a = res as Answer | null;
        const value = a?.status === 200 ? String(a.body['content']) : '';
        history.push({
          client: o.keys + o.readers,
          op: 'read',
          key: k.key,
          value,
          call,
          ret: now(),
          unknown: false,
          via: n.id,
        });
        finals.set(k.key, [...(finals.get(k.key) ?? []), { via: n.id, value }]);
      }
    }
    const violations: string[] = [];
    const used = new Set(workspaces.map((ws) => shardFor(ws, o.partitions)));
    for (const p of used)
      violations.push(
        ...appendsAfterFence(await readStreamWhenServed(urls, `${NAME}_p${p}`)).map(
          (v) => `partition ${p}: ${v}`,
        ),
      );
    return { history, finals, violations, ackedByCutOff, cycles };
  } catch (err) {
    // The history so far is kept: the failure message names where.
    const keep = mkdtempSync(join(tmpdir(), 'fb-partition-history-'));
    writeFileSync(join(keep, 'history.json'), JSON.stringify(history));
    if (err instanceof Error)
      err.message += ` (the history so far is kept in ${keep}/history.json)`;
    for (const n of nodes)
      o.log(`node ${n.id} log (end):\n${n.child.stderr().split('\n').slice(-30).join('\n')}`);
    natsLogs.forEach((log, i) => {
      o.log(`nats-${ids[i] ?? i} log (end):\n${log().split('\n').slice(-15).join('\n')}`);
    });
    throw err;
  } finally {
    // FLASHBULB_FAULT_LOG_DIR: every node's and nats-server's whole log, for reading a run afterwards.
    const logDir = process.env['FLASHBULB_FAULT_LOG_DIR'];
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      for (const n of nodes) writeFileSync(join(logDir, `node-${n.id}.log`), n.child.stderr());
      natsLogs.forEach((log, i) => {
        writeFileSync(join(logDir, `nats-${ids[i] ?? i}.log`), log());
      });
    }
    running = false;
    await Promise.all(loops);
    await Promise.all(nodes.map((n) => killQuietly(n.child)));
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await Promise.all(
      procs.map((p) =>
        p.exitCode !== null || p.signalCode !== null
          ? undefined
          : new Promise((r) => p.once('exit', r)),
      ),
    );
    net.destroy();
  }
}
