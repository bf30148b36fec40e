/**
 * Online backup under write load, restored by starting a server on the copy; and the CLI's
 * export, import and backup commands against real server processes.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  ensureBuilt,
  http,
  killQuietly,
  ROOT,
  spawnServer,
  startServer,
  waitExit,
  type ChildServer,
} from '../helpers/child.ts';
import { until } from '../helpers/wait.ts';

const run = promisify(execFile);
const dirs: string[] = [];
const children: ChildServer[] = [];

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

async function start(dataDir: string): Promise<ChildServer> {
  const child = await startServer({
    dataDir,
    env: { FLASHBULB_CONTRADICTIONS_ENABLED: 'false', FLASHBULB_REFLECT_ENABLED: 'false' },
  });
  children.push(child);
  return child;
}

async function stop(child: ChildServer): Promise<void> {
  child.proc.kill('SIGTERM');
  expect(await waitExit(child)).toEqual({ code: 0, signal: null });
}

function cliEnv(base: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FLASHBULB_')) env[k] = v;
  return base === '' ? env : { ...env, FLASHBULB_URL: base };
}

beforeAll(() => ensureBuilt());
afterAll(async () => {
  for (const c of children) await killQuietly(c);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('online backup', () => {
  it('a backup taken under write load restores every write acknowledged before it began, consistently', async () => {
    const live = await start(tempDir('flashbulb-backup-live-'));
    const acked: Array<{ id: string; at: number; content: string }> = [];
    const revised = new Map<string, number>();
    let writing = true;
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; writing; i++) {
        const content = `writer ${w} memory ${i}`;
        const res = await http(live.base, 'POST', '/v1/memories', { content, entity_id: `w${w}` });
        expect(res.status).toBe(201);
        acked.push({ id: res.body.memory_id, at: Date.now(), content });
        if (i % 3 === 2) {
          const target = acked[Math.floor(acked.length / 2)] as { id: string };
          const rev = await http(live.base, 'PUT', `/v1/revise/${target.id}`, {
            importance: 0.9,
            context: { rev: i },
          });
          expect(rev.status).toBe(200);
          revised.set(target.id, Math.max(revised.get(target.id) ?? 0, rev.body.logical_clock));
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await until(() => acked.length >= 200, {
      what: '200 acknowledged writes',
      deadlineMs: 30_000,
      everyMs: 10,
    });
    const to = join(tempDir('flashbulb-backup-'), 'copy');
    const began = Date.now();
    const ackedBefore = acked.filter((a) => a.at < began);
    const res = await http(live.base, 'POST', '/v1/admin/backup', { to });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.shards).toHaveLength(2);
    const ackedAfterBackup = acked.length;
    await until(() => acked.length >= ackedAfterBackup + 100, {
      what: '100 more acknowledged writes',
      deadlineMs: 30_000,
      everyMs: 10,
    });
    writing = false;
    await Promise.all(writers);
    const again = await http(live.base, 'POST', '/v1/admin/backup', { to });
    expect(again.status).toBe(409);
    await stop(live);

    const restored = await start(to);
    for (const a of ackedBefore) {
      const got = await http(restored.base, 'GET', `/v1/memories/${a.id}`);
      expect(got.status, `acknowledged before the backup: ${a.content}`).toBe(200);
      expect(got.body.content).toBe(a.content);
    }
    // Consistency: every live memory has exactly as many superseded versions as revisions.
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await http(
        restored.base,
        'GET',
        `/v1/memories?include_superseded=true&limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      );
      all.push(...page.body.memories);
      cursor = page.body.next_cursor;
    } while (cursor);
    const versionsOf = new Map<string, number>();
    for (const m of all)
      if (m.superseded_by)
        versionsOf.set(m.superseded_by, (versionsOf.get(m.superseded_by) ?? 0) + 1);
    for (const m of all.filter((x) => !x.superseded_by))
      expect(versionsOf.get(m.memory_id) ?? 0, m.memory_id).toBe(m.logical_clock);
    expect(all.length).toBeGreaterThanOrEqual(ackedBefore.length);
    await stop(restored);
  });

  it('flashbulb backup --to writes the copy; a non-empty target is refused', async () => {
    const live = await start(tempDir('flashbulb-backup-cli-'));
    const m = await http(live.base, 'POST', '/v1/memories', { content: 'backed up by the CLI' });
    const to = join(tempDir('flashbulb-backup-cli-to-'), 'copy');
    const { stdout } = await run(process.execPath, [CLI, 'backup', '--to', to, '--json'], {
      cwd: ROOT,
      env: cliEnv(live.base),
    });
    expect(JSON.parse(stdout)).toMatchObject({ to, shards: [{ shard: 0 }, { shard: 1 }] });
    await expect(
      run(process.execPath, [CLI, 'backup', '--to', to], { cwd: ROOT, env: cliEnv(live.base) }),
    ).rejects.toMatchObject({ stderr: expect.stringMatching(/409 conflict: .* not empty/) });
    expect((await http(live.base, 'POST', '/v1/admin/backup', { to: 'relative/dir' })).status).toBe(
      400,
    );
    await stop(live);
    const restored = await start(to);
    expect(
      (await http(restored.base, 'GET', `/v1/memories/${m.body.memory_id}`)).body.content,
    ).toBe('backed up by the CLI');
    await stop(restored);
  });
});

describe('flashbulb workspaces create --default-ttl', () => {
  it('creates the workspace offline with a default TTL, and the server applies it', async () => {
    const dataDir = tempDir('flashbulb-cli-ttl-');
    const { stdout } = await run(
      process.execPath,
      [
        CLI,
        'workspaces',
        'create',
        'short-lived',
        '--default-ttl',
        '90',
        '--data-dir',
        dataDir,
        '--init',
        '--json',
      ],
      { cwd: ROOT, env: cliEnv('') },
    );
    expect(JSON.parse(stdout).workspace).toMatchObject({ slug: 'short-lived', default_ttl_s: 90 });
    await expect(
      run(
        process.execPath,
        [CLI, 'workspaces', 'create', 'other', '--default-ttl', 'soon', '--data-dir', dataDir],
        { cwd: ROOT, env: cliEnv('') },
      ),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(
        /'--default-ttl <seconds>' argument 'soon' is invalid\. it must be a positive number of seconds/,
      ),
    });
    const key = JSON.parse(
      (
        await run(
          process.execPath,
          [CLI, 'keys', 'create', '--role', 'admin', '--data-dir', dataDir, '--json'],
          { cwd: ROOT, env: cliEnv('') },
        )
      ).stdout,
    ).api_key as string;
    const server = await startServer({
      dataDir,
      env: { FLASHBULB_AUTH_ENABLED: 'true', FLASHBULB_PUBLIC_HEALTH: 'true' },
    });
    children.push(server);
    const res = await fetch(`${server.base}/v1/workspaces/short-lived/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'goes away in 90 s' }),
    });
    const body = (await res.json()) as { expires_at: number; created_at: number };
    expect(body.expires_at - body.created_at).toBe(90_000_000);
    await stop(server);
  });
});

describe('flashbulb export / import', () => {
  it('round-trips a workspace between two servers through a file', async () => {
    const a = await start(tempDir('flashbulb-cli-a-'));
    const b = await start(tempDir('flashbulb-cli-b-'));
    const first = await http(a.base, 'POST', '/v1/memories', {
      content: 'exported by the CLI',
      entity_id: 'cli',
    });
    await http(a.base, 'POST', '/v1/memories', {
      content: 'with an edge',
      edges: [{ target_id: first.body.memory_id, edge_type: 'related_to' }],
    });
    await http(a.base, 'PUT', `/v1/revise/${first.body.memory_id}`, {
      content: 'exported by the CLI, revised',
    });
    const file = join(tempDir('flashbulb-cli-file-'), 'ws.ndjson');
    const exported = await run(
      process.execPath,
      [CLI, 'export', '--workspace', 'default', '--embeddings'],
      { cwd: ROOT, env: cliEnv(a.base), maxBuffer: 1 << 26 },
    );
    writeFileSync(file, exported.stdout);
    expect(exported.stdout.trim().split('\n')).toHaveLength(2);

    const imported = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'import', '--workspace', 'default', '--json'], {
        cwd: ROOT,
        env: cliEnv(b.base),
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('exit', (code) => resolve({ code, out }));
      child.stdin.end(readFileSync(file));
    });
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.out)).toMatchObject({
      lines: 2,
      imported: 2,
      skipped: 0,
      error_count: 0,
    });
    const list = async (c: ChildServer): Promise<unknown[]> =>
      (
        (await http(c.base, 'GET', '/v1/memories?include_superseded=true')).body.memories as any[]
      ).map(({ decay_score: _d, ...m }) => m);
    expect(await list(b)).toEqual(await list(a));
    expect((await http(b.base, 'GET', `/v1/memories/${first.body.memory_id}/edges`)).body).toEqual(
      (await http(a.base, 'GET', `/v1/memories/${first.body.memory_id}/edges`)).body,
    );

    const bad = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'import', '--json'], {
        cwd: ROOT,
        env: cliEnv(b.base),
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('exit', (code) => resolve({ code, out }));
      child.stdin.end('{"memory":{"content":"fine"}}\nnot json\n');
    });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({
      imported: 1,
      error_count: 1,
      errors: [{ line: 2 }],
    });
    await stop(a);
    await stop(b);
  });
});

describe('flashbulb repair', () => {
  it('a log damaged in the middle stops start-up naming the command; repair keeps every whole record and the server starts on them', async () => {
    const dataDir = tempDir('flashbulb-repair-');
    const env = {
      FLASHBULB_SHARDS: '1',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
      FLASHBULB_REFLECT_ENABLED: 'false',
    };
    const first = await startServer({ dataDir, env });
    children.push(first);
    const written: string[] = [];
    for (let i = 0; i < 12; i++) {
      const content = `memory ${i} ${'x'.repeat(200)}`;
      expect((await http(first.base, 'POST', '/v1/memories', { content })).status).toBe(201);
      written.push(content);
    }
    await killQuietly(first); // kill -9: the writes are in the log alone
    const log = join(dataDir, 'shard-000', 'wal-00000001.log');
    const bytes = readFileSync(log);
    for (let k = 0; k < 40; k++)
      bytes.writeUInt8(
        bytes.readUInt8(Math.floor(bytes.length / 2) + k) ^ 0x55,
        Math.floor(bytes.length / 2) + k,
      );
    writeFileSync(log, bytes);

    const refused = await spawnServer({ dataDir, env });
    expect(await waitExit(refused)).toEqual({ code: 1, signal: null });
    expect(refused.stderr()).toContain(`${log} at offset`);
    expect(refused.stderr()).toContain(`run \`flashbulb repair --data-dir ${dataDir}\``);

    const { stdout, stderr } = await run(
      process.execPath,
      [CLI, 'repair', '--data-dir', dataDir, '--json'],
      { cwd: ROOT, env: cliEnv('') },
    );
    const report = JSON.parse(stdout) as {
      repaired: Array<{
        shard: number;
        file: string;
        records_kept: number;
        original_kept_as: string;
        dropped: unknown[];
      }>;
    };
    expect(report.repaired).toEqual([
      {
        shard: 0,
        file: log,
        records_kept: expect.any(Number),
        original_kept_as: `${log}.damaged`,
        dropped: [expect.objectContaining({ reason: expect.any(String) })],
      },
    ]);
    expect(stderr).toContain('1 file rewritten');
    expect(readFileSync(`${log}.damaged`).equals(bytes)).toBe(true);

    const again = await startServer({ dataDir, env });
    children.push(again);
    const listed = (await http(again.base, 'GET', '/v1/memories?limit=100')).body.memories.map(
      (m: { content: string }) => m.content,
    ) as string[];
    // The damaged bytes held one or two records; every other acknowledged write is there.
    expect(listed.length).toBe(report.repaired[0]?.records_kept);
    expect(listed.length).toBeGreaterThanOrEqual(written.length - 2);
    for (const c of listed) expect(written).toContain(c);
    // Repair refuses a directory a server is running on.
    await expect(
      run(process.execPath, [CLI, 'repair', '--data-dir', dataDir, '--json'], {
        cwd: ROOT,
        env: cliEnv(''),
      }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('is in use by process') });
  });
});
