/**
 * The fault sequence of issue 23 (item 0) against a real cluster on loopback: three nats-servers
 * (JetStream, replicas 3) and three Flashbulb nodes under write load through every node. Each
 * round: kill -9 of a node (restarted), kill -9 of a NATS follower and then of the JetStream meta
 * leader (each restarted), SIGSTOP of a partition owner until the others took its partitions,
 * then SIGCONT. At the end every acknowledged write is read back through every node.
 *
 * Used by test/integration/cluster-faults.test.ts (one or two rounds) and by
 * native-bench/cluster-faults.ts (as many rounds as asked). Waits are conditions with deadlines.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, killQuietly, startServer, type ChildServer } from './child.ts';
import { sleep, until } from './wait.ts';
import {
  appendsAfterFence,
  clusterNodeEnv,
  metaLeader,
  readStreamWhenServed,
  restartNats,
  startNatsCluster,
  stopNats,
  waitJetStreamCluster,
  type NatsServer,
} from './nats.ts';

export interface FaultRunOptions {
  rounds: number;
  leaseMs: number;
  partitions: number;
  writers: number;
  /** Temporary directories made here are added to it (the caller removes them). */
  dirs: string[];
  log: (line: string) => void;
}

export interface FaultRunReport {
  acked: number;
  /** Acknowledged writes that some node could not read back (id, workspace, node, answer). */
  missing: string[];
  /** Stream appends by a node after another node's fence. */
  violations: string[];
  /** Partitions without a ready owner at the end. */
  unowned: number[];
  /**
   * Per fault: `ms` until 10 more writes were acknowledged; `gapMs` the longest time without any
   * acknowledged write from the fault until the next one (at most 20 s); `ownedMs` (a node
   * killed) until every partition had a ready owner among the running nodes again.
   */
  phases: Array<{
    round: number;
    phase: string;
    who: string;
    ms: number;
    gapMs: number;
    ownedMs?: number;
  }>;
}

interface Acked {
  ws: string;
  id: string;
  content: string;
}

interface Member {
  id: string;
  child: ChildServer;
}

interface StatusBody {
  partition_owners: Array<{ partition: number; owner: string | null; status: string }>;
}

const NAME = 'faults';

export async function runFaultSequence(o: FaultRunOptions): Promise<FaultRunReport> {
  const temp = (prefix: string): string => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    o.dirs.push(d);
    return d;
  };
  const nats: NatsServer[] = await startNatsCluster((i) => temp(`fb-faults-nats${i}-`), true);
  const urls = nats.map((s) => s.url);
  const members: Member[] = [];
  const startNode = async (id: string): Promise<Member> => {
    const child = await startServer({
      dataDir: temp(`fb-faults-${id}-`),
      // Snapshots (and trims) every second: the race between an owner's trim and a takeover comes often.
      env: clusterNodeEnv({
        urls,
        id,
        name: NAME,
        partitions: o.partitions,
        leaseMs: o.leaseMs,
        snapshotIntervalS: 1,
      }),
    });
    const m = { id, child };
    members.push(m);
    return m;
  };
  const live = (): Member[] =>
    members.filter((m) => m.child.proc.exitCode === null && m.child.proc.signalCode === null);
  const acked: Acked[] = [];
  const ackedAt: number[] = [];
  const phases: Array<Omit<FaultRunReport['phases'][number], 'gapMs'> & { at: number }> = [];
  let running = true;
  let loops: Promise<void>[] = [];
  try {
    await waitJetStreamCluster(urls, 60_000);
    for (const id of ['a', 'b', 'c']) await startWhenReady(() => startNode(id));
    await settled(live, o.partitions, 60_000);
    const workspaces = Array.from({ length: 4 * o.partitions }, (_, i) => `faults-${i}`);
    let n = 0;
    loops = Array.from({ length: o.writers }, async (_, w) => {
      while (running) {
        const nodes = live().filter((m) => !paused.has(m.id));
        const node = nodes[n % Math.max(1, nodes.length)];
        const ws = workspaces[n % workspaces.length] as string;
        n += 1;
        if (!node) {
          // every node paused or down: wait for one to be back, not for a guessed stretch
          await until(() => !running || live().some((m) => !paused.has(m.id)), {
            what: 'a live, unpaused node to write to',
            deadlineMs: 120_000,
          });
          continue;
        }
        const content = `fault write ${w}-${n}: the tide turns at the lighthouse`;
        const res = await http(node.child.base, 'POST', `/v1/workspaces/${ws}/memories`, {
          content,
        }).catch(() => null);
        if (res && (res.status === 200 || res.status === 201)) {
          acked.push({ ws, id: res.body.memory_id as string, content });
          ackedAt.push(Date.now());
        } else await sleep(50);
      }
    });
    const progress = async (
      round: number,
      phase: string,
      who = '',
      at = Date.now(),
      ownedMs?: number,
    ): Promise<void> => {
      const from = acked.length;
      await until(async () => acked.length >= from + 10, {
        ...FAULTS,
        deadlineMs: 90_000,
        what: `10 acknowledged writes after ${phase} ${who} (round ${round})`,
      });
      const ms = Date.now() - at;
      phases.push({ round, phase, who, at, ms, ...(ownedMs === undefined ? {} : { ownedMs }) });
      o.log(
        `round ${round}: ${phase} ${who}: 10 writes acknowledged after ${ms} ms${ownedMs === undefined ? '' : `, partitions owned again after ${ownedMs} ms`} (${acked.length} in all)`,
      );
    };
    await progress(0, 'start');
    for (let round = 1; round <= o.rounds; round++) {
      // kill -9 of a node, restarted.
      const victim = live()[round % live().length] as Member;
      const killedAt = Date.now();
      victim.child.proc.kill('SIGKILL');
      await victim.child.exited;
      members.splice(members.indexOf(victim), 1);
      await settled(live, o.partitions, 60_000);
      await progress(round, 'kill -9 of a node', victim.id, killedAt, Date.now() - killedAt);
      await startWhenReady(() => startNode(victim.id));
      await settled(live, o.partitions, 60_000);

      // kill -9 of a NATS follower, then of the meta leader, each restarted.
      for (const which of ['follower', 'leader'] as const) {
        let leader: string | null = null;
        await until(async () => (leader = await metaLeader(nats[0] as NatsServer)) !== null, {
          ...FAULTS,
          deadlineMs: 60_000,
          what: 'a JetStream meta leader',
        });
        const idx = nats.findIndex((s) => s.opts.cluster?.name === leader);
        const target = which === 'leader' ? idx : (idx + 1) % nats.length;
        const server = nats[target] as NatsServer;
        const killedAt = Date.now();
        await stopNats(server);
        await progress(
          round,
          `kill -9 of the NATS ${which === 'leader' ? 'meta leader' : 'follower'}`,
          server.opts.cluster?.name ?? '',
          killedAt,
        );
        nats[target] = await restartNats(server);
        await waitJetStreamCluster(urls, 60_000);
        await settled(live, o.partitions, 60_000);
      }

      // SIGSTOP of an owner for 0.8 to 2 leases (even rounds: until the others took its partitions),
      // then SIGCONT: it resumes while, or after, another node takes its partitions over.
      const status = await statusOf(live());
      const owner = live().find((m) =>
        status.partition_owners.some((p) => p.owner === m.id),
      ) as Member;
      paused.add(owner.id);
      const stoppedAt = Date.now();
      owner.child.proc.kill('SIGSTOP');
      const pauseMs = Math.round(o.leaseMs * (0.8 + 1.2 * Math.random()));
      try {
        if (round % 2 === 0) {
          await until(
            async () => {
              const s = await statusOf(live().filter((m) => m !== owner));
              return s.partition_owners.every(
                (p) => p.owner !== null && p.owner !== owner.id && p.status === 'ready',
              );
            },
            {
              ...FAULTS,
              deadlineMs: 60_000,
              what: `the partitions of the paused node ${owner.id} taken over`,
            },
          );
        } else await sleep(pauseMs);
        o.log(
          `round ${round}: SIGSTOP of owner ${owner.id} for ${round % 2 === 0 ? 'until its partitions were taken over' : `${pauseMs} ms`}`,
        );
      } finally {
        owner.child.proc.kill('SIGCONT');
        paused.delete(owner.id);
      }
      await settled(live, o.partitions, 60_000);
      await progress(round, 'SIGSTOP, then SIGCONT of an owner', owner.id, stoppedAt);
    }
    running = false;
    await Promise.all(loops);
    const unowned = await settled(live, o.partitions, 60_000).then(
      () => [],
      async () =>
        (await statusOf(live()).catch(() => null))?.partition_owners
          .filter((p) => p.status !== 'ready')
          .map((p) => p.partition) ?? [],
    );
    const missing: string[] = [];
    for (const m of live()) {
      for (const a of acked) {
        const res = await readBack(m, a);
        if (res.status !== 200 || res.body.content !== a.content)
          missing.push(
            `${a.id} in ${a.ws} through ${m.id}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
          );
      }
    }
    const violations: string[] = [];
    for (let p = 0; p < o.partitions; p++) {
      const msgs = await readStreamWhenServed(urls, `${NAME}_p${p}`);
      violations.push(...appendsAfterFence(msgs).map((v) => `partition ${p}: ${v}`));
    }
    return {
      acked: acked.length,
      missing,
      violations,
      unowned,
      phases: phases.map((p, i) => ({
        ...p,
        gapMs: longestGap(ackedAt, p.at, Math.min(p.at + 20_000, phases[i + 1]?.at ?? Infinity)),
      })),
    };
  } catch (err) {
    for (const m of members) o.log(`node ${m.id} events:\n${nodeEvents(m).join('\n')}`);
    for (const n of nats)
      o.log(
        `nats-server ${n.opts.cluster?.name ?? ''} log (end):\n${n.log().split('\n').slice(-25).join('\n')}`,
      );
    throw err;
  } finally {
    // FLASHBULB_FAULT_LOG_DIR: every node's and nats-server's whole log, for reading a failure afterwards.
    const logDir = process.env['FLASHBULB_FAULT_LOG_DIR'];
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      members.forEach((m, i) => {
        writeFileSync(join(logDir, `node-${i}-${m.id}.log`), m.child.stderr());
      });
      nats.forEach((n, i) => {
        writeFileSync(join(logDir, `nats-${i}.log`), n.log());
      });
    }
    running = false;
    for (const m of members) m.child.proc.kill('SIGCONT');
    await Promise.all(loops);
    await Promise.all(members.map((m) => killQuietly(m.child)));
    for (const s of nats) await stopNats(s);
  }
}

const paused = new Set<string>();

/** The longest time in [from, to] without a timestamp in `at` (sorted), counting from `from`. */
function longestGap(at: readonly number[], from: number, to: number): number {
  let longest = 0;
  let prev = from;
  for (const t of at) {
    if (t <= from) continue;
    if (t > to) break;
    longest = Math.max(longest, t - prev);
    prev = t;
  }
  return Math.max(longest, Math.min(to, at[at.length - 1] ?? from) - prev);
}

/** The ownership events a node logged (takeovers, drops, failures), the last 40. */
function nodeEvents(m: Member): string[] {
  return m.child
    .stderr()
    .split('\n')
    .filter((l) => /dropped|failed|stream starts|owned by|released/.test(l))
    .slice(-40);
}

/** One read; a 503 (failover in progress, as its contract says) is retried for up to 30 s. */
async function readBack(m: Member, a: Acked): Promise<{ status: number; body: any }> {
  const read = () =>
    http(m.child.base, 'GET', `/v1/workspaces/${a.ws}/memories/${a.id}`).catch((err: unknown) => ({
      status: 0,
      body: String(err),
    }));
  let res = await read();
  if (res.status !== 503) return res;
  // At the deadline the last answer is returned, for the caller to report.
  await until(async () => (res = await read()).status !== 503, {
    what: `a read of ${a.id} on ${m.id} without 503`,
    deadlineMs: 30_000,
    everyMs: 250,
  }).catch(() => undefined);
  return res;
}

/** How the runs wait: faults make checks throw (a node down) and hang (a node paused). */
const FAULTS = { everyMs: 100, retryErrors: true, cutAtDeadline: true } as const;

async function statusOf(nodes: Member[]): Promise<StatusBody> {
  for (const m of nodes) {
    const res = await http(m.child.base, 'GET', '/v1/cluster').catch(() => null);
    if (res?.status === 200) return res.body as StatusBody;
  }
  throw new Error('no node answered /v1/cluster');
}

/** Every partition has a ready owner among the running nodes. */
async function settled(live: () => Member[], partitions: number, timeoutMs: number): Promise<void> {
  let last = '';
  await until(
    async () => {
      const s = await statusOf(live());
      last = JSON.stringify(s.partition_owners);
      const ids = new Set(live().map((m) => m.id));
      return (
        s.partition_owners.length === partitions &&
        s.partition_owners.every(
          (p) => p.owner !== null && ids.has(p.owner) && p.status === 'ready',
        )
      );
    },
    {
      ...FAULTS,
      deadlineMs: timeoutMs,
      what: () => `every partition to have a ready owner: ${last}`,
    },
  );
}

/** A node starting while JetStream elects a leader may give up: start it again. */
async function startWhenReady<T>(start: () => Promise<T>): Promise<T> {
  let failures = 0;
  const attempt = async (): Promise<{ node: T } | null> => {
    try {
      return { node: await start() };
    } catch (err) {
      if (++failures >= 10) throw err; // ten tries, however long each takes
      return null;
    }
  };
  return (await until(attempt, { what: 'a node to start', deadlineMs: 600_000, everyMs: 500 }))
    .node;
}
