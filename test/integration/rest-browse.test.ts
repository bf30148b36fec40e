/**
 * Browsing a workspace (issue 53): the list sorted either way and by value with cursors that
 * survive writes, filtered by words and creation time, with a total; the timeline; entity
 * summaries; the graph overview without a centre; the contradictions list (confirmed pairs and
 * pending candidates with their rule). The list's old contract (oldest first, bare-id cursors)
 * holds when none of the new parameters is given.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let n = 0;
const DAY = 86_400_000_000;
const HOUR = 3_600_000_000;
/** 2024-03-10 00:00 UTC, in µs. */
const T0 = Date.UTC(2024, 2, 10) * 1000;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

type Req = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any; text: string }>;

async function workspace(): Promise<Req> {
  const slug = `browse-${++n}`;
  const made = await t.inject('POST', '/v1/workspaces', { body: { slug } });
  expect(made.status, made.text).toBe(201);
  const key = made.body.api_key as string;
  return (method, path, body) =>
    t.inject(method, path, body === undefined ? { key } : { key, body });
}

async function remember(req: Req, body: Record<string, unknown>): Promise<string> {
  const r = await req('POST', '/v1/memories', body);
  expect(r.status, r.text).toBe(201);
  return r.body.memory_id as string;
}

async function pages(req: Req, query: string, limit: number): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | null = null;
  do {
    const r = await req(
      'GET',
      `/v1/memories?${query}&limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
    );
    expect(r.status, r.text).toBe(200);
    out.push(r.body.memories.map((m: any) => m.content));
    cursor = r.body.next_cursor;
  } while (cursor !== null);
  return out;
}

describe('GET /v1/memories: sort, order, words, time, total', () => {
  it('keeps its contract without the new parameters: oldest first, no total', async () => {
    const req = await workspace();
    for (const c of ['one', 'two', 'three']) await remember(req, { content: `memory ${c}` });
    const r = await req('GET', '/v1/memories?limit=2');
    expect(r.body.memories.map((m: any) => m.content)).toEqual(['memory one', 'memory two']);
    expect(r.body.next_cursor).toBe(r.body.memories[1].memory_id);
    expect(r.body).not.toHaveProperty('total');
  });

  it('pages newest first, and a write between pages neither repeats nor skips a memory', async () => {
    const req = await workspace();
    for (let i = 1; i <= 5; i++) await remember(req, { content: `note ${i}` });
    const first = await req('GET', '/v1/memories?order=desc&limit=2&with_total=true');
    expect(first.body.memories.map((m: any) => m.content)).toEqual(['note 5', 'note 4']);
    expect(first.body.total).toBe(5);
    await remember(req, { content: 'note 6, written while paging' });
    const second = await req(
      'GET',
      `/v1/memories?order=desc&limit=2&cursor=${first.body.next_cursor}&with_total=true`,
    );
    expect(second.body.memories.map((m: any) => m.content)).toEqual(['note 3', 'note 2']);
    expect(second.body.total).toBe(6);
    const third = await req(
      'GET',
      `/v1/memories?order=desc&limit=2&cursor=${second.body.next_cursor}`,
    );
    expect(third.body.memories.map((m: any) => m.content)).toEqual(['note 1']);
    expect(third.body.next_cursor).toBeNull();
  });

  it('sorts by importance either way with (value, id) cursors; ties go by id', async () => {
    const req = await workspace();
    const imp = [0.2, 0.9, 0.5, 0.9, 0.1, 0.5, 0.7];
    for (const [i, v] of imp.entries()) await remember(req, { content: `m${i}`, importance: v });
    const desc = await pages(req, 'sort=importance&order=desc', 3);
    expect(desc).toEqual([['m3', 'm1', 'm6'], ['m5', 'm2', 'm0'], ['m4']]);
    const asc = await pages(req, 'sort=importance', 3);
    expect(asc.flat()).toEqual(['m4', 'm0', 'm2', 'm5', 'm6', 'm1', 'm3']);
    // A write between pages lands where it sorts, and the pages after the cursor stay whole.
    const p1 = await req('GET', '/v1/memories?sort=importance&order=desc&limit=3');
    await remember(req, { content: 'top', importance: 1 });
    await remember(req, { content: 'middle', importance: 0.3 });
    const rest = await req(
      'GET',
      `/v1/memories?sort=importance&order=desc&limit=10&cursor=${encodeURIComponent(p1.body.next_cursor)}`,
    );
    expect(rest.body.memories.map((m: any) => m.content)).toEqual([
      'm5',
      'm2',
      'middle',
      'm0',
      'm4',
    ]);
  });

  it('sorts by access count (recall counts, the list itself does not)', async () => {
    const req = await workspace();
    await remember(req, { content: 'read twice', entity_id: 'two' });
    await remember(req, { content: 'read once', entity_id: 'one' });
    await remember(req, { content: 'never read', entity_id: 'none' });
    for (const entity of ['two', 'two', 'one'])
      expect(
        (
          await req('POST', '/v1/recall', {
            cue: 'read',
            strategies: ['similarity'],
            entity_id: entity,
          })
        ).status,
      ).toBe(200);
    const r = await req('GET', '/v1/memories?sort=access_count&order=desc');
    expect(r.body.memories.map((m: any) => [m.content, m.access_count])).toEqual([
      ['read twice', 2],
      ['read once', 1],
      ['never read', 0],
    ]);
    const again = await req('GET', '/v1/memories?sort=access_count&order=desc');
    expect(again.body.memories.map((m: any) => m.access_count)).toEqual([2, 1, 0]);
  });

  it('refuses a cursor made for another sort or order, naming the problem', async () => {
    const req = await workspace();
    for (let i = 0; i < 3; i++) await remember(req, { content: `c${i}`, importance: i / 10 });
    const p = await req('GET', '/v1/memories?sort=importance&order=desc&limit=1');
    const other = await req(
      'GET',
      `/v1/memories?sort=importance&limit=1&cursor=${encodeURIComponent(p.body.next_cursor)}`,
    );
    expect(other.status).toBe(400);
    expect(other.body.message).toMatch(/does not belong to a list sorted by importance asc/);
    const bare = await req(
      'GET',
      `/v1/memories?sort=importance&cursor=${p.body.memories[0].memory_id}`,
    );
    expect(bare.status).toBe(400);
    expect(bare.body.message).toMatch(/creation order/);
    expect((await req('GET', '/v1/memories?sort=loudness')).status).toBe(400);
  });

  it('filters by every word of q (stemmed), with the other criteria and a total', async () => {
    const req = await workspace();
    await remember(req, { content: 'Alice painted the garden fence', entity_id: 'alice' });
    await remember(req, { content: 'Alice paints watercolours on Sundays', entity_id: 'alice' });
    await remember(req, { content: 'Bob painted the kitchen', entity_id: 'bob' });
    await remember(req, { content: 'The garden needs water' });
    const words = await req(
      'GET',
      `/v1/memories?q=${encodeURIComponent('painting')}&order=desc&with_total=true`,
    );
    expect(words.body.memories.map((m: any) => m.content)).toEqual([
      'Bob painted the kitchen',
      'Alice paints watercolours on Sundays',
      'Alice painted the garden fence',
    ]);
    expect(words.body.total).toBe(3);
    const both = await req(
      'GET',
      `/v1/memories?q=${encodeURIComponent('garden paint')}&with_total=true`,
    );
    expect(both.body.memories.map((m: any) => m.content)).toEqual([
      'Alice painted the garden fence',
    ]);
    expect(both.body.total).toBe(1);
    const entity = await req('GET', `/v1/memories?q=painted&entity_id=bob&with_total=true`);
    expect(entity.body.total).toBe(1);
    expect((await req('GET', '/v1/memories?q=zeppelin&with_total=true')).body).toMatchObject({
      memories: [],
      total: 0,
    });
    const stop = await req('GET', '/v1/memories?q=the');
    expect(stop.status).toBe(400);
    expect(stop.body.message).toMatch(/no word to match/);
  });

  it('filters by kind, live or with superseded versions, from the order alone or from the records', async () => {
    const req = await workspace();
    const a = await remember(req, { content: 'first draft', entity_id: 'doc' });
    await remember(req, { content: 'untouched note', entity_id: 'doc' });
    await remember(req, { content: 'a turn', speaker: 'Ann', conversation_id: 'talk-1' });
    expect((await req('PUT', `/v1/revise/${a}`, { content: 'second draft' })).status).toBe(200);
    const count = async (q: string): Promise<number> =>
      (await req('GET', `/v1/memories?with_total=true&${q}`)).body.total;
    expect(await count('kind=episode')).toBe(2);
    expect(await count('kind=revision')).toBe(1);
    expect(await count('kind=episode&include_superseded=true')).toBe(3);
    expect(await count('kind=episode&entity_id=doc')).toBe(1);
    expect(await count('kind=episode&speaker=Ann')).toBe(1);
    expect(await count('include_superseded=true')).toBe(4);
    expect((await req('GET', '/v1/memories/timeline?kind=revision')).body.total).toBe(1);
    const page = await req('GET', '/v1/memories?kind=episode&order=desc');
    expect(page.body.memories.map((m: any) => m.content)).toEqual(['a turn', 'untouched note']);
  });

  it('filters by creation time [since_us, until_us)', async () => {
    const req = await workspace();
    await remember(req, { content: 'early' });
    const late = await remember(req, { content: 'late' });
    const before = (await req('GET', `/v1/memories/${late}`)).body.created_at as number;
    const r = await req('GET', `/v1/memories?since_us=${before}&with_total=true`);
    expect(r.body.memories.map((m: any) => m.content)).toEqual(['late']);
    const u = await req('GET', `/v1/memories?until_us=${before}&with_total=true`);
    expect(u.body.memories.map((m: any) => m.content)).toEqual(['early']);
    const bad = await req('GET', `/v1/memories?since_us=${before}&until_us=${before}`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/until_us .* must be after since_us/);
  });
});

describe('GET /v1/memories/timeline', () => {
  it("counts matches per day and per hour, days starting at the reader's midnight", async () => {
    const slug = `timeline-${++n}`;
    const made = await t.inject('POST', '/v1/workspaces', { body: { slug } });
    const key = made.body.api_key as string;
    const lines = [
      {
        content: 'day one morning',
        created_at: T0 + 9 * HOUR,
        entity_id: 'sam',
        speaker: 'Sam',
        conversation_id: 'c1',
      },
      { content: 'day one evening', created_at: T0 + 21 * HOUR + 30 * 60_000_000 },
      { content: 'day one late evening', created_at: T0 + 21 * HOUR + 45 * 60_000_000 },
      { content: 'day three', created_at: T0 + 2 * DAY + HOUR, entity_id: 'sam', speaker: 'Sam' },
    ];
    const text = lines
      .map((m) =>
        JSON.stringify({
          memory: { ...m, updated_at: m.created_at, last_accessed_at: m.created_at },
        }),
      )
      .join('\n');
    const imported = await t.inject('POST', '/v1/import', {
      key,
      raw: `${text}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.body.imported, imported.text).toBe(4);
    const req: Req = (method, path) => t.inject(method, path, { key });
    const days = await req('GET', '/v1/memories/timeline');
    expect(days.body).toEqual({
      bucket: 'day',
      bucket_us: DAY,
      total: 4,
      buckets: [
        { start_us: T0, start_iso: '2024-03-10T00:00:00.000000Z', count: 3 },
        { start_us: T0 + 2 * DAY, start_iso: '2024-03-12T00:00:00.000000Z', count: 1 },
      ],
    });
    const plain = (r: any): unknown =>
      r.body.buckets.map((b: any) => ({ start_us: b.start_us, count: b.count }));
    // At UTC+3 the evening memories fall on the next day.
    const east = await req('GET', '/v1/memories/timeline?utc_offset_min=180');
    expect(plain(east)).toEqual([
      { start_us: T0 - 3 * HOUR, count: 1 },
      { start_us: T0 + DAY - 3 * HOUR, count: 2 },
      { start_us: T0 + 2 * DAY - 3 * HOUR, count: 1 },
    ]);
    const hours = await req(
      'GET',
      `/v1/memories/timeline?bucket=hour&since_us=${T0}&until_us=${T0 + DAY}`,
    );
    expect(plain(hours)).toEqual([
      { start_us: T0 + 9 * HOUR, count: 1 },
      { start_us: T0 + 21 * HOUR, count: 2 },
    ]);
    expect((await req('GET', '/v1/memories/timeline?entity_id=sam')).body.total).toBe(2);
    expect((await req('GET', '/v1/memories/timeline?speaker=Sam')).body.total).toBe(2);
    expect((await req('GET', '/v1/memories/timeline?conversation_id=c1')).body.total).toBe(1);
    expect((await req('GET', '/v1/memories?speaker=Sam&with_total=true')).body.total).toBe(2);
    expect((await req('GET', '/v1/memories/timeline?q=evening')).body.total).toBe(2);
    expect((await req('GET', '/v1/memories/timeline?bucket=minute')).status).toBe(400);
  });
});

describe('GET /v1/entities/summary', () => {
  it('lists entities with live counts, kinds and last activity; sorts and filters; /v1/entities is unchanged', async () => {
    const req = await workspace();
    await remember(req, { content: 'Alice likes tea', entity_id: 'alice' });
    const revised = await remember(req, { content: 'Alice lives in Leeds', entity_id: 'alice' });
    await remember(req, { content: 'Bob likes coffee', entity_id: 'bob' });
    await remember(req, { content: 'Bob has a dog', entity_id: 'bob' });
    await remember(req, { content: 'Bob has a cat', entity_id: 'bob' });
    await remember(req, { content: 'Carol sings', entity_id: 'carol' });
    const r = await req('PUT', `/v1/revise/${revised}`, { content: 'Alice lives in York' });
    expect(r.status).toBe(200);
    const recent = await req('GET', '/v1/entities/summary');
    expect(recent.body.total).toBe(3);
    expect(recent.body.entities.map((e: any) => [e.entity_id, e.memory_count])).toEqual([
      ['alice', 2],
      ['carol', 1],
      ['bob', 3],
    ]);
    const alice = recent.body.entities[0];
    expect(alice.kinds).toEqual({ episode: 1, revision: 1 });
    expect(alice.last_at).toBeGreaterThan(alice.first_at);
    expect(
      (await req('GET', '/v1/entities/summary?sort=memories')).body.entities.map(
        (e: any) => e.entity_id,
      ),
    ).toEqual(['bob', 'alice', 'carol']);
    expect((await req('GET', '/v1/entities/summary?sort=name&limit=2')).body).toMatchObject({
      total: 3,
      entities: [{ entity_id: 'alice' }, { entity_id: 'bob' }],
    });
    expect(
      (await req('GET', '/v1/entities/summary?q=AR')).body.entities.map((e: any) => e.entity_id),
    ).toEqual(['carol']);
    expect((await req('GET', '/v1/entities')).body).toEqual(['alice', 'bob', 'carol']);
  });
});

describe('POST /v1/graph/overview', () => {
  it('picks the most important memories without a centre, with the edges among them and "N of M"', async () => {
    const req = await workspace();
    const hub = await remember(req, { content: 'hub', importance: 0.9 });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(
        await remember(req, {
          content: `leaf ${i}`,
          importance: 0.1 * i,
          edges: [{ target_id: hub, edge_type: 'related_to' }],
        }),
      );
    const r = await req('POST', '/v1/graph/overview', { max_nodes: 4 });
    expect(r.status, r.text).toBe(200);
    expect(r.body.nodes.map((m: any) => m.content)).toEqual(['hub', 'leaf 5', 'leaf 4', 'leaf 3']);
    expect(r.body).toMatchObject({ total_nodes: 7, truncated: true });
    expect(r.body.edges.map((e: any) => e.edge_type)).toEqual([
      'related_to',
      'related_to',
      'related_to',
    ]);
    expect(r.body.edges.every((e: any) => e.target_id === hub)).toBe(true);
    const all = await req('POST', '/v1/graph/overview');
    expect(all.body).toMatchObject({ total_nodes: 7, truncated: false });
    expect(all.body.edges).toHaveLength(6);
    expect(
      (await req('POST', '/v1/graph/overview', { edge_types: ['caused_by'] })).body.edges,
    ).toEqual([]);
    expect((await req('POST', '/v1/graph/overview', { edge_types: ['likes'] })).status).toBe(400);
  });

  it("draws an entity's memories and their direct neighbours", async () => {
    const req = await workspace();
    const other = await remember(req, { content: 'the harbour', importance: 0.2 });
    const far = await remember(req, {
      content: 'far away',
      importance: 1,
      edges: [{ target_id: other, edge_type: 'related_to' }],
    });
    await remember(req, {
      content: 'Ada sails',
      entity_id: 'ada',
      edges: [{ target_id: other, edge_type: 'related_to' }],
    });
    const r = await req('POST', '/v1/graph/overview', { entity_id: 'ada' });
    expect(r.body.nodes.map((m: any) => m.content)).toEqual(['Ada sails', 'the harbour']);
    expect(r.body.nodes.some((m: any) => m.memory_id === far)).toBe(false);
    expect(r.body).toMatchObject({ total_nodes: 2, truncated: false });
    expect(r.body.edges).toHaveLength(1);
  });
});

describe('GET /v1/contradictions', () => {
  it('lists confirmed pairs once each and pending candidates with their rule and both memories', async () => {
    const checked = await startTestApp({}, { FLASHBULB_CONTRADICTIONS_ENABLED: 'true' });
    const req: Req = (method, path, body) =>
      checked.req(method, path, body === undefined ? {} : { body });
    try {
      const a = await remember(req, { content: 'Ada never drinks coffee', entity_id: 'ada' });
      await remember(req, {
        content: 'Ada drinks coffee every morning',
        edges: [{ target_id: a, edge_type: 'contradicts', confidence: 0.9 }],
      });
      await remember(req, { content: 'The chess club has 32 members.' });
      await remember(req, { content: 'The chess club has 48 paying adult junior members.' });
      const r = await until(
        async () => {
          const got = await req('GET', '/v1/contradictions');
          return got.body.pending.length > 0 ? got : null;
        },
        { what: 'a pending contradiction candidate', deadlineMs: 30_000 },
      );
      const pair = r.body.confirmed.find((c: any) =>
        [c.a.content, c.b.content].includes('Ada never drinks coffee'),
      );
      expect(pair.confidence).toBeCloseTo(0.9);
      expect(
        r.body.confirmed.filter((c: any) => [c.a.memory_id, c.b.memory_id].includes(a)),
      ).toHaveLength(1);
      const p = r.body.pending[0];
      expect([p.a.content, p.b.content].sort()).toEqual([
        'The chess club has 32 members.',
        'The chess club has 48 paying adult junior members.',
      ]);
      expect(p.reason).toEqual(expect.any(String));
      expect(p.pending_id).toMatch(/^[0-9a-f]{32}$/);
      const ada = await req('GET', '/v1/contradictions?entity_id=ada');
      expect(ada.body.confirmed).toHaveLength(1);
      expect(ada.body.pending).toEqual([]);
      const one = await req('GET', '/v1/contradictions?limit=1');
      expect(one.body.confirmed.length + one.body.pending.length).toBeLessThanOrEqual(2);
    } finally {
      await checked.stop();
    }
  });
});
