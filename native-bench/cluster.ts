/**
 * Cluster cost and scaling (issue 16): write and recall latency through a cluster of Flashbulb
 * nodes on one nats-server (JetStream, replicas 1) versus the single process, and aggregate write
 * throughput with 1, 2 and 3 nodes on a many-workspace load (clients spread round-robin over the
 * nodes, so about (n-1)/n of the requests take a forwarding hop).
 *
 * Then a move: write load over every workspace through 2 nodes while a third joins; for each
 * partition that moves, the longest time without a successful write to it (the unavailable
 * window of the hand-over) and the retryable 503s it answered.
 *
 * Failover (`--failover N`): N rounds of kill -9 of one of three nodes under write load; per
 * partition it owned, the time from the kill until a write to it was acknowledged again, and how
 * long its takeover took (lease acquired → serving, from the new owner's log).
 *
 *   npm run build && node --import tsx native-bench/cluster.ts [--seconds 8] [--concurrency 16] [--move-only] [--failover 10]
 *
 * Needs nats-server on PATH. Hash embedder, auth off (the auth store is per node in cluster mode).
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { numberFlag } from './lib/args.ts';
import { runClosedLoop } from './lib/closed-loop.ts';
import { RestClient } from './lib/rest-client.ts';
import type { RunningServer } from './lib/server-process.ts';
import { summarize, type Summary } from './lib/stats.ts';
import { formatMarkdown } from './lib/table.ts';
import { shardFor } from '../src/router/shard-map.ts';
import { failover } from './cluster-failover.ts';
import { dirs, startNats, startNode, waitOwned, owners } from './lib/cluster-nodes.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    concurrency: { type: 'string' },
    'move-only': { type: 'boolean' },
    failover: { type: 'string' },
  },
});
const SECONDS = numberFlag(values, 'seconds', 8);
const CONCURRENCY = numberFlag(values, 'concurrency', 16);
const WORKSPACES = 64;
const PARTITIONS = 16;

interface Run {
  label: string;
  write: Summary;
  recall: Summary;
}

async function measure(label: string, nodes: RunningServer[]): Promise<Run> {
  const clients = nodes.map(
    (n) =>
      new RestClient({
        host: '127.0.0.1',
        port: n.port,
        apiKey: 'unused',
        maxSockets: CONCURRENCY,
      }),
  );
  let i = 0;
  const pick = (): { c: RestClient; ws: string; n: number } => {
    const n = i++;
    return { c: clients[n % clients.length] as RestClient, ws: `bench-${n % WORKSPACES}`, n };
  };
  // Every workspace gets a first write (and its partition an owner) before timing.
  for (let w = 0; w < WORKSPACES; w++) {
    const reply = await (clients[w % clients.length] as RestClient).post(
      `/v1/workspaces/bench-${w}/memories`,
      { content: `warm-up ${w}` },
    );
    if (reply.status !== 201 && reply.status !== 200)
      throw new Error(`${label}: warm-up write answered ${reply.status} ${reply.body.toString()}`);
  }
  const write = await runClosedLoop(
    async () => {
      const { c, ws, n } = pick();
      const r = await c.post(`/v1/workspaces/${ws}/memories`, {
        content: `measured write ${n}: herons${n % 97} wade the estuary at low tide`,
      });
      return r.status === 201 || r.status === 200;
    },
    { concurrency: CONCURRENCY, durationMs: SECONDS * 1000 },
  );
  const recall = await runClosedLoop(
    async () => {
      const { c, ws, n } = pick();
      const r = await c.post(`/v1/workspaces/${ws}/recall`, {
        cue: `herons${n % 97} estuary`,
        strategies: ['similarity'],
        top_k: 10,
      });
      return r.status === 200;
    },
    { concurrency: CONCURRENCY, durationMs: SECONDS * 1000 },
  );
  for (const c of clients) c.close();
  if (write.firstError || recall.firstError)
    console.error(`${label}: first error: ${write.firstError ?? recall.firstError}`);
  return {
    label,
    write: summarize(write.latenciesMs, write.errors, write.seconds),
    recall: summarize(recall.latenciesMs, recall.errors, recall.seconds),
  };
}

/** The forwarding hop alone: one client reading one memory through its owner, then through another node. */
async function hop(nodes: RunningServer[]): Promise<Array<[string, Summary]>> {
  const ws = 'hop-bench';
  const partition = shardFor(ws, PARTITIONS);
  const any = new RestClient({
    host: '127.0.0.1',
    port: (nodes[0] as RunningServer).port,
    apiKey: 'unused',
    maxSockets: 1,
  });
  const id = (
    JSON.parse(
      (
        await any.post(`/v1/workspaces/${ws}/memories`, { content: 'the hop under test' })
      ).body.toString(),
    ) as { memory_id: string }
  ).memory_id;
  const status = JSON.parse((await any.get('/v1/cluster')).body.toString()) as {
    nodes: Array<{ id: string; partitions: number[] }>;
  };
  any.close();
  const ownerId = status.nodes.find((n) => n.partitions.includes(partition))?.id;
  const owner = nodes.find((_, k) => `n${k}` === ownerId);
  const other = nodes.find((_, k) => `n${k}` !== ownerId);
  if (!owner || !other) throw new Error(`no owner found for partition ${partition}`);
  const out: Array<[string, Summary]> = [];
  for (const [label, node] of [
    ['through the owner', owner],
    ['through another node (one NATS request-reply hop)', other],
  ] as const) {
    const c = new RestClient({
      host: '127.0.0.1',
      port: node.port,
      apiKey: 'unused',
      maxSockets: 1,
    });
    const r = await runClosedLoop(
      async () => (await c.get(`/v1/workspaces/${ws}/memories/${id}`)).status === 200,
      { concurrency: 1, durationMs: SECONDS * 500 },
    );
    c.close();
    out.push([label, summarize(r.latenciesMs, r.errors, r.seconds)]);
  }
  return out;
}

/** Writes to every workspace through two nodes while a third joins; per partition, the longest gap between acknowledged writes. */
async function move(natsUrl: string): Promise<void> {
  const env = (k: number): Record<string, string> => ({
    FLASHBULB_NATS_URL: natsUrl,
    FLASHBULB_NODE_ID: `n${k}`,
    FLASHBULB_CLUSTER_NAME: 'benchmove',
    FLASHBULB_CLUSTER_PARTITIONS: String(PARTITIONS),
  });
  const nodes = [await startNode(env(0)), await startNode(env(1))];
  let joined: RunningServer | null = null;
  try {
    await waitOwned(nodes[0] as RunningServer, 2);
    const before = await owners(nodes[0] as RunningServer);
    const clients = nodes.map(
      (n) =>
        new RestClient({
          host: '127.0.0.1',
          port: n.port,
          apiKey: 'unused',
          maxSockets: CONCURRENCY,
        }),
    );
    const lastOk = new Map<number, number>();
    const maxGap = new Map<number, number>();
    const unavailable = new Map<number, number>();
    let other = 0;
    let i = 0;
    const seconds = Math.max(12, SECONDS);
    const load = runClosedLoop(
      async () => {
        const n = i++;
        const ws = `move-${n % WORKSPACES}`;
        const p = shardFor(ws, PARTITIONS);
        const r = await (clients[n % clients.length] as RestClient).post(
          `/v1/workspaces/${ws}/memories`,
          { content: `write ${n} during the move` },
        );
        const now = performance.now();
        if (r.status === 200 || r.status === 201) {
          const last = lastOk.get(p);
          if (last !== undefined) maxGap.set(p, Math.max(maxGap.get(p) ?? 0, now - last));
          lastOk.set(p, now);
          return true;
        }
        if (r.status === 503) unavailable.set(p, (unavailable.get(p) ?? 0) + 1);
        else other += 1;
        return false;
      },
      { concurrency: CONCURRENCY, durationMs: seconds * 1000 },
    );
    await new Promise((r) => setTimeout(r, 3000));
    joined = await startNode(env(2));
    const result = await load;
    for (const c of clients) c.close();
    await waitOwned(nodes[0] as RunningServer, 3);
    const after = await owners(nodes[0] as RunningServer);
    const moved = [...after]
      .filter(([p, o]) => before.get(p) !== o)
      .map(([p]) => p)
      .sort((a, b) => a - b);
    const stayed = [...after.keys()].filter((p) => !moved.includes(p));
    const gaps = (ps: number[]): number[] =>
      ps.map((p) => maxGap.get(p) ?? 0).sort((a, b) => a - b);
    const f = (x: number): string => (x / 1000).toFixed(2);
    const mg = gaps(moved);
    const sg = gaps(stayed);
    console.log(`
Move: ${CONCURRENCY} writers over ${WORKSPACES} workspaces through 2 nodes for ${seconds} s; a third node joins at 3 s. ${result.latenciesMs.length} writes acknowledged, ${[...unavailable.values()].reduce((a, b) => a + b, 0)} answered 503 (retryable), ${other} other errors.
`);
    console.log(
      formatMarkdown(
        [
          'partitions',
          'count',
          'longest gap without an acknowledged write, s: median',
          'max',
          '503s',
        ],
        [
          [
            'moved to the new node',
            moved.length,
            f(mg[Math.floor(mg.length / 2)] ?? 0),
            f(mg[mg.length - 1] ?? 0),
            moved.reduce((a, p) => a + (unavailable.get(p) ?? 0), 0),
          ],
          [
            'stayed',
            stayed.length,
            f(sg[Math.floor(sg.length / 2)] ?? 0),
            f(sg[sg.length - 1] ?? 0),
            stayed.reduce((a, p) => a + (unavailable.get(p) ?? 0), 0),
          ],
        ],
      ),
    );
  } finally {
    for (const n of [...nodes, ...(joined ? [joined] : [])]) await n.stop();
  }
}

async function main(): Promise<void> {
  if (values['failover']) {
    const nats = await startNats();
    try {
      await failover(nats.url, numberFlag(values, 'failover', 10), {
        startNode,
        waitOwned,
        owners,
        concurrency: CONCURRENCY,
        workspaces: WORKSPACES,
        partitions: PARTITIONS,
      });
    } finally {
      nats.stop();
    }
    return;
  }
  if (values['move-only']) {
    const nats = await startNats();
    try {
      await move(nats.url);
    } finally {
      nats.stop();
    }
    return;
  }
  const runs: Run[] = [];
  let hops: Array<[string, Summary]> = [];
  for (const durability of ['fsync', 'os'] as const) {
    const single = await startNode({ FLASHBULB_SHARDS: '2', FLASHBULB_DURABILITY: durability });
    runs.push(await measure(`single process (2 shards, durability ${durability})`, [single]));
    await single.stop();
  }
  const nats = await startNats();
  try {
    for (const size of [1, 2, 3]) {
      const name = `bench${size}`;
      const nodes: RunningServer[] = [];
      for (let k = 0; k < size; k++) {
        nodes.push(
          await startNode({
            FLASHBULB_NATS_URL: nats.url,
            FLASHBULB_NODE_ID: `n${k}`,
            FLASHBULB_CLUSTER_NAME: name,
            FLASHBULB_CLUSTER_PARTITIONS: String(PARTITIONS),
          }),
        );
      }
      await waitOwned(nodes[0] as RunningServer, size);
      runs.push(
        await measure(
          `cluster, ${size} node${size > 1 ? 's' : ''} (1 nats-server, replicas 1)`,
          nodes,
        ),
      );
      if (size === 3) hops = await hop(nodes);
      for (const n of nodes) await n.stop();
    }
    await move(nats.url);
  } finally {
    nats.stop();
  }
  const f = (x: number): string => x.toFixed(2);
  console.log(
    `\n${SECONDS} s per phase, ${CONCURRENCY} concurrent clients, ${WORKSPACES} workspaces, hash embedder; cluster: ${PARTITIONS} partitions\n`,
  );
  console.log(
    formatMarkdown(
      [
        'setup',
        'write/s',
        'write p50 ms',
        'write p99 ms',
        'recall/s',
        'recall p50 ms',
        'recall p99 ms',
        'errors',
      ],
      runs.map((r) => [
        r.label,
        Math.round(r.write.opsPerS),
        f(r.write.p50Ms),
        f(r.write.p99Ms),
        Math.round(r.recall.opsPerS),
        f(r.recall.p50Ms),
        f(r.recall.p99Ms),
        r.write.errors + r.recall.errors,
      ]),
    ),
  );
  console.log(`\nGET one memory, one client, 3-node cluster:\n`);
  console.log(
    formatMarkdown(
      ['path', 'reads/s', 'p50 ms', 'p99 ms'],
      hops.map(([label, s]) => [label, Math.round(s.opsPerS), f(s.p50Ms), f(s.p99Ms)]),
    ),
  );
}

try {
  await main();
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
