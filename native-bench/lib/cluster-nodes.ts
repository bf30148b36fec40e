/**
 * @module native-bench/lib/cluster-nodes — the processes of the cluster benchmarks: a NATS server
 * with JetStream and Flashbulb nodes joined to it (each on a temporary directory, removed at the
 * end), and waiting until partitions have owners.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestClient } from './rest-client.ts';
import { freePort, startServer, type RunningServer } from './server-process.ts';

export const dirs: string[] = [];

function temp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

export async function startNats(): Promise<{ url: string; stop: () => void }> {
  const proc = spawn(
    'nats-server',
    ['-js', '-a', '127.0.0.1', '-p', '-1', '-sd', temp('bench-nats-')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (log += d));
  for (let i = 0; i < 400; i++) {
    const m = /client connections on 127\.0\.0\.1:(\d+)/.exec(log);
    if (m && /Server is ready/.test(log))
      return { url: `nats://127.0.0.1:${m[1]}`, stop: () => proc.kill('SIGKILL') };
    await new Promise((r) => setTimeout(r, 25));
  }
  proc.kill('SIGKILL');
  throw new Error(`nats-server did not start (is it installed?):\n${log}`);
}

export async function startNode(env: Record<string, string>): Promise<RunningServer> {
  return startServer({
    dataDir: temp('bench-node-'),
    port: await freePort(),
    apiKey: 'unused',
    env: {
      FLASHBULB_AUTH_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
      FLASHBULB_REFLECT_ENABLED: 'false',
      ...env,
    },
  });
}

export async function waitOwned(node: RunningServer, owners: number): Promise<void> {
  const c = new RestClient({ host: '127.0.0.1', port: node.port, apiKey: 'unused', maxSockets: 1 });
  try {
    for (let i = 0; i < 300; i++) {
      const r = await c.get('/v1/cluster');
      const body = JSON.parse(r.body.toString()) as {
        partition_owners: Array<{ owner: string | null; status: string }>;
      };
      const ownersSeen = new Set(body.partition_owners.map((p) => p.owner));
      if (
        body.partition_owners.every((p) => p.owner !== null && p.status === 'ready') &&
        ownersSeen.size === owners
      )
        return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('partitions did not settle');
  } finally {
    c.close();
  }
}

interface Ownership {
  nodes: Array<{ id: string; partitions: number[] }>;
}

export async function owners(node: RunningServer): Promise<Map<number, string>> {
  const c = new RestClient({ host: '127.0.0.1', port: node.port, apiKey: 'unused', maxSockets: 1 });
  try {
    const body = JSON.parse((await c.get('/v1/cluster')).body.toString()) as Ownership;
    return new Map(body.nodes.flatMap((n) => n.partitions.map((p) => [p, n.id] as const)));
  } finally {
    c.close();
  }
}
