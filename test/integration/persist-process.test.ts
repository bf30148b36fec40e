/**
 * Durability of the real server process (`node dist/cli.js serve`): SIGTERM exits 0 after a final
 * snapshot; `kill -9` mid-load loses no acknowledged write; a torn log tail is cut and reported;
 * a corrupted log segment stops start-up naming file and offset; erasure survives a crash.
 */
import { randomUUID } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { shardDir } from '../../src/data-dir.ts';
import { shardFor } from '../../src/router/shard-map.ts';
import { encodeFrame } from '../../src/shard/persist/frames.ts';
import { seqName } from '../../src/shard/persist/fsutil.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { until } from '../helpers/wait.ts';
import { storedMemory } from '../helpers/memory-record.ts';
import {
  ensureBuilt,
  filesContaining,
  http,
  killQuietly,
  spawnServer,
  startServer,
  waitExit,
  type ChildServer,
} from '../helpers/child.ts';

const dirs: string[] = [];
const children: ChildServer[] = [];

function tempDataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'flashbulb-proc-'));
  dirs.push(d);
  return d;
}

async function start(dataDir: string, env: Record<string, string> = {}): Promise<ChildServer> {
  const child = await startServer({ dataDir, env });
  children.push(child);
  return child;
}

async function kill9(child: ChildServer): Promise<void> {
  child.proc.kill('SIGKILL');
  const exit = await waitExit(child);
  expect(exit.signal).toBe('SIGKILL');
}

async function sigterm(child: ChildServer): Promise<void> {
  child.proc.kill('SIGTERM');
  const exit = await waitExit(child);
  expect(exit, child.stderr()).toEqual({ code: 0, signal: null });
}

interface Acked {
  ws: string;
  id: string;
  content: string;
  prev: string | null;
}

/** Writers that keep posting until the server goes away; returns every write answered 201. */
function writers(
  base: string,
  opts: { count: number; workspaces: string[] },
): { acked: readonly Acked[]; stop: () => void; done: Promise<Acked[]> } {
  let stopped = false;
  const acked: Acked[] = [];
  const one = async (w: number): Promise<void> => {
    const ws = opts.workspaces[w % opts.workspaces.length] as string;
    let prev: string | null = null;
    for (let i = 0; !stopped; i++) {
      const content = `writer ${w} write ${i} ${randomUUID()}`;
      const body: Record<string, unknown> = { content, entity_id: `writer-${w}` };
      if (prev) body['edges'] = [{ target_id: prev, edge_type: 'followed_by' }];
      try {
        const res = await http(base, 'POST', `/v1/workspaces/${ws}/memories`, body);
        if (res.status !== 201) return; // e.g. 503 while draining
        acked.push({ ws, id: res.body.memory_id, content, prev });
        prev = res.body.memory_id;
      } catch {
        return; // the server went away
      }
    }
  };
  const done = Promise.all(Array.from({ length: opts.count }, (_, w) => one(w))).then(() => acked);
  return { acked, stop: () => (stopped = true), done };
}

/** Slugs that between them land on both shards. */
function workspacesOnBothShards(prefix: string): string[] {
  const picked = new Map<number, string[]>();
  for (let i = 0; (picked.get(0)?.length ?? 0) < 2 || (picked.get(1)?.length ?? 0) < 2; i++) {
    const slug = `${prefix}-${i}`;
    const list = picked.get(shardFor(slug, 2)) ?? [];
    if (list.length < 2) list.push(slug);
    picked.set(shardFor(slug, 2), list);
  }
  return [...(picked.get(0) ?? []), ...(picked.get(1) ?? [])];
}

/** Asserts every acknowledged write is readable with its content (and its edge, for a sample). */
async function expectAllPresent(base: string, acked: Acked[]): Promise<void> {
  const byWs = new Map<string, Acked[]>();
  for (const a of acked) byWs.set(a.ws, [...(byWs.get(a.ws) ?? []), a]);
  const missing: string[] = [];
  for (const [ws, list] of byWs) {
    for (let i = 0; i < list.length; i += 500) {
      const chunk = list.slice(i, i + 500);
      const res = await http(base, 'POST', `/v1/workspaces/${ws}/memories/batch`, {
        memory_ids: chunk.map((a) => a.id),
      });
      expect(res.status).toBe(200);
      const got = new Map<string, string>(
        (res.body as Array<{ memory_id: string; content: string }>).map((m) => [
          m.memory_id,
          m.content,
        ]),
      );
      for (const a of chunk) if (got.get(a.id) !== a.content) missing.push(`${ws}/${a.id}`);
    }
  }
  expect(missing, `${missing.length} of ${acked.length} acknowledged writes missing`).toEqual([]);
  const withEdge = acked.filter((a) => a.prev !== null);
  const step = Math.max(1, Math.floor(withEdge.length / 150));
  for (let i = 0; i < withEdge.length; i += step) {
    const a = withEdge[i] as Acked;
    const res = await http(base, 'GET', `/v1/workspaces/${a.ws}/memories/${a.id}/edges`);
    expect(res.body.outgoing, `edges of ${a.id}`).toContainEqual(
      expect.objectContaining({ target_id: a.prev, edge_type: 'followed_by' }),
    );
  }
}

function recoveryLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((l) => /^shard \d+: \d+ memories recovered \(\d+ log records replayed\)/.test(l));
}

beforeAll(() => ensureBuilt(), 120_000);
afterEach(async () => {
  for (const c of children.splice(0)) await killQuietly(c);
});
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the server process', () => {
  it('SIGTERM drains in-flight writes, writes a final snapshot, exits 0, and the restart recovers it all', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    const load = writers(first.base, { count: 8, workspaces: workspacesOnBothShards('term') });
    await until(() => load.acked.length >= 50, {
      what: '50 acknowledged writes under load',
      deadlineMs: 20_000,
    });
    await sigterm(first);
    load.stop();
    const acked = await load.done;
    expect(acked.length).toBeGreaterThan(0);
    expect(first.stderr()).toContain('SIGTERM: draining requests and writing a final snapshot');
    expect(first.stderr()).toContain('stopped cleanly');
    for (const shard of [0, 1]) {
      const files = readdirSync(shardDir(dataDir, shard));
      expect(
        files.some((f) => /^snap-\d{8}\.snap$/.test(f)),
        `shard ${shard}: ${files.join(', ')}`,
      ).toBe(true);
      expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    }
    expect(readdirSync(dataDir)).not.toContain('LOCK');

    const second = await start(dataDir);
    const lines = recoveryLines(second.stderr());
    expect(lines, second.stderr()).toHaveLength(2);
    // Everything was in the final snapshot: nothing left to replay.
    for (const l of lines) expect(l).toMatch(/\(0 log records replayed\)/);
    const total = lines.reduce((n, l) => n + Number(/: (\d+) memories recovered/.exec(l)?.[1]), 0);
    expect(total).toBeGreaterThanOrEqual(acked.length);
    await expectAllPresent(second.base, acked);
    await sigterm(second);
  });

  it('CRASH: kill -9 mid-load loses no acknowledged write, and the restart replays the log cleanly', async () => {
    const dataDir = tempDataDir();
    // Frequent snapshots, so the crash may land in the middle of one.
    const env = { FLASHBULB_SNAPSHOT_INTERVAL_S: '1', FLASHBULB_SNAPSHOT_WAL_BYTES: '65536' };
    const first = await start(dataDir, env);
    const load = writers(first.base, { count: 16, workspaces: workspacesOnBothShards('crash') });
    // Crash once the load has run long enough for both shards to have snapshotted under it.
    const snapped = (shard: number): boolean =>
      existsSync(shardDir(dataDir, shard)) &&
      readdirSync(shardDir(dataDir, shard)).some((f) => /^snap-\d{8}\.snap$/.test(f));
    await until(() => load.acked.length > 100 && snapped(0) && snapped(1), {
      what: 'writes acknowledged and a snapshot on each shard',
      deadlineMs: 20_000,
    });
    await kill9(first);
    const acked = await load.done;
    expect(acked.length, 'writes acknowledged before the crash').toBeGreaterThan(50);

    const second = await start(dataDir, env);
    const log = second.stderr();
    expect(log).not.toMatch(/FATAL|refusing to start/);
    const lines = recoveryLines(log);
    expect(lines, log).toHaveLength(2);
    expect(
      lines.some((l) => !/\(0 log records replayed\)/.test(l)),
      'the log was replayed',
    ).toBe(true);
    const health = await http(second.base, 'GET', '/v1/health/ready');
    expect(health.body).toEqual({ status: 'ready' });
    await expectAllPresent(second.base, acked);
    await sigterm(second);
  });

  it('a torn record at the end of the log is cut, reported, and start-up goes on', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    const ws = workspacesOnBothShards('torn')[0] as string;
    const shard = shardFor(ws, 2);
    const acked: Acked[] = [];
    for (let i = 0; i < 20; i++) {
      const content = `torn test ${i}`;
      const res = await http(first.base, 'POST', `/v1/workspaces/${ws}/memories`, { content });
      expect(res.status).toBe(201);
      acked.push({ ws, id: res.body.memory_id, content, prev: null });
    }
    await kill9(first);
    const dir = shardDir(dataDir, shard);
    const segments = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .sort();
    const last = join(dir, segments.at(-1) as string);
    const intact = statSync(last).size;
    expect(intact).toBeGreaterThan(0);
    // An append interrupted half-way through one frame.
    const record: LogRecord = { t: 'del', ws, id: acked[0]?.id as string };
    appendFileSync(last, encodeFrame(record).subarray(0, 12));

    const second = await start(dataDir);
    expect(second.stderr()).toContain(
      `shard ${shard}: truncated a torn log tail: ${last} at offset ${intact}`,
    );
    expect(statSync(last).size).toBe(intact);
    await expectAllPresent(second.base, acked);
    await sigterm(second);
  });

  it('a corrupted record in the middle of a middle log segment stops start-up, naming the file and offset', async () => {
    const dataDir = tempDataDir();
    writeFileSync(
      join(dataDir, 'meta.json'),
      JSON.stringify({ format: 1, shards: 2, created_at: Date.now() * 1000 }),
    );
    const dir = shardDir(dataDir, 0);
    mkdirSync(dir, { recursive: true });
    mkdirSync(shardDir(dataDir, 1), { recursive: true });
    const put = (n: number): LogRecord => ({
      t: 'put',
      ws: 'default',
      m: storedMemory(n.toString(16).padStart(32, '0'), `record ${n}`, {
        embedding: new Uint8Array(new Float32Array(384).buffer),
      }),
    });
    let n = 1;
    const offsets: number[] = [];
    for (const seq of [1, 2, 3]) {
      const frames = [put(n++), put(n++), put(n++)].map((r) => encodeFrame(r));
      if (seq === 2)
        for (let i = 0, at = 0; i < frames.length; at += (frames[i] as Buffer).length, i++)
          offsets.push(at);
      writeFileSync(join(dir, seqName('wal', seq, 'log')), Buffer.concat(frames));
    }
    const middle = join(dir, seqName('wal', 2, 'log'));
    const bytes = readFileSync(middle);
    const at = (offsets[1] as number) + 100; // inside the second record's payload
    bytes[at] = (bytes[at] ?? 0) ^ 0x5a;
    writeFileSync(middle, bytes);

    const child = await spawnServer({ dataDir });
    children.push(child);
    const exit = await waitExit(child);
    expect(exit.code, child.stderr()).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(child.stderr()).toContain(`${middle} at offset ${offsets[1]}`);
    // Nothing was repaired or served.
    expect(readFileSync(middle).equals(bytes)).toBe(true);
    expect(readdirSync(dataDir)).not.toContain('LOCK');
  });

  it('content forgotten just before a crash is still erased within FLASHBULB_ERASE_WITHIN_S of the restart', async () => {
    const dataDir = tempDataDir();
    // A long erasure window on the first run, so the crash comes before its compaction.
    const first = await start(dataDir, { FLASHBULB_ERASE_WITHIN_S: '60' });
    const secret = `crash-secret-${randomUUID()}`;
    const keep = `crash-keep-${randomUUID()}`;
    const secretRes = await http(first.base, 'POST', '/v1/memories', { content: secret });
    const keepRes = await http(first.base, 'POST', '/v1/memories', { content: keep });
    expect([secretRes.status, keepRes.status]).toEqual([201, 201]);
    const forgot = await http(first.base, 'POST', '/v1/forget', {
      memory_ids: [secretRes.body.memory_id],
    });
    expect(forgot.body).toMatchObject({ forgotten_count: 1 });
    await kill9(first);
    expect(
      filesContaining(dataDir, secret).length,
      'precondition: the crash came before erasure',
    ).toBeGreaterThan(0);

    const eraseWithinS = 2;
    const second = await start(dataDir, { FLASHBULB_ERASE_WITHIN_S: String(eraseWithinS) });
    let holding = filesContaining(dataDir, secret);
    await until(() => (holding = filesContaining(dataDir, secret)).length === 0, {
      what: 'the forgotten content to leave every file',
      deadlineMs: eraseWithinS * 1000,
      everyMs: 50,
    }).catch(() => undefined);
    expect(holding, 'forgotten content still on disk after the restart').toEqual([]);
    expect(
      (await http(second.base, 'GET', `/v1/memories/${secretRes.body.memory_id}`)).status,
    ).toBe(404);
    expect(
      (await http(second.base, 'GET', `/v1/memories/${keepRes.body.memory_id}`)).body.content,
    ).toBe(keep);
    await sigterm(second);
  });
});
