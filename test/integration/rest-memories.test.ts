/**
 * REST over real sockets: remember, get (hex and ULID forms), list with cursor paging and filters,
 * batch get and edges (DESIGN.md 2, 3.1, 3.3, 3.4; spec 4.1, 4.6). One server for the file; each
 * test works in a workspace of its own so counts and orderings are exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const HEX32 = /^[0-9a-f]{32}$/;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const MEMORY_FIELDS = [
  'memory_id',
  'content',
  'importance',
  'context',
  'entity_id',
  'kind',
  'created_at',
  'updated_at',
  'last_accessed_at',
  'access_count',
  'decay_score',
  'logical_clock',
] as const;

/** The 26-character ULID text form of a 32-hex id (written here, independently of src/). */
function ulidText(hex: string): string {
  let value = BigInt(`0x${hex}`);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = `${CROCKFORD[Number(value & 31n)]}${out}`;
    value >>= 5n;
  }
  return out;
}

function randomHex(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += '0123456789abcdef'[Math.floor(Math.random() * 16)];
  return s;
}

let t: TestApp;
let seq = 0;

type Req = (
  method: string,
  path: string,
  opts?: { body?: unknown; headers?: Record<string, string>; raw?: string },
) => ReturnType<TestApp['req']>;

/** A fresh workspace and a request function bound to its own key. */
async function freshWorkspace(): Promise<{ slug: string; key: string; req: Req }> {
  const slug = `mem-${process.pid}-${++seq}`;
  const created = await t.inject('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status).toBe(201);
  const key = created.body.api_key as string;
  return { slug, key, req: (method, path, opts = {}) => t.inject(method, path, { ...opts, key }) };
}

async function remember(req: Req, body: Record<string, unknown>): Promise<any> {
  const res = await req('POST', '/v1/memories', { body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Creates memories one after another, so creation order is the order given. */
async function rememberMany(
  req: Req,
  n: number,
  extra: Record<string, unknown> = {},
): Promise<any[]> {
  const out: any[] = [];
  for (let i = 0; i < n; i++)
    out.push(await remember(req, { content: `memory number ${i}`, ...extra }));
  return out;
}

/** Follows next_cursor to the end; returns every page. */
async function allPages(req: Req, query: string): Promise<any[]> {
  const pages: any[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const sep = query === '' ? '' : '&';
    const res = await req(
      'GET',
      `/v1/memories?${query}${cursor === null ? '' : `${sep}cursor=${cursor}`}`,
    );
    expect(res.status, res.text).toBe(200);
    pages.push(res.body);
    cursor = res.body.next_cursor;
    if (cursor === null) return pages;
  }
  throw new Error('paging did not end');
}

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.stop());

describe('POST /v1/memories', () => {
  it('returns 201 and the full Memory JSON with defaults', async () => {
    const { req } = await freshWorkspace();
    const before = Date.now() * 1000;
    const res = await req('POST', '/v1/memories', { body: { content: 'the kettle is broken' } });
    const after = Date.now() * 1000;
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const m = res.body;
    for (const field of MEMORY_FIELDS) expect(m, `field ${field}`).toHaveProperty(field);
    expect(m).not.toHaveProperty('embedding');
    expect(m).not.toHaveProperty('superseded_by');
    expect(m).not.toHaveProperty('source_memory_ids');
    expect(m.memory_id).toMatch(HEX32);
    expect(m.content).toBe('the kettle is broken');
    expect(m.importance).toBe(0.5);
    expect(m.context).toEqual({});
    expect(m.entity_id).toBeNull();
    expect(m.kind).toBe('episode');
    for (const f of ['created_at', 'updated_at', 'last_accessed_at'] as const) {
      expect(Number.isInteger(m[f]), f).toBe(true);
      // Microseconds: within the request's wall-clock window (ms resolution allowed).
      expect(m[f], f).toBeGreaterThanOrEqual(before - 1000);
      expect(m[f], f).toBeLessThanOrEqual(after + 1000);
    }
    expect(m.updated_at).toBe(m.created_at);
    expect(m.last_accessed_at).toBe(m.created_at);
    expect(m.access_count).toBe(0);
    expect(typeof m.decay_score).toBe('number');
    expect(m.decay_score).toBeGreaterThan(0.49);
    expect(m.decay_score).toBeLessThanOrEqual(0.5);
    expect(m.logical_clock).toBe(0);
  });

  it('stores importance, context and entity_id as given, and GET returns the same memory', async () => {
    const { req } = await freshWorkspace();
    const body = {
      content: 'Alice prefers tea',
      importance: 0.9,
      context: { source: 'chat', n: 3, tags: ['a'] },
      entity_id: 'alice',
    };
    const m = await remember(req, body);
    expect(m).toMatchObject({
      content: body.content,
      importance: 0.9,
      context: body.context,
      entity_id: 'alice',
      kind: 'episode',
    });
    const got = await req('GET', `/v1/memories/${m.memory_id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      memory_id: m.memory_id,
      content: body.content,
      importance: 0.9,
      context: body.context,
      entity_id: 'alice',
    });
    expect(got.body).not.toHaveProperty('embedding');
  });

  it('treats context null as {} and entity_id null as absent', async () => {
    const { req } = await freshWorkspace();
    const m = await remember(req, { content: 'nulls', context: null, entity_id: null });
    expect(m.context).toEqual({});
    expect(m.entity_id).toBeNull();
  });

  it('ignores unknown JSON fields', async () => {
    const { req } = await freshWorkspace();
    const m = await remember(req, { content: 'extra fields', colour: 'blue', tenant_id: 'other' });
    expect(m.content).toBe('extra fields');
    expect(m).not.toHaveProperty('colour');
  });

  it('gives increasing ids in creation order', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 5);
    const ids = made.map((m) => m.memory_id as string);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(5);
  });
});

describe('edges on POST /v1/memories', () => {
  it('stores an edge to an existing target and shows it from both ends', async () => {
    const { req } = await freshWorkspace();
    const target = await remember(req, { content: 'the storm' });
    const source = await remember(req, {
      content: 'the power cut',
      edges: [{ target_id: target.memory_id, edge_type: 'caused_by', confidence: 0.7 }],
    });
    const out = await req('GET', `/v1/memories/${source.memory_id}/edges`);
    expect(out.status).toBe(200);
    expect(out.body.incoming).toEqual([]);
    expect(out.body.outgoing).toHaveLength(1);
    const e = out.body.outgoing[0];
    expect(e).toMatchObject({
      source_id: source.memory_id,
      target_id: target.memory_id,
      edge_type: 'caused_by',
    });
    expect(e.confidence).toBeCloseTo(0.7, 6);
    expect(Number.isInteger(e.timestamp_us)).toBe(true);
    expect(e.timestamp_us).toBeGreaterThan(1e15);
    const back = await req('GET', `/v1/memories/${target.memory_id}/edges`);
    expect(back.body.outgoing).toEqual([]);
    expect(back.body.incoming).toEqual([e]);
  });

  it('defaults edge confidence to 1.0', async () => {
    const { req } = await freshWorkspace();
    const target = await remember(req, { content: 'a' });
    const source = await remember(req, {
      content: 'b',
      edges: [{ target_id: target.memory_id, edge_type: 'related_to' }],
    });
    const out = await req('GET', `/v1/memories/${source.memory_id}/edges`);
    expect(out.body.outgoing[0].confidence).toBe(1);
  });

  it('accepts a target id in upper-case hex and in ULID text form', async () => {
    const { req } = await freshWorkspace();
    const target = await remember(req, { content: 'target' });
    const a = await remember(req, {
      content: 'a',
      edges: [{ target_id: target.memory_id.toUpperCase(), edge_type: 'related_to' }],
    });
    const b = await remember(req, {
      content: 'b',
      edges: [{ target_id: ulidText(target.memory_id), edge_type: 'related_to' }],
    });
    for (const m of [a, b]) {
      const out = await req('GET', `/v1/memories/${m.memory_id}/edges`);
      expect(out.body.outgoing[0].target_id).toBe(target.memory_id);
    }
  });

  it.each([
    'caused_by',
    'CausedBy',
    'CAUSED_BY',
    'EDGE_TYPE_CAUSED_BY',
    'causedby',
    'edge_type_caused_by',
    'Caused_By',
  ])('normalises edge_type %s to caused_by', async (spelling) => {
    const { req } = await freshWorkspace();
    const target = await remember(req, { content: 'cause' });
    const source = await remember(req, {
      content: 'effect',
      edges: [{ target_id: target.memory_id, edge_type: spelling }],
    });
    const out = await req('GET', `/v1/memories/${source.memory_id}/edges`);
    expect(out.body.outgoing.map((e: any) => e.edge_type)).toEqual(['caused_by']);
    const back = await req('GET', `/v1/memories/${target.memory_id}/edges`);
    expect(back.body.incoming.map((e: any) => e.edge_type)).toEqual(['caused_by']);
  });

  it('normalises every edge type from its CamelCase and proto spellings', async () => {
    const { req } = await freshWorkspace();
    const target = await remember(req, { content: 'hub' });
    const spellings: Record<string, string> = {
      RelatedTo: 'related_to',
      FOLLOWED_BY: 'followed_by',
      EDGE_TYPE_REVISED_FROM: 'revised_from',
      InsightFrom: 'insight_from',
      contradicts: 'contradicts',
      HAS_ENTITY: 'has_entity',
      EntityRelation: 'entity_relation',
      EDGE_TYPE_PROPOSITION_OF: 'proposition_of',
    };
    const edges = Object.keys(spellings).map((edge_type) => ({
      target_id: target.memory_id,
      edge_type,
    }));
    const source = await remember(req, { content: 'spoke', edges });
    const out = await req('GET', `/v1/memories/${source.memory_id}/edges`);
    expect(out.body.outgoing.map((e: any) => e.edge_type).sort()).toEqual(
      Object.values(spellings).sort(),
    );
  });

  it('rejects a target that does not exist with 400 and stores nothing', async () => {
    const { req } = await freshWorkspace();
    const res = await req('POST', '/v1/memories', {
      body: { content: 'orphan', edges: [{ target_id: randomHex(), edge_type: 'caused_by' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toMatch(/target_id/);
    const list = await req('GET', '/v1/memories?include_superseded=true');
    expect(list.body.memories).toEqual([]);
  });

  it('rejects a malformed target id with 400', async () => {
    const { req } = await freshWorkspace();
    const res = await req('POST', '/v1/memories', {
      body: { content: 'x', edges: [{ target_id: 'not-an-id', edge_type: 'caused_by' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toMatch(/target_id/);
  });

  it('rejects an unknown edge_type with 400 naming the field, never dropping it silently', async () => {
    const { req } = await freshWorkspace();
    const target = await remember(req, { content: 'cause' });
    const res = await req('POST', '/v1/memories', {
      body: { content: 'x', edges: [{ target_id: target.memory_id, edge_type: 'causes' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toMatch(/edge_type/);
    const list = await req('GET', '/v1/memories');
    expect(list.body.memories.map((m: any) => m.memory_id)).toEqual([target.memory_id]);
    const edges = await req('GET', `/v1/memories/${target.memory_id}/edges`);
    expect(edges.body).toEqual({ outgoing: [], incoming: [] });
  });

  it('rejects an edge confidence outside 0..1', async () => {
    const { req } = await freshWorkspace();
    const target = await remember(req, { content: 'cause' });
    const res = await req('POST', '/v1/memories', {
      body: {
        content: 'x',
        edges: [{ target_id: target.memory_id, edge_type: 'caused_by', confidence: 1.5 }],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/confidence/);
  });

  it('GET edges of an unknown id is 404 and of a malformed id 400', async () => {
    const { req } = await freshWorkspace();
    expect((await req('GET', `/v1/memories/${randomHex()}/edges`)).status).toBe(404);
    expect((await req('GET', '/v1/memories/zzz/edges')).status).toBe(400);
  });
});

describe('GET /v1/memories/:id', () => {
  it('accepts the id in lower, upper and mixed case hex and in ULID text form', async () => {
    const { req } = await freshWorkspace();
    const m = await remember(req, { content: 'id forms' });
    const id = m.memory_id as string;
    const mixed = [...id].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join('');
    const ulid = ulidText(id);
    expect(ulid).toHaveLength(26);
    for (const form of [id, id.toUpperCase(), mixed, ulid, ulid.toLowerCase()]) {
      const res = await req('GET', `/v1/memories/${form}`);
      expect(res.status, form).toBe(200);
      expect(res.body.memory_id, form).toBe(id);
      expect(res.body.content).toBe('id forms');
    }
  });

  it('answers 404 with the JSON error body for an unknown id', async () => {
    const { req } = await freshWorkspace();
    const res = await req('GET', `/v1/memories/${randomHex()}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error_code: 'not_found' });
    expect(typeof res.body.message).toBe('string');
  });

  it.each([
    ['too short', 'abc'],
    ['31 hex', 'a'.repeat(31)],
    ['33 hex', 'a'.repeat(33)],
    ['non-hex 32', 'g'.repeat(32)],
    ['ULID out of range', `8${'0'.repeat(25)}`],
    ['ULID with U', `0${'U'.repeat(25)}`],
  ])('answers 400 for a malformed id (%s)', async (_name, id) => {
    const { req } = await freshWorkspace();
    const res = await req('GET', `/v1/memories/${id}`);
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toMatch(/memory_id|id/);
  });
});

describe('GET /v1/memories (list)', () => {
  it('lists in id (= creation) order with next_cursor null when everything fits', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 7);
    const res = await req('GET', '/v1/memories');
    expect(res.status).toBe(200);
    expect(res.body.memories.map((m: any) => m.memory_id)).toEqual(made.map((m) => m.memory_id));
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.memories[0]).not.toHaveProperty('embedding');
  });

  it('an empty workspace lists [] with next_cursor null', async () => {
    const { req } = await freshWorkspace();
    const res = await req('GET', '/v1/memories');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ memories: [], next_cursor: null });
  });

  it('pages with cursor across several pages, null exactly on the last one', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 23);
    const pages = await allPages(req, 'limit=10');
    expect(pages.map((p) => p.memories.length)).toEqual([10, 10, 3]);
    expect(pages.slice(0, -1).every((p) => typeof p.next_cursor === 'string')).toBe(true);
    expect(pages[0].next_cursor).toBe(pages[0].memories[9].memory_id);
    expect(pages.flatMap((p) => p.memories.map((m: any) => m.memory_id))).toEqual(
      made.map((m) => m.memory_id),
    );
  });

  it('has no trailing empty page when the count is an exact multiple of limit', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 20);
    const pages = await allPages(req, 'limit=10');
    expect(pages.map((p) => p.memories.length)).toEqual([10, 10]);
    expect(pages[1].next_cursor).toBeNull();
    expect(pages.flatMap((p) => p.memories.map((m: any) => m.memory_id))).toEqual(
      made.map((m) => m.memory_id),
    );
    const single = await req('GET', '/v1/memories?limit=20');
    expect(single.body.memories).toHaveLength(20);
    expect(single.body.next_cursor).toBeNull();
  });

  it('limit=1 pages one at a time', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 3);
    const pages = await allPages(req, 'limit=1');
    expect(pages.map((p) => p.memories.length)).toEqual([1, 1, 1]);
    expect(pages.map((p) => p.next_cursor)).toEqual([made[0].memory_id, made[1].memory_id, null]);
  });

  it('cursor returns ids strictly after it, in any accepted id form', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 4);
    const ids = made.map((m) => m.memory_id as string);
    for (const cursor of [
      ids[1] as string,
      (ids[1] as string).toUpperCase(),
      ulidText(ids[1] as string),
    ]) {
      const res = await req('GET', `/v1/memories?cursor=${cursor}`);
      expect(res.status, cursor).toBe(200);
      expect(res.body.memories.map((m: any) => m.memory_id)).toEqual(ids.slice(2));
    }
    const last = await req('GET', `/v1/memories?cursor=${ids[3]}`);
    expect(last.body).toEqual({ memories: [], next_cursor: null });
  });

  it('a cursor naming an id that no longer exists still pages after it', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 4);
    const ids = made.map((m) => m.memory_id as string);
    const f = await req('POST', '/v1/forget', { body: { memory_ids: [ids[1]] } });
    expect(f.body.forgotten_count).toBe(1);
    const res = await req('GET', `/v1/memories?cursor=${ids[1]}`);
    expect(res.body.memories.map((m: any) => m.memory_id)).toEqual(ids.slice(2));
  });

  it('filters by entity_id, paging within the entity', async () => {
    const { req } = await freshWorkspace();
    const a: string[] = [];
    for (let i = 0; i < 12; i++) {
      const m = await remember(req, {
        content: `interleaved ${i}`,
        entity_id: i % 2 === 0 ? 'alice' : 'bob',
      });
      if (i % 2 === 0) a.push(m.memory_id);
    }
    await remember(req, { content: 'no entity' });
    const pages = await allPages(req, 'entity_id=alice&limit=4');
    expect(pages.map((p) => p.memories.length)).toEqual([4, 2]);
    expect(pages.flatMap((p) => p.memories.map((m: any) => m.memory_id))).toEqual(a);
    expect(pages.flatMap((p) => p.memories).every((m: any) => m.entity_id === 'alice')).toBe(true);
    const none = await req('GET', '/v1/memories?entity_id=nobody');
    expect(none.body).toEqual({ memories: [], next_cursor: null });
    const all = await req('GET', '/v1/memories');
    expect(all.body.memories).toHaveLength(13);
  });

  it('filters by kind, and pages a filtered list without a trailing empty page', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 6);
    const revised = [made[1].memory_id, made[4].memory_id];
    for (const id of revised)
      expect(
        (await req('PUT', `/v1/revise/${id}`, { body: { content: `revised ${id}` } })).status,
      ).toBe(200);
    const rev = await req('GET', '/v1/memories?kind=revision');
    expect(rev.body.memories.map((m: any) => m.memory_id)).toEqual(revised);
    expect(rev.body.next_cursor).toBeNull();
    // Exactly `limit` matches followed only by non-matching memories: no further page.
    const rev2 = await req('GET', '/v1/memories?kind=revision&limit=2');
    expect(rev2.body.memories).toHaveLength(2);
    expect(rev2.body.next_cursor).toBeNull();
    const ep = await req('GET', '/v1/memories?kind=episode');
    expect(ep.body.memories.map((m: any) => m.memory_id)).toEqual(
      made.map((m) => m.memory_id).filter((id) => !revised.includes(id)),
    );
    const ins = await req('GET', '/v1/memories?kind=insight');
    expect(ins.body).toEqual({ memories: [], next_cursor: null });
  });

  it('accepts each of the five kinds as a filter', async () => {
    const { req } = await freshWorkspace();
    const m = await remember(req, { content: 'plain episode' });
    for (const kind of ['episode', 'insight', 'revision', 'document', 'proposition']) {
      const res = await req('GET', `/v1/memories?kind=${kind}`);
      expect(res.status, kind).toBe(200);
      expect(
        res.body.memories.map((x: any) => x.memory_id),
        kind,
      ).toEqual(kind === 'episode' ? [m.memory_id] : []);
    }
  });

  it('combines entity_id and kind filters', async () => {
    const { req } = await freshWorkspace();
    const a1 = await remember(req, { content: 'a1', entity_id: 'a' });
    const a2 = await remember(req, { content: 'a2', entity_id: 'a' });
    const b1 = await remember(req, { content: 'b1', entity_id: 'b' });
    await req('PUT', `/v1/revise/${a2.memory_id}`, { body: { importance: 0.1 } });
    await req('PUT', `/v1/revise/${b1.memory_id}`, { body: { importance: 0.1 } });
    const res = await req('GET', '/v1/memories?entity_id=a&kind=revision');
    expect(res.body.memories.map((m: any) => m.memory_id)).toEqual([a2.memory_id]);
    const ep = await req('GET', '/v1/memories?entity_id=a&kind=episode');
    expect(ep.body.memories.map((m: any) => m.memory_id)).toEqual([a1.memory_id]);
  });

  it('defaults limit to 100 and caps a larger limit at 1000 instead of rejecting it', async () => {
    const { req } = await freshWorkspace();
    const batch = Array.from({ length: 105 }, (_, i) => i);
    for (let i = 0; i < batch.length; i += 15) {
      await Promise.all(batch.slice(i, i + 15).map((n) => remember(req, { content: `bulk ${n}` })));
    }
    const first = await req('GET', '/v1/memories');
    expect(first.status).toBe(200);
    expect(first.body.memories).toHaveLength(100);
    expect(first.body.next_cursor).toBe(first.body.memories[99].memory_id);
    const rest = await req('GET', `/v1/memories?cursor=${first.body.next_cursor}`);
    expect(rest.body.memories).toHaveLength(5);
    expect(rest.body.next_cursor).toBeNull();
    const big = await req('GET', '/v1/memories?limit=5000');
    expect(big.status).toBe(200);
    expect(big.body.memories).toHaveLength(105);
    expect(big.body.next_cursor).toBeNull();
    const ids = big.body.memories.map((m: any) => m.memory_id as string);
    expect([...ids].sort()).toEqual(ids);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=-3', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['cursor=nothex', 'cursor'],
    ['cursor=1234', 'cursor'],
    ['kind=bogus', 'kind'],
  ])('rejects %s with 400 naming the parameter', async (query, field) => {
    const { req } = await freshWorkspace();
    const res = await req('GET', `/v1/memories?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toContain(field);
  });

  it('excludes superseded versions unless include_superseded=true', async () => {
    const { req } = await freshWorkspace();
    const a = await remember(req, { content: 'first draft' });
    const b = await remember(req, { content: 'other' });
    const r = await req('PUT', `/v1/revise/${a.memory_id}`, { body: { content: 'second draft' } });
    expect(r.status).toBe(200);
    const live = await req('GET', '/v1/memories');
    expect(live.body.memories.map((m: any) => m.memory_id)).toEqual([a.memory_id, b.memory_id]);
    const explicitFalse = await req('GET', '/v1/memories?include_superseded=false');
    expect(explicitFalse.body.memories).toHaveLength(2);
    const all = await req('GET', '/v1/memories?include_superseded=true');
    expect(all.body.memories).toHaveLength(3);
    const version = all.body.memories.find(
      (m: any) => m.memory_id !== a.memory_id && m.memory_id !== b.memory_id,
    );
    expect(version).toMatchObject({
      content: 'first draft',
      kind: 'episode',
      superseded_by: a.memory_id,
    });
    const ids = all.body.memories.map((m: any) => m.memory_id as string);
    expect([...ids].sort()).toEqual(ids);
    // Paging with include_superseded walks the versions too.
    const pages = await allPages(req, 'include_superseded=true&limit=2');
    expect(pages.map((p) => p.memories.length)).toEqual([2, 1]);
  });
});

describe('POST /v1/memories/batch', () => {
  it('returns memories in input order, skipping missing and malformed ids', async () => {
    const { req } = await freshWorkspace();
    const made = await rememberMany(req, 4);
    const ids = made.map((m) => m.memory_id as string);
    const body = {
      memory_ids: [
        ids[3],
        randomHex(),
        ids[0],
        'garbage',
        ulidText(ids[2] as string),
        (ids[1] as string).toUpperCase(),
      ],
    };
    const res = await req('POST', '/v1/memories/batch', { body });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((m: any) => m.memory_id)).toEqual([ids[3], ids[0], ids[2], ids[1]]);
    expect(res.body[0]).toMatchObject({ content: 'memory number 3', kind: 'episode' });
    expect(res.body[0]).not.toHaveProperty('embedding');
  });

  it('answers [] for an empty or all-missing list', async () => {
    const { req } = await freshWorkspace();
    expect((await req('POST', '/v1/memories/batch', { body: { memory_ids: [] } })).body).toEqual(
      [],
    );
    expect(
      (await req('POST', '/v1/memories/batch', { body: { memory_ids: [randomHex(), 'x'] } })).body,
    ).toEqual([]);
  });

  it('accepts 500 ids and rejects 501 with 400', async () => {
    const { req } = await freshWorkspace();
    const m = await remember(req, { content: 'needle' });
    const ids500 = [m.memory_id, ...Array.from({ length: 499 }, randomHex)];
    const ok = await req('POST', '/v1/memories/batch', { body: { memory_ids: ids500 } });
    expect(ok.status).toBe(200);
    expect(ok.body.map((x: any) => x.memory_id)).toEqual([m.memory_id]);
    const tooMany = await req('POST', '/v1/memories/batch', {
      body: { memory_ids: [...ids500, randomHex()] },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error_code).toBe('invalid_input');
    expect(tooMany.body.message).toMatch(/memory_ids/);
  });

  it('rejects a body without memory_ids, or with non-string ids, with 400', async () => {
    const { req } = await freshWorkspace();
    for (const body of [{}, { memory_ids: 'abc' }, { memory_ids: [1, 2] }]) {
      const res = await req('POST', '/v1/memories/batch', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(/memory_ids/);
    }
  });
});
