/**
 * The failover mode of native-bench/cluster.ts (`--failover N`): three nodes on one nats-server
 * (replicas 1), default lease unless FLASHBULB_CLUSTER_LEASE_MS is set, closed-loop writers over
 * every workspace through the running nodes. Each round kills one node with SIGKILL at a random
 * moment of its renewal period; for each partition it owned: kill → the next acknowledged write
 * to it ("served again"), and from the new owner's log how long its takeover took (lease taken →
 * serving). The rest is the lease running out plus the moment another node notices.
 */
import { runClosedLoop } from './lib/closed-loop.ts';
import { RestClient } from './lib/rest-client.ts';
import type { RunningServer } from './lib/server-process.ts';
import { formatMarkdown } from './lib/table.ts';
import { shardFor } from '../src/router/shard-map.ts';

export interface FailoverDeps {
  startNode: (env: Record<string, string>) => Promise<RunningServer>;
  waitOwned: (node: RunningServer, owners: number) => Promise<void>;
  owners: (node: RunningServer) => Promise<Map<number, string>>;
  concurrency: number;
  workspaces: number;
  partitions: number;
}

interface Sample {
  servedMs: number;
  takeoverMs: number;
}

export async function failover(natsUrl: string, rounds: number, d: FailoverDeps): Promise<void> {
  const lease = Number(process.env['FLASHBULB_CLUSTER_LEASE_MS'] ?? 3500); // the server's default
  const env = (k: number): Record<string, string> => ({
    FLASHBULB_NATS_URL: natsUrl,
    FLASHBULB_NODE_ID: `n${k}`,
    FLASHBULB_CLUSTER_NAME: 'benchfail',
    FLASHBULB_CLUSTER_PARTITIONS: String(d.partitions),
    FLASHBULB_CLUSTER_LEASE_MS: String(lease),
  });
  const nodes: Array<RunningServer | null> = [
    await d.startNode(env(0)),
    await d.startNode(env(1)),
    await d.startNode(env(2)),
  ];
  const samples: Sample[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const live = nodes.filter((n): n is RunningServer => n !== null);
      await d.waitOwned(live[0] as RunningServer, 3);
      const owners = await d.owners(live[0] as RunningServer);
      const victimIdx = round % 3;
      const victim = nodes[victimIdx] as RunningServer;
      const ofVictim = [...owners].filter(([, o]) => o === `n${victimIdx}`).map(([p]) => p);
      const survivors = live.filter((n) => n !== victim);
      const logFrom = survivors.map((n) => n.log.length);
      const servedAt = new Map<number, number>();
      /** After the kill, the last answer other than success per partition (status and body). */
      const answers = new Map<number, string>();
      let killedAt = Infinity;
      const clients = survivors.map(
        (n) =>
          new RestClient({
            host: '127.0.0.1',
            port: n.port,
            apiKey: 'unused',
            maxSockets: d.concurrency,
          }),
      );
      let i = 0;
      const load = runClosedLoop(
        async () => {
          const n = i++;
          const ws = `fail-${n % d.workspaces}`;
          const p = shardFor(ws, d.partitions);
          const r = await (clients[n % clients.length] as RestClient).post(
            `/v1/workspaces/${ws}/memories`,
            { content: `write ${n} across a failover` },
          );
          const ok = r.status === 200 || r.status === 201;
          if (ok && performance.now() > killedAt && !servedAt.has(p))
            servedAt.set(p, performance.now());
          if (!ok && performance.now() > killedAt)
            answers.set(p, `${r.status} ${r.body.toString().slice(0, 160)}`);
          return ok;
        },
        { concurrency: d.concurrency, durationMs: 2000 + 3 * lease },
      );
      // A random moment within the renewal period (renewals every third of a lease).
      await new Promise((r) => setTimeout(r, 1000 + Math.random() * (lease / 3)));
      killedAt = performance.now();
      await victim.kill();
      nodes[victimIdx] = null;
      await load;
      for (const c of clients) c.close();
      const logged = survivors.flatMap((n, k) => n.log.slice(logFrom[k]));
      const took = takeovers(logged);
      for (const p of ofVictim) {
        const at = servedAt.get(p);
        samples.push({
          servedMs: at === undefined ? Infinity : at - killedAt,
          takeoverMs: took.get(p) ?? NaN,
        });
      }
      console.log(
        `round ${round}: n${victimIdx} killed, its partitions ${ofVictim.join(',')} served again after ${ofVictim.map((p) => ((servedAt.get(p) ?? Infinity) - killedAt).toFixed(0)).join(', ')} ms`,
      );
      // Each takeover's own account of its time (stream, snapshot, replay, fence).
      for (const l of logged) if (/owned by/.test(l)) console.log(`  ${l.trim()}`);
      const unserved = ofVictim.filter((p) => !servedAt.has(p));
      if (unserved.length > 0) {
        const about = new RegExp(`partition (${unserved.join('|')})\\b`);
        console.log(
          `  not served: ${unserved.map((p) => `${p} (last answer: ${answers.get(p) ?? 'none'})`).join(', ')}; the survivors logged:\n${survivors
            .flatMap((n, k) =>
              n.log
                .slice(logFrom[k])
                .filter((l) => about.test(l) || !/partition \d/.test(l))
                .slice(-15)
                .map((l) => `    ${l}`),
            )
            .join('\n')}`,
        );
      }
      nodes[victimIdx] = await d.startNode(env(victimIdx));
    }
  } finally {
    for (const n of nodes) await n?.stop();
  }
  const served = samples.map((s) => s.servedMs).sort((a, b) => a - b);
  const takeover = samples
    .map((s) => s.takeoverMs)
    .filter((x) => Number.isFinite(x))
    .sort((a, b) => a - b);
  const rest = samples
    .filter((s) => Number.isFinite(s.takeoverMs) && Number.isFinite(s.servedMs))
    .map((s) => s.servedMs - s.takeoverMs)
    .sort((a, b) => a - b);
  const q = (xs: number[], f: number): string =>
    xs.length === 0
      ? '–'
      : (xs[Math.min(xs.length - 1, Math.floor(f * xs.length))] as number).toFixed(0);
  console.log(
    `\nFailover: ${rounds} rounds, lease ${lease} ms, ${samples.length} partitions taken over; ${d.concurrency} writers over ${d.workspaces} workspaces\n`,
  );
  console.log(
    formatMarkdown(
      ['ms', 'p50', 'p90', 'p99', 'max'],
      [
        ['kill → served again', q(served, 0.5), q(served, 0.9), q(served, 0.99), q(served, 1)],
        [
          '  takeover (lease taken → serving)',
          q(takeover, 0.5),
          q(takeover, 0.9),
          q(takeover, 0.99),
          q(takeover, 1),
        ],
        [
          '  the rest (lease running out, noticed, first write)',
          q(rest, 0.5),
          q(rest, 0.9),
          q(rest, 0.99),
          q(rest, 1),
        ],
      ],
    ),
  );
}

/** Partition → recovery milliseconds, from "partition N owned by X: … in M ms" log lines. */
function takeovers(lines: readonly string[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const l of lines) {
    const m = /partition (\d+) owned by \S+: .* in (\d+) ms/.exec(l);
    if (m) out.set(Number(m[1]), Number(m[2]));
  }
  return out;
}
