/**
 * Network namespaces on one machine, for the partition test: each NATS server and each Flashbulb
 * node gets a namespace of its own. Every namespace has a veth whose other end is a port of the
 * cluster bridge in the root namespace (10.231.0.0/24 in slot 0; the root namespace is 10.231.0.1 there, so
 * the test can reach every NATS server). A node also has a point-to-point client link to the root
 * namespace (10.232.i.0/30 in slot 0), which a partition never cuts: the test's clients reach both sides.
 *
 * A partition moves the cut members' bridge ports to a second bridge: they still reach each other,
 * nothing on the first bridge, and nothing reaches them but the test's clients. Healing moves them
 * back. Every name starts with PREFIX; `removeLeftovers` deletes what an earlier run left.
 * FLASHBULB_NETNS_SLOT (0–9, default 0) picks another set of names and subnets, so that a
 * benchmark can run beside the test suite on one machine (slot 1: `fbq…`, 10.233/10.234, …).
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ChildServer, Exit } from './child.ts';
import { CLI, ROOT } from './child.ts';
import { until } from './wait.ts';

const SLOT = slotFromEnv(process.env['FLASHBULB_NETNS_SLOT']);
/** `fbp` in slot 0; the first three letters of every root-namespace interface name. */
const LINK = `fb${'pqrstuvwxy'[SLOT] ?? 'p'}`;
export const PREFIX = `${LINK}art`;
/** Root-namespace interface names (at most 15 characters). */
const BRIDGE = `${LINK}br0`;
const CUT_BRIDGE = `${LINK}br1`;
/** Second octet of the cluster bridge's subnet; the client links use the next one. */
const NET = 231 + 2 * SLOT;

function slotFromEnv(v: string | undefined): number {
  if (v === undefined || v === '') return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 9)
    throw new Error(`FLASHBULB_NETNS_SLOT must be an integer 0–9, got '${v}'`);
  return n;
}

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Null when namespaces work here; otherwise why not (not root, `ip` missing, `ip netns add` refused). */
export function netnsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not running as root';
  const probe = `${PREFIX}-probe-${process.pid}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return null;
  } catch (err) {
    return `\`ip netns add\` failed: ${(err as Error).message.split('\n')[0] ?? ''}`;
  }
}

/** Deletes every namespace and root-namespace link with the prefix (an earlier run that died). */
export function removeLeftovers(): void {
  for (const line of ip('netns', 'list').split('\n')) {
    const name = line.split(' ')[0] ?? '';
    if (name.startsWith(`${PREFIX}-`)) ip('netns', 'del', name);
  }
  for (const line of ip('-o', 'link', 'show').split('\n')) {
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1];
    if (name?.startsWith(LINK)) {
      try {
        ip('link', 'del', name);
      } catch {
        /* a veth end already gone with its namespace */
      }
    }
  }
}

export interface Member {
  /** Index: NATS servers and nodes are numbered apart (`nats0`, `node0`…). */
  name: string;
  ns: string;
  /** Its address on the cluster bridge. */
  clusterIp: string;
  /** Its address on the client link (nodes only). */
  clientIp?: string;
  /** The root-namespace end of its bridge veth. */
  port: string;
}

export interface Net {
  members: Map<string, Member>;
  /** Cuts these members off the rest (they keep reaching each other and the test's clients). */
  partition(names: readonly string[]): void;
  heal(): void;
  destroy(): void;
}

/** Makes the bridges, and one namespace per name (`clientLink`: also a client link to it). */
export function createNet(names: ReadonlyArray<{ name: string; clientLink: boolean }>): Net {
  removeLeftovers();
  ip('link', 'add', BRIDGE, 'type', 'bridge');
  ip('addr', 'add', `10.${NET}.0.1/24`, 'dev', BRIDGE);
  ip('link', 'set', BRIDGE, 'up');
  ip('link', 'add', CUT_BRIDGE, 'type', 'bridge');
  ip('link', 'set', CUT_BRIDGE, 'up');
  const members = new Map<string, Member>();
  names.forEach(({ name, clientLink }, i) => {
    const ns = `${PREFIX}-${name}`;
    const port = `${LINK}v${i}`;
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('link', 'add', port, 'type', 'veth', 'peer', 'name', `${LINK}i${i}`);
    ip('link', 'set', `${LINK}i${i}`, 'netns', ns);
    ip('-n', ns, 'link', 'set', `${LINK}i${i}`, 'name', 'cluster0');
    const clusterIp = `10.${NET}.0.${10 + i}`;
    ip('-n', ns, 'addr', 'add', `${clusterIp}/24`, 'dev', 'cluster0');
    ip('-n', ns, 'link', 'set', 'cluster0', 'up');
    ip('link', 'set', port, 'master', BRIDGE);
    ip('link', 'set', port, 'up');
    const m: Member = { name, ns, clusterIp, port };
    if (clientLink) {
      const host = `${LINK}c${i}`;
      ip('link', 'add', host, 'type', 'veth', 'peer', 'name', `${LINK}d${i}`);
      ip('link', 'set', `${LINK}d${i}`, 'netns', ns);
      ip('-n', ns, 'link', 'set', `${LINK}d${i}`, 'name', 'client0');
      ip('addr', 'add', `10.${NET + 1}.${i}.1/30`, 'dev', host);
      ip('link', 'set', host, 'up');
      ip('-n', ns, 'addr', 'add', `10.${NET + 1}.${i}.2/30`, 'dev', 'client0');
      ip('-n', ns, 'link', 'set', 'client0', 'up');
      m.clientIp = `10.${NET + 1}.${i}.2`;
    }
    members.set(name, m);
  });
  const move = (names: readonly string[], bridge: string): void => {
    for (const n of names) ip('link', 'set', (members.get(n) as Member).port, 'master', bridge);
  };
  let cut: readonly string[] = [];
  return {
    members,
    partition(names) {
      move(names, CUT_BRIDGE);
      cut = names;
    },
    heal() {
      move(cut, BRIDGE);
      cut = [];
    },
    destroy: removeLeftovers,
  };
}

/** A process in a namespace (`ip netns exec` execs it: the pid is the program's own). */
export function spawnIn(
  ns: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): ChildServer['proc'] {
  return spawn('ip', ['netns', 'exec', ns, cmd, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The deployment's nats-server settings (pings that drop a silent peer within seconds). */
const NATS_CONF = join(ROOT, 'deploy', 'nats.conf');

/** nats-server (JetStream, cluster member) in its namespace, with deploy/nats.conf; resolves once it is ready. */
export async function startNatsIn(
  m: Member,
  storeDir: string,
  routes: readonly string[],
): Promise<{ proc: ChildServer['proc']; url: string; log: () => string }> {
  const args = [
    '-c',
    NATS_CONF,
    '-js',
    '-a',
    m.clusterIp,
    '-p',
    '4222',
    '-sd',
    storeDir,
    '-n',
    m.name,
    '--cluster_name',
    'fbpart',
    '--cluster',
    `nats://${m.clusterIp}:6222`,
  ];
  args.push(
    '--routes',
    routes
      .filter((r) => r !== m.clusterIp)
      .map((r) => `nats://${r}:6222`)
      .join(','),
  );
  const proc = spawnIn(m.ns, 'nats-server', args, process.env);
  let log = '';
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (log += d));
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (log += d));
  const ready = (): boolean => {
    if (proc.exitCode !== null) throw new Error('nats-server exited');
    return /Server is ready/.test(log);
  };
  await until(ready, {
    what: `nats-server in ${m.ns} to be ready`,
    deadlineMs: 15_000,
    everyMs: 25,
  }).catch(() => {
    proc.kill('SIGKILL');
    throw new Error(`nats-server in ${m.ns} did not start:\n${log}`);
  });
  return { proc, url: `nats://${m.clusterIp}:4222`, log: () => log };
}

/** `node dist/cli.js serve` in the member's namespace, listening on its client link (port 6381). */
export function spawnNodeIn(m: Member, env: Record<string, string>): ChildServer {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('FLASHBULB_') && v !== undefined) base[k] = v;
  Object.assign(base, {
    FLASHBULB_EMBEDDER: 'hash',
    FLASHBULB_AUTH_ENABLED: 'false',
    FLASHBULB_BIND: '0.0.0.0',
    FLASHBULB_HTTP_PORT: '6381',
    FLASHBULB_GRPC_PORT: '0',
    FLASHBULB_SHARDS: '2',
    ...env,
  });
  const proc = spawnIn(m.ns, process.execPath, [CLI, 'serve'], base);
  let err = '';
  let out = '';
  // Each line of the node's log is stamped with the time it arrived, to line it up with the
  // nats-servers' logs and the cuts.
  proc.stderr
    ?.setEncoding('utf8')
    .on('data', (d: string) => (err += stampLines(d, err.length === 0 || err.endsWith('\n'))));
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<Exit>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    port: 6381,
    base: `http://${m.clientIp ?? m.clusterIp}:6381`,
    stderr: () => err,
    stdout: () => out,
    exited,
  };
}

/** `text` with the time of day before each line that starts in it. */
function stampLines(text: string, atLineStart: boolean): string {
  const stamp = `${new Date().toISOString().slice(11, 23)} `;
  const body = text.replace(/\n(?=.)/g, `\n${stamp}`);
  return atLineStart ? stamp + body : body;
}
