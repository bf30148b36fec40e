/**
 * gRPC authentication, workspaces (tenant_id) and HealthService over real HTTP/2 (DESIGN.md 4,
 * 5; spec 5.6: in authenticated deployments a tenant_id that differs from the key's tenant is not
 * honoured — the key's workspace applies; admin keys may name any existing workspace; with
 * authentication off tenant_id is honoured and defaults to `default`). Where a memory lands is
 * checked over REST with the owning key, not only through gRPC.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import {
  connectGrpc,
  failsWith,
  hex,
  type GrpcAuth,
  type GrpcClient,
  type ServiceName,
} from '../helpers/grpc.ts';

/**
 * Background reflection writes insight memories whenever enough new episodes arrive, which would
 * change counts and orderings these tests assert exactly; it is off here (explicit RPCs still run).
 */
const QUIET_ENV = { FLASHBULB_REFLECT_ENABLED: 'false' };

let seq = 0;
const slug = (prefix: string): string => `${prefix}-${process.pid}-${++seq}`;

async function createWorkspace(t: TestApp, name: string): Promise<string> {
  const res = await t.req('POST', '/v1/workspaces', { body: { slug: name } });
  expect(res.status, res.text).toBe(201);
  return res.body.api_key as string;
}

/** One request per tenant-carrying MemoryService / ReflectService RPC. */
function everyTenantRpc(id: Buffer): Array<[ServiceName, string, object]> {
  return [
    ['MemoryService', 'Remember', { content: 'tenant probe' }],
    ['MemoryService', 'Get', { memory_id: id }],
    [
      'MemoryService',
      'Recall',
      { cue: 'tenant probe', strategies: [{ strategy_type: 'SIMILARITY' }] },
    ],
    ['MemoryService', 'Prime', { entity_id: 'e' }],
    ['MemoryService', 'Revise', { memory_id: id, content: 'x' }],
    ['MemoryService', 'Forget', { memory_ids: [id] }],
    ['ReflectService', 'GetInsights', {}],
  ];
}

// ─── auth on ─────────────────────────────────────────────────────────────────────────────

describe('gRPC with authentication on', () => {
  let t: TestApp;
  let rpc: GrpcClient;
  let admin: GrpcAuth;
  beforeAll(async () => {
    t = await startTestApp({}, QUIET_ENV);
    rpc = connectGrpc(t.app.grpcPort);
    admin = { key: t.adminKey };
  });
  afterAll(async () => {
    rpc.close();
    await t.stop();
  });

  describe('HealthService.Check', () => {
    it('needs no key and reports SERVING, version, memory_count over all workspaces and uptime', async () => {
      const first = await rpc.call('HealthService', 'Check', {});
      expect(first.status).toBe('SERVING');
      expect(first.version).toBe(t.app.svc.version);
      expect(first.version.length).toBeGreaterThan(0);
      expect(first.memory_count).toMatch(/^\d+$/);
      expect(first.uptime_seconds).toMatch(/^\d+$/);
      expect(Number(first.uptime_seconds)).toBeLessThan(600);
      const before = Number(first.memory_count);
      const ws = slug('health');
      await createWorkspace(t, ws);
      await rpc.call('MemoryService', 'Remember', { content: 'counted in default' }, admin);
      await rpc.call(
        'MemoryService',
        'Remember',
        { content: 'counted in ws', tenant_id: ws },
        admin,
      );
      const after = await rpc.call('HealthService', 'Check', {});
      expect(Number(after.memory_count)).toBe(before + 2);
      // A wrong key does not matter to health.
      expect((await rpc.call('HealthService', 'Check', {}, { key: 'fb_admin_wrong' })).status).toBe(
        'SERVING',
      );
    });
  });

  describe('keys', () => {
    it('a missing key is UNAUTHENTICATED on every tenant-carrying RPC', async () => {
      for (const [svc, method, req] of everyTenantRpc(Buffer.alloc(16, 1))) {
        await failsWith(
          rpc.call(svc, method, req),
          grpc.status.UNAUTHENTICATED,
          `${svc}.${method}`,
        );
      }
    });

    it('a wrong, truncated or empty key is UNAUTHENTICATED', async () => {
      for (const authorization of [
        'Bearer fb_admin_wrong',
        `Bearer ${t.adminKey.slice(0, -1)}`,
        `Bearer ${t.adminKey}x`,
        'Bearer ',
        'nonsense',
      ]) {
        await failsWith(
          rpc.call('MemoryService', 'Remember', { content: 'x' }, { authorization }),
          grpc.status.UNAUTHENTICATED,
          authorization.slice(0, 16),
        );
      }
    });

    it('SetPolicy and the reflect/contradiction RPCs check the key first (UNAUTHENTICATED, not UNIMPLEMENTED)', async () => {
      const calls: Array<[ServiceName, string, object]> = [
        ['MemoryService', 'SetPolicy', {}],
        ['ReflectService', 'Reflect', { scope: { global: {} } }],
        ['ReflectService', 'ReflectPrepare', { scope: { global: {} } }],
        ['ReflectService', 'ReflectCommit', { session_id: 'x' }],
        ['ReflectService', 'ContradictionPrepare', {}],
        ['ReflectService', 'ContradictionCommit', {}],
      ];
      for (const [svc, method, req] of calls)
        await failsWith(
          rpc.call(svc, method, req),
          grpc.status.UNAUTHENTICATED,
          `${svc}.${method}`,
        );
    });

    it('accepts `Bearer <key>`, a bare key and the scheme in any case', async () => {
      for (const authorization of [
        `Bearer ${t.adminKey}`,
        t.adminKey,
        `bearer ${t.adminKey}`,
        `BEARER ${t.adminKey}`,
      ]) {
        const res = await rpc.call(
          'MemoryService',
          'Remember',
          { content: `auth form ${authorization.slice(0, 7)}` },
          { authorization },
        );
        expect(res.memory.memory_id).toHaveLength(16);
      }
    });

    it('a revoked key is UNAUTHENTICATED at once', async () => {
      const ws = slug('revoked');
      await createWorkspace(t, ws);
      const created = await t.req('POST', '/v1/keys', {
        body: { workspace: ws, role: 'workspace' },
      });
      expect(created.status).toBe(201);
      const key = created.body.api_key as string;
      await rpc.call('MemoryService', 'Remember', { content: 'before revoke' }, { key });
      expect((await t.req('DELETE', `/v1/keys/${created.body.key_id}`)).status).toBe(200);
      await failsWith(
        rpc.call('MemoryService', 'Remember', { content: 'after revoke' }, { key }),
        grpc.status.UNAUTHENTICATED,
      );
    });
  });

  describe('admin key and tenant_id', () => {
    it('without tenant_id acts on default', async () => {
      const m = (await rpc.call('MemoryService', 'Remember', { content: 'admin default' }, admin))
        .memory;
      expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`)).status).toBe(200);
      const emptyTenant = (
        await rpc.call(
          'MemoryService',
          'Remember',
          { content: 'admin default 2', tenant_id: '' },
          admin,
        )
      ).memory;
      expect((await t.req('GET', `/v1/memories/${hex(emptyTenant.memory_id)}`)).status).toBe(200);
    });

    it('tenant_id naming an existing workspace acts on that workspace, for every RPC', async () => {
      const ws = slug('adm-target');
      const wsKey = await createWorkspace(t, ws);
      const m = (
        await rpc.call(
          'MemoryService',
          'Remember',
          { content: 'admin wrote into ws', entity_id: 'e', tenant_id: ws },
          admin,
        )
      ).memory;
      // It is in ws (seen by ws's own key and by the admin prefix), not in default.
      expect(
        (await t.req('GET', `/v1/memories/${hex(m.memory_id)}`, { key: wsKey })).body.content,
      ).toBe('admin wrote into ws');
      expect((await t.req('GET', `/v1/workspaces/${ws}/memories/${hex(m.memory_id)}`)).status).toBe(
        200,
      );
      expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`)).status).toBe(404);
      // Every other RPC follows tenant_id too.
      expect(
        (await rpc.call('MemoryService', 'Get', { memory_id: m.memory_id, tenant_id: ws }, admin))
          .memory.content,
      ).toBe('admin wrote into ws');
      await failsWith(
        rpc.call('MemoryService', 'Get', { memory_id: m.memory_id }, admin),
        grpc.status.NOT_FOUND,
      );
      const recall = await rpc.call(
        'MemoryService',
        'Recall',
        { cue: 'admin wrote', strategies: [{ strategy_type: 'TEMPORAL' }], tenant_id: ws },
        admin,
      );
      expect(recall.results.map((r: any) => r.memory.content)).toEqual(['admin wrote into ws']);
      const prime = await rpc.call(
        'MemoryService',
        'Prime',
        { entity_id: 'e', tenant_id: ws },
        admin,
      );
      expect(prime.results).toHaveLength(1);
      const revised = await rpc.call(
        'MemoryService',
        'Revise',
        { memory_id: m.memory_id, content: 'admin revised in ws', tenant_id: ws },
        admin,
      );
      expect(revised.memory.logical_clock).toBe('1');
      expect(
        (await t.req('GET', `/v1/memories/${hex(m.memory_id)}`, { key: wsKey })).body.content,
      ).toBe('admin revised in ws');
      expect(await rpc.call('ReflectService', 'GetInsights', { tenant_id: ws }, admin)).toEqual({
        insights: [],
      });
      const forgot = await rpc.call(
        'MemoryService',
        'Forget',
        { memory_ids: [m.memory_id], tenant_id: ws },
        admin,
      );
      expect(forgot.forgotten_count).toBe('1');
      expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`, { key: wsKey })).status).toBe(
        404,
      );
    });

    it('tenant_id naming an unknown workspace is NOT_FOUND on every RPC and creates nothing', async () => {
      const ws = slug('never-made');
      for (const [svc, method, req] of everyTenantRpc(Buffer.alloc(16, 2))) {
        await failsWith(
          rpc.call(svc, method, { ...req, tenant_id: ws }, admin),
          grpc.status.NOT_FOUND,
          `${svc}.${method}`,
        );
      }
      expect((await t.req('GET', `/v1/workspaces/${ws}`)).status).toBe(404);
    });

    it('tenant_id that is not a valid workspace slug is INVALID_ARGUMENT', async () => {
      for (const bad of ['Upper', 'has space', '-lead', 'a'.repeat(64)]) {
        await failsWith(
          rpc.call('MemoryService', 'Remember', { content: 'x', tenant_id: bad }, admin),
          grpc.status.INVALID_ARGUMENT,
          bad,
        );
      }
    });
  });

  describe('workspace key and tenant_id', () => {
    let mine: string;
    let mineKey: string;
    let theirs: string;
    let theirsKey: string;
    let theirSecret: Buffer;
    beforeAll(async () => {
      mine = slug('mine');
      theirs = slug('theirs');
      mineKey = await createWorkspace(t, mine);
      theirsKey = await createWorkspace(t, theirs);
      theirSecret = (
        await rpc.call(
          'MemoryService',
          'Remember',
          { content: 'their secret plan', entity_id: 'secret' },
          { key: theirsKey },
        )
      ).memory.memory_id;
    });

    it('acts on its own workspace whatever tenant_id says (another workspace, an unknown one, default)', async () => {
      for (const tenant of [theirs, 'no-such-workspace', 'default', mine]) {
        const m = (
          await rpc.call(
            'MemoryService',
            'Remember',
            { content: `written with tenant ${tenant}`, tenant_id: tenant },
            { key: mineKey },
          )
        ).memory;
        const own = await t.req('GET', `/v1/memories/${hex(m.memory_id)}`, { key: mineKey });
        expect(own.status, tenant).toBe(200);
        expect(own.body.content).toBe(`written with tenant ${tenant}`);
        expect(
          (await t.req('GET', `/v1/memories/${hex(m.memory_id)}`, { key: theirsKey })).status,
          tenant,
        ).toBe(404);
        expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`)).status, tenant).toBe(404);
        // Reading it back with the same foreign tenant_id works, because that, too, is the own workspace.
        expect(
          (
            await rpc.call(
              'MemoryService',
              'Get',
              { memory_id: m.memory_id, tenant_id: tenant },
              { key: mineKey },
            )
          ).memory.content,
        ).toBe(`written with tenant ${tenant}`);
      }
      expect((await t.req('GET', '/v1/workspaces/no-such-workspace')).status).toBe(404);
    });

    it("cannot read, recall, revise or forget the other workspace's memory by naming it", async () => {
      const as = { key: mineKey };
      await failsWith(
        rpc.call('MemoryService', 'Get', { memory_id: theirSecret, tenant_id: theirs }, as),
        grpc.status.NOT_FOUND,
      );
      const recall = await rpc.call(
        'MemoryService',
        'Recall',
        {
          cue: 'their secret plan',
          strategies: [
            { strategy_type: 'SIMILARITY' },
            { strategy_type: 'TEMPORAL', entity_id: 'secret' },
          ],
          tenant_id: theirs,
        },
        as,
      );
      expect(JSON.stringify(recall.results.map((r: any) => r.memory.content))).not.toContain(
        'their secret plan',
      );
      const prime = await rpc.call(
        'MemoryService',
        'Prime',
        { entity_id: 'secret', tenant_id: theirs },
        as,
      );
      expect(prime.results).toEqual([]);
      await failsWith(
        rpc.call(
          'MemoryService',
          'Revise',
          { memory_id: theirSecret, content: 'hijacked', tenant_id: theirs },
          as,
        ),
        grpc.status.NOT_FOUND,
      );
      const forgot = await rpc.call(
        'MemoryService',
        'Forget',
        { memory_ids: [theirSecret], tenant_id: theirs },
        as,
      );
      expect(forgot.forgotten_count).toBe('0');
      const byEntity = await rpc.call(
        'MemoryService',
        'Forget',
        { entity_id: 'secret', tenant_id: theirs },
        as,
      );
      expect(byEntity.forgotten_count).toBe('0');
      const still = await t.req('GET', `/v1/memories/${hex(theirSecret)}`, { key: theirsKey });
      expect(still.body).toMatchObject({ content: 'their secret plan', logical_clock: 0 });
    });
  });
});

// ─── auth off ────────────────────────────────────────────────────────────────────────────

describe('gRPC with authentication off', () => {
  let t: TestApp;
  let rpc: GrpcClient;
  beforeAll(async () => {
    t = await startTestApp({ authEnabled: false }, QUIET_ENV);
    rpc = connectGrpc(t.app.grpcPort);
  });
  afterAll(async () => {
    rpc.close();
    await t.stop();
  });

  it('needs no key; without tenant_id (or with an empty one) acts on default', async () => {
    const a = (await rpc.call('MemoryService', 'Remember', { content: 'open default' })).memory;
    const b = (
      await rpc.call('MemoryService', 'Remember', {
        content: 'open default empty tenant',
        tenant_id: '',
      })
    ).memory;
    for (const m of [a, b])
      expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`, { key: null })).status).toBe(
        200,
      );
    expect(
      (await rpc.call('MemoryService', 'Get', { memory_id: a.memory_id, tenant_id: 'default' }))
        .memory.content,
    ).toBe('open default');
  });

  it('honours tenant_id, creating the workspace on first use, and keeps workspaces apart', async () => {
    const ws = slug('auto');
    expect((await t.req('GET', `/v1/workspaces/${ws}`, { key: null })).status).toBe(404);
    const m = (
      await rpc.call('MemoryService', 'Remember', {
        content: 'lands in the named tenant',
        tenant_id: ws,
      })
    ).memory;
    expect((await t.req('GET', `/v1/workspaces/${ws}`, { key: null })).status).toBe(200);
    expect(
      (await t.req('GET', `/v1/workspaces/${ws}/memories/${hex(m.memory_id)}`, { key: null })).body
        .content,
    ).toBe('lands in the named tenant');
    expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`, { key: null })).status).toBe(
      404,
    );
    expect(
      (await rpc.call('MemoryService', 'Get', { memory_id: m.memory_id, tenant_id: ws })).memory
        .content,
    ).toBe('lands in the named tenant');
    await failsWith(
      rpc.call('MemoryService', 'Get', { memory_id: m.memory_id }),
      grpc.status.NOT_FOUND,
    );
    await failsWith(
      rpc.call('MemoryService', 'Get', { memory_id: m.memory_id, tenant_id: slug('elsewhere') }),
      grpc.status.NOT_FOUND,
    );
    // Reads on a tenant never written to answer empty (the workspace is created, holding nothing).
    const empty = slug('empty');
    expect(
      (
        await rpc.call('MemoryService', 'Recall', {
          cue: 'anything',
          strategies: [{ strategy_type: 'TEMPORAL' }],
          tenant_id: empty,
        })
      ).results,
    ).toEqual([]);
  });

  it('ignores any authorization metadata, even a bogus key', async () => {
    const m = await rpc.call(
      'MemoryService',
      'Remember',
      { content: 'bogus key ignored' },
      { key: 'fb_admin_bogus' },
    );
    expect(m.memory.content).toBe('bogus key ignored');
  });

  it('still refuses a tenant_id that is not a valid slug (INVALID_ARGUMENT)', async () => {
    await failsWith(
      rpc.call('MemoryService', 'Remember', { content: 'x', tenant_id: 'Not A Slug' }),
      grpc.status.INVALID_ARGUMENT,
    );
  });

  it('HealthService.Check is SERVING and counts every workspace', async () => {
    const h = await rpc.call('HealthService', 'Check', {});
    expect(h.status).toBe('SERVING');
    expect(h.version).toBe(t.app.svc.version);
    await rpc.call('MemoryService', 'Remember', { content: 'counted', tenant_id: slug('counted') });
    expect(Number((await rpc.call('HealthService', 'Check', {})).memory_count)).toBe(
      Number(h.memory_count) + 1,
    );
  });
});
