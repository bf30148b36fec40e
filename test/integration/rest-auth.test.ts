/**
 * REST over real sockets: authentication, workspaces, keys, whoami and isolation between
 * workspaces (DESIGN.md 5, 3.2; spec 4.5, 5). Nothing one workspace key does may read, count,
 * change or reveal another workspace's memories, by any route.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataFiles } from '../helpers/data-files.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let seq = 0;
const uniqueSlug = (prefix: string): string => `${prefix}-${process.pid}-${++seq}`;

function randomHex(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += '0123456789abcdef'[Math.floor(Math.random() * 16)];
  return s;
}

async function createWorkspace(
  t: TestApp,
  slug: string,
  name?: string,
): Promise<{ key: string; keyId: string; body: any }> {
  const res = await t.req('POST', '/v1/workspaces', {
    body: name === undefined ? { slug } : { slug, name },
  });
  expect(res.status, res.text).toBe(201);
  return { key: res.body.api_key, keyId: res.body.key_id, body: res.body };
}

async function remember(
  t: TestApp,
  key: string,
  body: Record<string, unknown>,
  prefix = '',
): Promise<any> {
  const res = await t.req('POST', `${prefix}/v1/memories`, { body, key });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('authentication (auth on)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.stop());

  it('prints an admin key on first start in the documented form', () => {
    expect(t.adminKey).toMatch(/^fb_admin_[0-9A-Za-z]{32,}$/);
  });

  it('answers 401 with the JSON error body when the Authorization header is missing', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/memories', undefined],
      ['POST', '/v1/memories', { content: 'x' }],
      ['GET', '/v1/auth/whoami', undefined],
      ['GET', '/v1/entities', undefined],
      ['GET', '/v1/workspaces', undefined],
    ] as const) {
      const res = await t.req(method, path, { key: null, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.error_code).toBe('unauthenticated');
      expect(typeof res.body.message).toBe('string');
    }
    const list = await t.req('GET', '/v1/memories');
    expect(list.body.memories).toEqual([]);
  });

  it('answers 401 for a wrong key, an empty bearer and a key with a character changed', async () => {
    const wrongs = [
      'fb_admin_wrong',
      'nonsense',
      `${t.adminKey}x`,
      `${t.adminKey.slice(0, -1)}${t.adminKey.endsWith('a') ? 'b' : 'a'}`,
    ];
    for (const key of wrongs) {
      const res = await t.req('GET', '/v1/auth/whoami', { key });
      expect(res.status, key).toBe(401);
      expect(res.body.error_code).toBe('unauthenticated');
    }
    const empty = await t.req('GET', '/v1/auth/whoami', {
      key: null,
      headers: { authorization: 'Bearer ' },
    });
    expect(empty.status).toBe(401);
  });

  it('accepts a bare key without "Bearer ", and the scheme in any case', async () => {
    for (const authorization of [t.adminKey, `bearer ${t.adminKey}`, `BEARER ${t.adminKey}`]) {
      const res = await t.req('GET', '/v1/auth/whoami', { key: null, headers: { authorization } });
      expect(res.status, authorization.slice(0, 12)).toBe(200);
      expect(res.body.role).toBe('admin');
    }
  });

  it('serves the server-wide metrics to admin keys only: a workspace key gets 403', async () => {
    const ws = await t.req('POST', '/v1/workspaces', { body: { slug: 'metrics-peeker' } });
    expect(ws.status, ws.text).toBe(201);
    for (const path of ['/v1/metrics', '/v1/metrics/history']) {
      const refused = await t.req('GET', path, { key: ws.body.api_key as string });
      expect(refused.status, path).toBe(403);
      expect(refused.body).toMatchObject({
        error_code: 'forbidden',
        message: 'this operation needs an admin key',
      });
      expect((await t.req('GET', path)).status, path).toBe(200);
    }
  });

  it('requires the key for health and metrics', async () => {
    for (const path of ['/v1/health/live', '/v1/health/ready', '/v1/metrics']) {
      const res = await t.req('GET', path, { key: null });
      expect(res.status, path).toBe(401);
      expect(res.body.error_code).toBe('unauthenticated');
      const ok = await t.req('GET', path);
      expect(ok.status, path).toBe(200);
    }
    expect((await t.req('GET', '/v1/health/live')).body).toEqual({ status: 'alive' });
    expect((await t.req('GET', '/v1/health/ready')).body).toEqual({ status: 'ready' });
  });

  it('whoami describes an admin key', async () => {
    const res = await t.req('GET', '/v1/auth/whoami');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ role: 'admin', can_access: 'all', auth_enabled: true });
    expect(typeof res.body.key_id).toBe('string');
    expect(res.body.workspace.slug).toBe('default');
    expect(typeof res.body.workspace.name).toBe('string');
    const keys = await t.req('GET', '/v1/keys');
    expect(keys.body.keys.map((k: any) => k.key_id)).toContain(res.body.key_id);
  });

  it('whoami describes a workspace key', async () => {
    const slug = uniqueSlug('who');
    const ws = await createWorkspace(t, slug, 'Who Am I Inc');
    const res = await t.req('GET', '/v1/auth/whoami', { key: ws.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      key_id: ws.keyId,
      role: 'workspace',
      workspace: { slug, name: 'Who Am I Inc' },
      can_access: [slug],
      auth_enabled: true,
    });
  });
});

describe('workspaces and keys (admin routes)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.stop());

  it('creates a workspace (201) returning the workspace and a workspace api_key', async () => {
    const slug = uniqueSlug('acme');
    const res = await t.req('POST', '/v1/workspaces', { body: { slug, name: 'Acme Corp' } });
    expect(res.status).toBe(201);
    expect(res.body.workspace).toMatchObject({ slug, name: 'Acme Corp' });
    expect(Number.isInteger(res.body.workspace.created_at)).toBe(true);
    expect(res.body.api_key).toMatch(/^fb_live_[0-9A-Za-z]{32,}$/);
    const listed = await t.req('GET', '/v1/workspaces');
    expect(listed.status).toBe(200);
    expect(listed.body.workspaces.map((w: any) => w.slug)).toEqual(
      expect.arrayContaining(['default', slug]),
    );
    const got = await t.req('GET', `/v1/workspaces/${slug}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ slug, name: 'Acme Corp' });
    // The new key works at once and acts on its workspace.
    const who = await t.req('GET', '/v1/auth/whoami', { key: res.body.api_key });
    expect(who.body.workspace.slug).toBe(slug);
  });

  it('uses the slug as the name when none is given', async () => {
    const slug = uniqueSlug('noname');
    const { body } = await createWorkspace(t, slug);
    expect(typeof body.workspace.name).toBe('string');
    expect(body.workspace.name.length).toBeGreaterThan(0);
  });

  it('answers 409 for a duplicate slug and 400 for an invalid one', async () => {
    const slug = uniqueSlug('dup');
    await createWorkspace(t, slug);
    const dup = await t.req('POST', '/v1/workspaces', { body: { slug } });
    expect(dup.status).toBe(409);
    expect(dup.body.error_code).toBe('conflict');
    for (const bad of [
      'Upper',
      '-leading',
      '_leading',
      'has space',
      'a'.repeat(64),
      '',
      'dot.ted',
    ]) {
      const res = await t.req('POST', '/v1/workspaces', { body: { slug: bad } });
      expect(res.status, bad).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
    expect(
      (await t.req('POST', '/v1/workspaces', { body: { slug: `a${'b'.repeat(62)}` } })).status,
    ).toBe(201);
    expect((await t.req('POST', '/v1/workspaces', { body: {} })).status).toBe(400);
  });

  it('GET and DELETE of an unknown workspace are 404', async () => {
    expect((await t.req('GET', '/v1/workspaces/no-such-ws')).status).toBe(404);
    expect((await t.req('DELETE', '/v1/workspaces/no-such-ws')).status).toBe(404);
  });

  it('creates keys (201), shows the secret only at creation, lists without secrets, revokes', async () => {
    const slug = uniqueSlug('keys');
    await createWorkspace(t, slug);
    const created = await t.req('POST', '/v1/keys', {
      body: { workspace: slug, role: 'workspace', label: 'ci bot' },
    });
    expect(created.status).toBe(201);
    expect(created.body.api_key).toMatch(/^fb_live_[0-9A-Za-z]{32,}$/);
    expect(typeof created.body.key_id).toBe('string');
    const key = created.body.api_key as string;
    const keyId = created.body.key_id as string;

    const who = await t.req('GET', '/v1/auth/whoami', { key });
    expect(who.body).toMatchObject({ key_id: keyId, role: 'workspace', workspace: { slug } });

    const list = await t.req('GET', '/v1/keys');
    expect(list.status).toBe(200);
    const entry = list.body.keys.find((k: any) => k.key_id === keyId);
    expect(entry).toMatchObject({
      key_id: keyId,
      role: 'workspace',
      workspace: slug,
      label: 'ci bot',
    });
    const sha = createHash('sha256').update(key).digest('hex');
    expect(list.text).not.toContain(key);
    expect(list.text).not.toContain(t.adminKey);
    expect(list.text).not.toContain(sha);
    expect(list.text).not.toContain(createHash('sha256').update(t.adminKey).digest('hex'));
    for (const k of list.body.keys) {
      expect(k).not.toHaveProperty('api_key');
      expect(k).not.toHaveProperty('sha256');
      expect(k).not.toHaveProperty('hash');
      expect(k).not.toHaveProperty('key_hash');
    }
    // Workspaces listings do not carry keys either.
    const wsList = await t.req('GET', '/v1/workspaces');
    expect(wsList.text).not.toContain(key);
    expect(wsList.text).not.toContain(sha);

    const revoked = await t.req('DELETE', `/v1/keys/${keyId}`);
    expect(revoked.status).toBe(200);
    const after = await t.req('GET', '/v1/auth/whoami', { key });
    expect(after.status).toBe(401);
    expect(after.body.error_code).toBe('unauthenticated');
    expect((await t.req('GET', '/v1/memories', { key })).status).toBe(401);
    expect((await t.req('GET', '/v1/keys')).body.keys.map((k: any) => k.key_id)).not.toContain(
      keyId,
    );
    expect((await t.req('DELETE', `/v1/keys/${keyId}`)).status).toBe(404);
  });

  it('creates an admin key that can address any workspace', async () => {
    const slug = uniqueSlug('adm');
    const ws = await createWorkspace(t, slug);
    const created = await t.req('POST', '/v1/keys', {
      body: { workspace: 'default', role: 'admin', label: 'second admin' },
    });
    expect(created.status).toBe(201);
    expect(created.body.api_key).toMatch(/^fb_admin_[0-9A-Za-z]{32,}$/);
    const admin2 = created.body.api_key as string;
    const m = await remember(t, ws.key, { content: 'in ws' });
    const got = await t.req('GET', `/v1/workspaces/${slug}/memories/${m.memory_id}`, {
      key: admin2,
    });
    expect(got.status).toBe(200);
    expect((await t.req('GET', '/v1/workspaces', { key: admin2 })).status).toBe(200);
  });

  it('stores no API key in plain text anywhere in the data directory', async () => {
    const ws = await createWorkspace(t, uniqueSlug('plain'));
    const extra = await t.req('POST', '/v1/keys', {
      body: { workspace: 'default', role: 'admin' },
    });
    const secrets = [t.adminKey, ws.key, extra.body.api_key as string];
    for (const { path, bytes } of dataFiles(t.dataDir)) {
      for (const secret of secrets)
        expect(bytes.includes(secret), `${path} holds a key`).toBe(false);
    }
  });

  it('rejects key creation for an unknown workspace (404) or an unknown role (400)', async () => {
    const unknown = await t.req('POST', '/v1/keys', {
      body: { workspace: 'no-such-ws', role: 'workspace' },
    });
    expect(unknown.status).toBe(404);
    const role = await t.req('POST', '/v1/keys', { body: { workspace: 'default', role: 'root' } });
    expect(role.status).toBe(400);
    expect(role.body.message).toContain('role');
    const missing = await t.req('POST', '/v1/keys', { body: { role: 'workspace' } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('workspace');
  });

  it('DELETE workspace removes its memories and revokes its keys', async () => {
    const slug = uniqueSlug('gone');
    const ws = await createWorkspace(t, slug);
    const extra = await t.req('POST', '/v1/keys', { body: { workspace: slug, role: 'workspace' } });
    const m1 = await remember(t, ws.key, { content: 'doomed one', entity_id: 'x' });
    await remember(t, ws.key, { content: 'doomed two' });
    expect((await t.req('GET', `/v1/workspaces/${slug}`)).body.memory_count).toBe(2);

    const del = await t.req('DELETE', `/v1/workspaces/${slug}`);
    expect(del.status).toBe(200);
    expect((await t.req('GET', `/v1/workspaces/${slug}`)).status).toBe(404);
    expect(
      (await t.req('GET', '/v1/workspaces')).body.workspaces.map((w: any) => w.slug),
    ).not.toContain(slug);
    for (const key of [ws.key, extra.body.api_key as string]) {
      expect((await t.req('GET', '/v1/memories', { key })).status).toBe(401);
    }
    const keys = await t.req('GET', '/v1/keys');
    expect(keys.body.keys.filter((k: any) => k.workspace === slug)).toEqual([]);
    // The admin key addressing it now gets 404.
    expect((await t.req('GET', `/v1/workspaces/${slug}/memories`)).status).toBe(404);

    // A new workspace with the same slug starts empty; the old keys stay dead.
    const again = await createWorkspace(t, slug);
    const list = await t.req('GET', '/v1/memories?include_superseded=true', { key: again.key });
    expect(list.body).toEqual({ memories: [], next_cursor: null });
    expect((await t.req('GET', `/v1/memories/${m1.memory_id}`, { key: again.key })).status).toBe(
      404,
    );
    expect((await t.req('GET', '/v1/entities', { key: again.key })).body).toEqual([]);
    expect((await t.req('GET', `/v1/workspaces/${slug}`)).body.memory_count).toBe(0);
    expect((await t.req('GET', '/v1/memories', { key: ws.key })).status).toBe(401);
  });

  it('a workspace key gets 403 on every admin route', async () => {
    const slug = uniqueSlug('nonadmin');
    const ws = await createWorkspace(t, slug);
    const other = uniqueSlug('victim');
    await createWorkspace(t, other);
    const adminKeyId = (await t.req('GET', '/v1/auth/whoami')).body.key_id as string;
    const calls: Array<[string, string, unknown]> = [
      ['GET', '/v1/workspaces', undefined],
      ['POST', '/v1/workspaces', { slug: uniqueSlug('sneaky') }],
      ['GET', `/v1/workspaces/${slug}`, undefined],
      ['GET', `/v1/workspaces/${other}`, undefined],
      ['DELETE', `/v1/workspaces/${other}`, undefined],
      ['GET', '/v1/keys', undefined],
      ['POST', '/v1/keys', { workspace: slug, role: 'admin' }],
      ['POST', '/v1/keys', { workspace: slug, role: 'workspace' }],
      ['DELETE', `/v1/keys/${adminKeyId}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await t.req(method, path, {
        key: ws.key,
        ...(body === undefined ? {} : { body }),
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error_code).toBe('forbidden');
    }
    // Nothing happened.
    expect((await t.req('GET', `/v1/workspaces/${other}`)).status).toBe(200);
    expect((await t.req('GET', '/v1/auth/whoami')).status).toBe(200);
    expect(
      (await t.req('GET', '/v1/keys')).body.keys.filter((k: any) => k.workspace === slug),
    ).toHaveLength(1);
  });
});

describe('isolation between workspaces', () => {
  let t: TestApp;
  let a: { slug: string; key: string };
  let b: { slug: string; key: string };
  let secret: any;
  let secretTarget: any;

  beforeAll(async () => {
    t = await startTestApp();
    const slugA = uniqueSlug('iso-a');
    const slugB = uniqueSlug('iso-b');
    a = { slug: slugA, key: (await createWorkspace(t, slugA)).key };
    b = { slug: slugB, key: (await createWorkspace(t, slugB)).key };
    secretTarget = await remember(t, b.key, { content: 'b target', entity_id: 'b-secret-entity' });
    secret = await remember(t, b.key, {
      content: 'the launch code is 1234',
      entity_id: 'b-secret-entity',
      edges: [{ target_id: secretTarget.memory_id, edge_type: 'caused_by' }],
    });
    await remember(t, a.key, { content: 'a own memory', entity_id: 'a-entity' });
  });
  afterAll(async () => t.stop());

  async function bStillIntact(): Promise<void> {
    const got = await t.req('GET', `/v1/memories/${secret.memory_id}`, { key: b.key });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      content: 'the launch code is 1234',
      logical_clock: 0,
      kind: 'episode',
      entity_id: 'b-secret-entity',
    });
    const list = await t.req('GET', '/v1/memories?include_superseded=true', { key: b.key });
    expect(list.body.memories.map((m: any) => m.memory_id)).toEqual([
      secretTarget.memory_id,
      secret.memory_id,
    ]);
    const edges = await t.req('GET', `/v1/memories/${secret.memory_id}/edges`, { key: b.key });
    expect(edges.body.outgoing).toHaveLength(1);
    expect(edges.body.incoming).toEqual([]);
  }

  it('a foreign memory is 404 by id, in any id form, and its edges are 404', async () => {
    expect((await t.req('GET', `/v1/memories/${secret.memory_id}`, { key: a.key })).status).toBe(
      404,
    );
    expect(
      (await t.req('GET', `/v1/memories/${secret.memory_id.toUpperCase()}`, { key: a.key })).status,
    ).toBe(404);
    const edges = await t.req('GET', `/v1/memories/${secret.memory_id}/edges`, { key: a.key });
    expect(edges.status).toBe(404);
    expect(edges.text).not.toContain(secretTarget.memory_id);
    const res = await t.req('GET', `/v1/memories/${secret.memory_id}`, { key: a.key });
    expect(res.text).not.toContain('launch code');
  });

  it('batch get skips foreign ids', async () => {
    const own = (await t.req('GET', '/v1/memories', { key: a.key })).body.memories[0].memory_id;
    const res = await t.req('POST', '/v1/memories/batch', {
      key: a.key,
      body: { memory_ids: [secret.memory_id, own, secretTarget.memory_id] },
    });
    expect(res.status).toBe(200);
    expect(res.body.map((m: any) => m.memory_id)).toEqual([own]);
  });

  it('list, list by entity, list with a foreign cursor and entities do not leak', async () => {
    const list = await t.req('GET', '/v1/memories?include_superseded=true&limit=1000', {
      key: a.key,
    });
    expect(list.body.memories.map((m: any) => m.content)).toEqual(['a own memory']);
    const byEntity = await t.req('GET', '/v1/memories?entity_id=b-secret-entity', { key: a.key });
    expect(byEntity.body).toEqual({ memories: [], next_cursor: null });
    const cursor = await t.req('GET', `/v1/memories?cursor=${'0'.repeat(32)}`, { key: a.key });
    expect(cursor.text).not.toContain('launch code');
    const entities = await t.req('GET', '/v1/entities', { key: a.key });
    expect(entities.body).toEqual(['a-entity']);
  });

  it('revise of a foreign memory is 404 and changes nothing', async () => {
    const res = await t.req('PUT', `/v1/revise/${secret.memory_id}`, {
      key: a.key,
      body: { content: 'hijacked', entity_id: null },
    });
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('launch code');
    await bStillIntact();
  });

  it('forget by a foreign id, entity or broad criteria forgets nothing of the other workspace', async () => {
    const byId = await t.req('POST', '/v1/forget', {
      key: a.key,
      body: { memory_ids: [secret.memory_id, secretTarget.memory_id] },
    });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ forgotten_count: 0, cascade_count: 0, tombstone_count: 0 });
    const byEntity = await t.req('POST', '/v1/forget', {
      key: a.key,
      body: { entity_id: 'b-secret-entity' },
    });
    expect(byEntity.body.forgotten_count).toBe(0);
    await bStillIntact();
    // A broad forget in a throw-away workspace only touches that workspace.
    const c = await createWorkspace(t, uniqueSlug('iso-c'));
    await remember(t, c.key, { content: 'c1' });
    const broad = await t.req('POST', '/v1/forget', {
      key: c.key,
      body: { access_count_floor: 1_000_000 },
    });
    expect(broad.body.forgotten_count).toBe(1);
    await bStillIntact();
    expect((await t.req('GET', '/v1/memories', { key: a.key })).body.memories).toHaveLength(1);
  });

  it('an edge to a foreign memory is refused (400) and creates nothing', async () => {
    const res = await t.req('POST', '/v1/memories', {
      key: a.key,
      body: { content: 'link', edges: [{ target_id: secret.memory_id, edge_type: 'related_to' }] },
    });
    expect(res.status).toBe(400);
    expect((await t.req('GET', '/v1/memories', { key: a.key })).body.memories).toHaveLength(1);
    await bStillIntact();
  });

  it('a prefix naming another workspace, existing or not, is 403 on every data route', async () => {
    for (const target of [b.slug, 'does-not-exist', 'default']) {
      const p = `/v1/workspaces/${target}`;
      const calls: Array<[string, string, unknown]> = [
        ['GET', `${p}/memories`, undefined],
        ['POST', `${p}/memories`, { content: 'sneak' }],
        ['GET', `${p}/memories/${secret.memory_id}`, undefined],
        ['GET', `${p}/memories/${secret.memory_id}/edges`, undefined],
        ['POST', `${p}/memories/batch`, { memory_ids: [secret.memory_id] }],
        ['PUT', `${p}/revise/${secret.memory_id}`, { content: 'hijacked' }],
        ['POST', `${p}/forget`, { memory_ids: [secret.memory_id] }],
        ['POST', `${p}/forget`, { access_count_floor: 1_000_000 }],
        ['GET', `${p}/entities`, undefined],
      ];
      for (const [method, path, body] of calls) {
        const res = await t.req(method, path, {
          key: a.key,
          ...(body === undefined ? {} : { body }),
        });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error_code).toBe('forbidden');
        expect(res.text).not.toContain('launch code');
      }
    }
    await bStillIntact();
    // default was not written to either.
    expect(
      (await t.req('GET', '/v1/memories')).body.memories.map((m: any) => m.content),
    ).not.toContain('sneak');
  });

  it("a prefix naming the key's own workspace works", async () => {
    const res = await t.req('GET', `/v1/workspaces/${a.slug}/memories`, { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body.memories.map((m: any) => m.content)).toEqual(['a own memory']);
  });

  it('the admin key without prefix acts on default, and sees nothing of either workspace there', async () => {
    expect((await t.req('GET', `/v1/memories/${secret.memory_id}`)).status).toBe(404);
    const list = await t.req('GET', '/v1/memories?limit=1000&include_superseded=true');
    expect(list.text).not.toContain('launch code');
    expect(list.text).not.toContain('a own memory');
    const entities = await t.req('GET', '/v1/entities');
    expect(entities.body).not.toContain('b-secret-entity');
    expect(entities.body).not.toContain('a-entity');
  });

  it("a workspace key cannot learn the other workspace's size through admin routes", async () => {
    expect((await t.req('GET', `/v1/workspaces/${b.slug}`, { key: a.key })).status).toBe(403);
    expect((await t.req('GET', '/v1/workspaces', { key: a.key })).status).toBe(403);
  });
});

describe('workspace-scoped routes /v1/workspaces/<slug>/…', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.stop());

  it('behave like the unprefixed routes on that workspace', async () => {
    const slug = uniqueSlug('scoped');
    const ws = await createWorkspace(t, slug);
    const p = `/v1/workspaces/${slug}`;

    const a = await t.req('POST', `${p}/memories`, {
      body: { content: 'scoped a', entity_id: 'sa' },
    });
    expect(a.status).toBe(201);
    const b = await t.req('POST', `${p}/memories`, {
      body: {
        content: 'scoped b',
        entity_id: 'sb',
        edges: [{ target_id: a.body.memory_id, edge_type: 'FollowedBy' }],
      },
    });
    expect(b.status).toBe(201);

    // Not in default.
    expect((await t.req('GET', `/v1/memories/${a.body.memory_id}`)).status).toBe(404);
    expect((await t.req('GET', '/v1/memories')).body.memories).toEqual([]);

    const got = await t.req('GET', `${p}/memories/${a.body.memory_id}`);
    expect(got.status).toBe(200);
    expect(got.body.content).toBe('scoped a');
    const list = await t.req('GET', `${p}/memories?limit=1`);
    expect(list.body.memories.map((m: any) => m.memory_id)).toEqual([a.body.memory_id]);
    expect(list.body.next_cursor).toBe(a.body.memory_id);
    const page2 = await t.req('GET', `${p}/memories?limit=1&cursor=${list.body.next_cursor}`);
    expect(page2.body.memories.map((m: any) => m.memory_id)).toEqual([b.body.memory_id]);
    expect(page2.body.next_cursor).toBeNull();
    const filtered = await t.req('GET', `${p}/memories?entity_id=sb`);
    expect(filtered.body.memories.map((m: any) => m.memory_id)).toEqual([b.body.memory_id]);
    const batch = await t.req('POST', `${p}/memories/batch`, {
      body: { memory_ids: [b.body.memory_id, a.body.memory_id] },
    });
    expect(batch.body.map((m: any) => m.memory_id)).toEqual([b.body.memory_id, a.body.memory_id]);
    const edges = await t.req('GET', `${p}/memories/${b.body.memory_id}/edges`);
    expect(edges.body.outgoing.map((e: any) => e.edge_type)).toEqual(['followed_by']);
    expect((await t.req('GET', `${p}/entities`)).body).toEqual(['sa', 'sb']);

    const rev = await t.req('PUT', `${p}/revise/${a.body.memory_id}`, {
      body: { content: 'scoped a v2' },
    });
    expect(rev.status).toBe(200);
    expect(rev.body).toMatchObject({
      memory_id: a.body.memory_id,
      kind: 'revision',
      logical_clock: 1,
    });
    expect(
      (await t.req('GET', `${p}/memories?include_superseded=true`)).body.memories,
    ).toHaveLength(3);

    // The workspace's own key sees the same state without a prefix.
    const own = await t.req('GET', '/v1/memories', { key: ws.key });
    expect(own.body.memories.map((m: any) => m.content)).toEqual(['scoped a v2', 'scoped b']);
    expect((await t.req('GET', `/v1/workspaces/${slug}`)).body.memory_count).toBe(2);

    const f = await t.req('POST', `${p}/forget`, { body: { entity_id: 'sa' } });
    expect(f.status).toBe(200);
    expect(f.body).toEqual({
      forgotten_count: 1,
      cascade_count: 1,
      truncated: false,
      tombstone_count: 2,
    });
    expect((await t.req('GET', `${p}/entities`)).body).toEqual(['sb']);
    expect(
      (await t.req('GET', '/v1/memories', { key: ws.key })).body.memories.map(
        (m: any) => m.content,
      ),
    ).toEqual(['scoped b']);
  });

  it('an admin prefix naming an unknown workspace is 404', async () => {
    const res = await t.req('GET', '/v1/workspaces/never-made/memories');
    expect(res.status).toBe(404);
    expect(res.body.error_code).toBe('not_found');
    const post = await t.req('POST', '/v1/workspaces/never-made/memories', {
      body: { content: 'x' },
    });
    expect(post.status).toBe(404);
    expect((await t.req('GET', '/v1/workspaces/never-made')).status).toBe(404);
  });
});

describe('FLASHBULB_PUBLIC_HEALTH', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ publicHealth: true });
  });
  afterAll(async () => t.stop());

  it('exempts /v1/health/* from the key, and only those', async () => {
    const live = await t.req('GET', '/v1/health/live', { key: null });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'alive' });
    const ready = await t.req('GET', '/v1/health/ready', { key: null });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
    expect((await t.req('GET', '/v1/metrics', { key: null })).status).toBe(401);
    expect((await t.req('GET', '/v1/memories', { key: null })).status).toBe(401);
    expect((await t.req('GET', '/v1/auth/whoami', { key: null })).status).toBe(401);
  });
});

describe('authentication disabled', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ authEnabled: false });
  });
  afterAll(async () => t.stop());

  it('creates no admin key', () => {
    expect(t.adminKey).toBe('');
  });

  it('needs no header; whoami is admin on default with key_id null', async () => {
    const who = await t.req('GET', '/v1/auth/whoami', { key: null });
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({
      key_id: null,
      role: 'admin',
      can_access: 'all',
      auth_enabled: false,
    });
    expect(who.body.workspace.slug).toBe('default');
  });

  it('serves the data routes, health and metrics without a key, on the default workspace', async () => {
    const m = await t.req('POST', '/v1/memories', { key: null, body: { content: 'open door' } });
    expect(m.status).toBe(201);
    const got = await t.req('GET', `/v1/memories/${m.body.memory_id}`, { key: null });
    expect(got.body.content).toBe('open door');
    const list = await t.req('GET', '/v1/memories', { key: null });
    expect(list.body.memories.map((x: any) => x.memory_id)).toEqual([m.body.memory_id]);
    expect((await t.req('GET', '/v1/health/live', { key: null })).status).toBe(200);
    expect((await t.req('GET', '/v1/health/ready', { key: null })).status).toBe(200);
    expect((await t.req('GET', '/v1/metrics', { key: null })).status).toBe(200);
    const f = await t.req('POST', '/v1/forget', {
      key: null,
      body: { memory_ids: [m.body.memory_id] },
    });
    expect(f.body.forgotten_count).toBe(1);
    expect((await t.req('GET', `/v1/memories/${randomHex()}`, { key: null })).status).toBe(404);
  });
});
