/**
 * Cluster mode keeps one key store for the whole cluster (src/cluster/auth-sync.ts: the JetStream
 * KV bucket `<name>-auth`): real nats-server and three Flashbulb nodes with auth on, started at the
 * same time. Exactly one of them creates (and prints) the first admin key; a key created through
 * one node authenticates on the others; a key revoked on one node is refused by the others;
 * workspaces created, renamed and deleted through one node are seen by all; a node that joins
 * later, and the CLI pointed at NATS, use the same store; a key revoked through one node ends the
 * streams it opened on the others. Skipped, saying so, only when
 * nats-server is not installed (CI installs it: .ci/run).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  ensureBuilt,
  killQuietly,
  ROOT,
  spawnServer,
  waitReady,
  type ChildServer,
} from '../helpers/child.ts';
import { natsServerAvailable, startNats, stopNats, type NatsServer } from '../helpers/nats.ts';
import * as grpc from '@grpc/grpc-js';
import { connectGrpc } from '../helpers/grpc.ts';
import { subscribeSse } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';
import { ClusterAuth } from '../../src/cluster/auth-sync.ts';

const HAVE_NATS = natsServerAvailable();
if (!HAVE_NATS)
  console.warn(
    'cluster auth tests SKIPPED: nats-server is not installed (apt-get install -y nats-server); CI installs it',
  );

/** How long a change made through one node may take to reach the others (docs/operations/cluster.md: "within milliseconds on a healthy cluster"). */
const PROPAGATION_BOUND_MS = 5000;
const CLUSTER = 'authc';

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

interface Reply {
  status: number;
  body: any;
}

async function call(
  node: ChildServer,
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${node.base}${path}`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed };
}

/** Polls `probe` until `ok` holds; fails with the last reply after the bound. */
async function eventually(
  probe: () => Promise<Reply>,
  ok: (r: Reply) => boolean,
  what: string,
): Promise<Reply> {
  let last: Reply | null = null;
  return until(
    async () => {
      last = await probe();
      return ok(last) ? last : null;
    },
    {
      what: () => `${what}: still ${last?.status} ${JSON.stringify(last?.body)}`,
      deadlineMs: PROPAGATION_BOUND_MS,
      everyMs: 50,
    },
  );
}

const ADMIN_KEY_LINE = /^\s+(fb_admin_[0-9A-Za-z]+)\s*$/m;

describe.skipIf(!HAVE_NATS)('cluster mode: one key store for the whole cluster', () => {
  let nats: NatsServer | undefined;
  const nodes: ChildServer[] = [];
  let a: ChildServer;
  let b: ChildServer;
  let c: ChildServer;
  let admin = '';

  function env(id: string): Record<string, string> {
    if (!nats) throw new Error('nats not started');
    return {
      FLASHBULB_NATS_URL: nats.url,
      FLASHBULB_NODE_ID: id,
      FLASHBULB_CLUSTER_NAME: CLUSTER,
      FLASHBULB_CLUSTER_PARTITIONS: '4',
      FLASHBULB_CLUSTER_LEASE_MS: '2000',
      FLASHBULB_NATS_REPLICAS: '1',
      FLASHBULB_AUTH_ENABLED: 'true',
      FLASHBULB_PUBLIC_HEALTH: 'true',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
      FLASHBULB_REFLECT_ENABLED: 'false',
    };
  }

  async function startNode(id: string): Promise<ChildServer> {
    const child = await spawnServer({ dataDir: tempDir(`fb-auth-${id}-`), env: env(id) });
    nodes.push(child);
    return child;
  }

  beforeAll(async () => {
    ensureBuilt();
    nats = await startNats({ storeDir: tempDir('fb-nats-auth-') });
    // Three nodes of a new cluster start at the same time: they race for the first admin key.
    [a, b, c] = (await Promise.all(['a', 'b', 'c'].map((id) => startNode(id)))) as [
      ChildServer,
      ChildServer,
      ChildServer,
    ];
    await Promise.all(nodes.map((n) => waitReady(n, 30_000)));
  });

  afterAll(async () => {
    await Promise.all(nodes.map((n) => killQuietly(n)));
    await stopNats(nats);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a first start of three nodes at once creates exactly one admin key, printed by the node that made it, valid on every node', async () => {
    // A node answers health checks before it has settled the first admin key; it prints its
    // "listening" line once it has, and the key right after it.
    await until(
      () =>
        [a, b, c].every((n) => / listening: /.test(n.stderr())) &&
        [a, b, c].some((n) => ADMIN_KEY_LINE.test(n.stderr())),
      {
        what: 'every node to print its listening line, and one its admin key',
        deadlineMs: 30_000,
      },
    ).catch(() => undefined); // the assertions below say what is missing
    const printers = [a, b, c].filter((n) => ADMIN_KEY_LINE.test(n.stderr()));
    expect(printers.length, [a, b, c].map((n) => n.stderr()).join('\n----\n')).toBe(1);
    const printer = printers[0] as ChildServer;
    expect(printer.stderr()).toMatch(
      /First start of the cluster: node [abc] created its admin API key/,
    );
    admin = ADMIN_KEY_LINE.exec(printer.stderr())?.[1] ?? '';
    expect(admin).toMatch(/^fb_admin_[0-9A-Za-z]{32,}$/);
    for (const node of [a, b, c]) {
      const who = await eventually(
        () => call(node, 'GET', '/v1/auth/whoami', admin),
        (r) => r.status === 200,
        `the admin key on ${node.base}`,
      );
      expect(who.body.role).toBe('admin');
      const keys = await call(node, 'GET', '/v1/keys', admin);
      expect(keys.status).toBe(200);
      expect(keys.body.keys.filter((k: { role: string }) => k.role === 'admin')).toHaveLength(1);
    }
    // Only hashes are stored: the key itself is in no node's answer.
    expect(JSON.stringify((await call(a, 'GET', '/v1/keys', admin)).body)).not.toContain(admin);
  });

  it('a workspace and its key created through node a work through b and c; renamed on b, c sees the new name', async () => {
    const made = await call(a, 'POST', '/v1/workspaces', admin, {
      slug: 'shared-ws',
      name: 'Shared',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const wsKey = made.body.api_key as string;
    for (const node of [b, c]) {
      const list = await eventually(
        () => call(node, 'GET', '/v1/workspaces', admin),
        (r) => r.status === 200 && JSON.stringify(r.body).includes('"shared-ws"'),
        `shared-ws listed on ${node.base}`,
      );
      expect(list.body.workspaces.map((w: { slug: string }) => w.slug)).toContain('shared-ws');
      const who = await eventually(
        () => call(node, 'GET', '/v1/auth/whoami', wsKey),
        (r) => r.status === 200,
        `the workspace key on ${node.base}`,
      );
      expect(who.body.workspace.slug).toBe('shared-ws');
    }
    const wrote = await call(b, 'POST', '/v1/memories', wsKey, {
      content: 'written with a key made on another node',
    });
    expect(wrote.status, JSON.stringify(wrote.body)).toBe(201);
    const read = await call(c, 'GET', `/v1/memories/${wrote.body.memory_id}`, wsKey);
    expect(read.status, JSON.stringify(read.body)).toBe(200);

    const again = await call(c, 'POST', '/v1/workspaces', admin, { slug: 'shared-ws' });
    expect(again.status).toBe(409);

    const renamed = await call(b, 'PUT', '/v1/workspaces/shared-ws', admin, {
      name: 'Renamed on b',
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    const seen = await eventually(
      () => call(c, 'GET', '/v1/workspaces/shared-ws', admin),
      (r) => r.body?.name === 'Renamed on b',
      'the new name on c',
    );
    expect(seen.status).toBe(200);
  });

  it('a key revoked through node b is refused by a and c (and by b at once)', async () => {
    const made = await call(a, 'POST', '/v1/keys', admin, {
      workspace: 'default',
      role: 'workspace',
      label: 'to revoke',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const key = made.body.api_key as string;
    await eventually(
      () => call(b, 'GET', '/v1/auth/whoami', key),
      (r) => r.status === 200,
      'the new key on b',
    );
    await eventually(
      () => call(c, 'GET', '/v1/auth/whoami', key),
      (r) => r.status === 200,
      'the new key on c',
    );
    const revoked = await call(b, 'DELETE', `/v1/keys/${made.body.key_id}`, admin);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect((await call(b, 'GET', '/v1/auth/whoami', key)).status).toBe(401);
    for (const node of [a, c]) {
      const refused = await eventually(
        () => call(node, 'GET', '/v1/auth/whoami', key),
        (r) => r.status === 401,
        `the revoked key on ${node.base}`,
      );
      expect(refused.body.error_code).toBe('unauthenticated');
    }
  });

  it('a key revoked through node b ends the streams it opened on a (gRPC: UNAUTHENTICATED) and c (SSE: closed, revoked)', async () => {
    const made = await call(a, 'POST', '/v1/workspaces', admin, { slug: 'streams-ws' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const key = made.body.api_key as string;
    await eventually(
      () => call(c, 'GET', '/v1/auth/whoami', key),
      (r) => r.status === 200,
      'the new key on c',
    );
    const sse = await subscribeSse(c.base, key, {});
    const grpcPort = Number(/ gRPC [\d.]+:(\d+) /.exec(a.stderr())?.[1]);
    const rpc = connectGrpc(grpcPort, { deadlineMs: 10_000 });
    try {
      const stream = rpc.subscribe({ key });
      let handshakes = 0;
      let status: grpc.StatusObject | null = null;
      stream.on('data', () => (handshakes += 1));
      stream.on('status', (st: grpc.StatusObject) => (status = st));
      stream.on('error', () => undefined);
      stream.write({});
      stream.end();
      await until(() => handshakes >= 1, { what: 'the gRPC handshake on a' });
      const revoked = await call(b, 'DELETE', `/v1/keys/${made.body.key_id}`, admin);
      expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
      await sse.stream.until(
        (events) => events.some((e) => e.event === 'closed'),
        PROPAGATION_BOUND_MS,
        'event: closed on c',
      );
      expect(sse.stream.named('closed')[0]?.json).toEqual({ reason: 'revoked' });
      const ended = await until(() => status, {
        what: 'the gRPC stream on a to end',
        deadlineMs: PROPAGATION_BOUND_MS,
      });
      expect(grpc.status[ended.code]).toBe('UNAUTHENTICATED');
    } finally {
      sse.stream.destroy();
      rpc.close();
    }
  });

  it('a workspace deleted through node c disappears from a, and its keys stop working there', async () => {
    const made = await call(c, 'POST', '/v1/workspaces', admin, { slug: 'short-lived' });
    expect(made.status).toBe(201);
    const key = made.body.api_key as string;
    await eventually(
      () => call(a, 'GET', '/v1/auth/whoami', key),
      (r) => r.status === 200,
      'short-lived key on a',
    );
    const gone = await call(c, 'DELETE', '/v1/workspaces/short-lived', admin);
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    expect(gone.body.keys_revoked).toBe(1);
    await eventually(
      () => call(a, 'GET', '/v1/workspaces/short-lived', admin),
      (r) => r.status === 404,
      'short-lived gone on a',
    );
    expect((await call(a, 'GET', '/v1/auth/whoami', key)).status).toBe(401);
  });

  it('a node joining later creates no admin key and knows every key; the CLI with FLASHBULB_NATS_URL makes a key every node accepts', async () => {
    const d = await startNode('d');
    await waitReady(d, 30_000);
    expect(d.stderr()).not.toMatch(ADMIN_KEY_LINE);
    expect((await call(d, 'GET', '/v1/auth/whoami', admin)).status).toBe(200);
    expect((await call(d, 'GET', '/v1/workspaces/shared-ws', admin)).body.name).toBe(
      'Renamed on b',
    );

    const { stdout } = await promisify(execFile)(
      process.execPath,
      [CLI, 'keys', 'create', '--role', 'admin', '--label', 'from the cli', '--json'],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ...env('cli') },
      },
    );
    const made = JSON.parse(stdout) as { api_key: string; key_id: string };
    for (const node of [a, b, d])
      await eventually(
        () => call(node, 'GET', '/v1/auth/whoami', made.api_key),
        (r) => r.status === 200,
        `the CLI's key on ${node.base}`,
      );
    const keys = (await call(b, 'GET', '/v1/keys', admin)).body.keys as Array<{
      key_id: string;
      role: string;
    }>;
    expect(keys.filter((k) => k.role === 'admin').map((k) => k.key_id)).toContain(made.key_id);
  });

  it('the race itself: eight stores on a new bucket asking for the first admin key at the same moment make exactly one', async () => {
    if (!nats) throw new Error('nats not started');
    const config = {
      natsUrls: [nats.url],
      clusterName: 'race',
      natsReplicas: 1,
      clusterLeaseMs: 3500,
    };
    const stores = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ClusterAuth.start({ config: { ...config, nodeId: `r${i}` }, log: () => undefined }),
      ),
    );
    try {
      await Promise.all(stores.map((s) => s.ensureWorkspaceShared('default', 'Default workspace')));
      const made = await Promise.all(stores.map((s) => s.firstAdminKey()));
      expect(made.filter((k) => k !== null)).toHaveLength(1);
      // Every store ends up with that one key and no other.
      const key = made.find((k) => k !== null) as string;
      for (const s of stores) {
        await until(() => s.authenticate(key) !== null, {
          what: 'the one admin key in every store',
          deadlineMs: PROPAGATION_BOUND_MS,
        });
        expect(s.authenticate(key)?.role).toBe('admin');
        expect(s.keys()).toHaveLength(1);
      }
      // A later start finds keys and makes none.
      expect(await stores[0]?.firstAdminKey()).toBeNull();
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
