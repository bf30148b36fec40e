/**
 * REST over real sockets: revise (superseded versions, context modes, entity clearing), forget
 * (every criterion alone and combined, cascade, tombstones, edges, the 1000-per-call cap) and
 * entities (DESIGN.md 3.3, 3.4; spec 4.1). One server; a workspace per test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataFiles } from '../helpers/data-files.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until, untilClockPasses } from '../helpers/wait.ts';

let t: TestApp;
let seq = 0;

type Req = (
  method: string,
  path: string,
  opts?: { body?: unknown; headers?: Record<string, string>; raw?: string },
) => ReturnType<TestApp['req']>;

async function freshWorkspace(): Promise<Req> {
  const slug = `rf-${process.pid}-${++seq}`;
  const created = await t.inject('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status).toBe(201);
  const key = created.body.api_key as string;
  return (method, path, opts = {}) => t.inject(method, path, { ...opts, key });
}

async function remember(req: Req, body: Record<string, unknown>): Promise<any> {
  const res = await req('POST', '/v1/memories', { body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function revise(req: Req, id: string, body: Record<string, unknown>): Promise<any> {
  const res = await req('PUT', `/v1/revise/${id}`, { body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function forget(req: Req, body: Record<string, unknown>): Promise<any> {
  const res = await req('POST', '/v1/forget', { body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Ids of everything stored, superseded versions included. */
async function storedIds(req: Req): Promise<string[]> {
  const res = await req('GET', '/v1/memories?include_superseded=true&limit=1000');
  expect(res.status).toBe(200);
  return res.body.memories.map((m: any) => m.memory_id as string);
}

async function liveIds(req: Req): Promise<string[]> {
  const res = await req('GET', '/v1/memories?limit=1000');
  return res.body.memories.map((m: any) => m.memory_id as string);
}

function randomHex(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += '0123456789abcdef'[Math.floor(Math.random() * 16)];
  return s;
}

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.stop());

describe('PUT /v1/revise/:id', () => {
  it('keeps the id, becomes a revision, bumps logical_clock and keeps the old state as a superseded version', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, {
      content: 'the meeting is on Monday',
      importance: 0.4,
      context: { room: 'A' },
      entity_id: 'team',
    });
    await untilClockPasses(m.updated_at);
    const r = await revise(req, m.memory_id, { content: 'the meeting is on Tuesday' });
    expect(r.memory_id).toBe(m.memory_id);
    expect(r.kind).toBe('revision');
    expect(r.logical_clock).toBe(1);
    expect(r.content).toBe('the meeting is on Tuesday');
    expect(r.importance).toBe(0.4);
    expect(r.context).toEqual({ room: 'A' });
    expect(r.entity_id).toBe('team');
    expect(r.created_at).toBe(m.created_at);
    expect(r.updated_at).toBeGreaterThan(m.updated_at);
    expect(r).not.toHaveProperty('superseded_by');
    expect(r).not.toHaveProperty('embedding');

    const got = await req('GET', `/v1/memories/${m.memory_id}`);
    expect(got.body).toMatchObject({
      memory_id: m.memory_id,
      content: 'the meeting is on Tuesday',
      kind: 'revision',
      logical_clock: 1,
    });

    // Default list: only the live memory.
    expect(await liveIds(req)).toEqual([m.memory_id]);
    // With versions: the old state under a new id.
    const all = await req('GET', '/v1/memories?include_superseded=true');
    expect(all.body.memories).toHaveLength(2);
    const version = all.body.memories.find((x: any) => x.memory_id !== m.memory_id);
    expect(version.memory_id).toMatch(/^[0-9a-f]{32}$/);
    expect(version).toMatchObject({
      content: 'the meeting is on Monday',
      kind: 'episode',
      importance: 0.4,
      context: { room: 'A' },
      entity_id: 'team',
      logical_clock: 0,
      superseded_by: m.memory_id,
    });
    const gotVersion = await req('GET', `/v1/memories/${version.memory_id}`);
    expect(gotVersion.status).toBe(200);
    expect(gotVersion.body).toMatchObject({
      content: 'the meeting is on Monday',
      kind: 'episode',
      superseded_by: m.memory_id,
    });

    // revised_from: live → version.
    const edges = await req('GET', `/v1/memories/${m.memory_id}/edges`);
    expect(edges.body.outgoing).toEqual([
      expect.objectContaining({
        source_id: m.memory_id,
        target_id: version.memory_id,
        edge_type: 'revised_from',
      }),
    ]);
    const vEdges = await req('GET', `/v1/memories/${version.memory_id}/edges`);
    expect(vEdges.body.incoming).toEqual([
      expect.objectContaining({
        source_id: m.memory_id,
        target_id: version.memory_id,
        edge_type: 'revised_from',
      }),
    ]);
  });

  it('a second revise keeps a second version with the intermediate state and kind revision', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'v0' });
    await revise(req, m.memory_id, { content: 'v1' });
    const r2 = await revise(req, m.memory_id, { content: 'v2' });
    expect(r2.logical_clock).toBe(2);
    const all = await req('GET', '/v1/memories?include_superseded=true');
    const versions = all.body.memories.filter((x: any) => x.memory_id !== m.memory_id);
    expect(versions.map((v: any) => [v.content, v.kind, v.logical_clock, v.superseded_by])).toEqual(
      [
        ['v0', 'episode', 0, m.memory_id],
        ['v1', 'revision', 1, m.memory_id],
      ],
    );
    const edges = await req('GET', `/v1/memories/${m.memory_id}/edges`);
    expect(
      edges.body.outgoing
        .filter((e: any) => e.edge_type === 'revised_from')
        .map((e: any) => e.target_id)
        .sort(),
    ).toEqual(versions.map((v: any) => v.memory_id).sort());
  });

  it('revises importance alone, keeping content', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'same text' });
    const r = await revise(req, m.memory_id, { importance: 0.95 });
    expect(r).toMatchObject({
      content: 'same text',
      importance: 0.95,
      kind: 'revision',
      logical_clock: 1,
    });
  });

  it('accepts the id in ULID text form and upper-case hex', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'x' });
    const upper = await revise(req, m.memory_id.toUpperCase(), { importance: 0.2 });
    expect(upper.memory_id).toBe(m.memory_id);
  });

  it('merges context by default and with context_mode merge; replaces with context_mode replace', async () => {
    const req = await freshWorkspace();
    const a = await remember(req, { content: 'a', context: { keep: 1, change: 'old' } });
    const merged = await revise(req, a.memory_id, { context: { change: 'new', add: true } });
    expect(merged.context).toEqual({ keep: 1, change: 'new', add: true });
    const b = await remember(req, { content: 'b', context: { keep: 1, change: 'old' } });
    const explicit = await revise(req, b.memory_id, {
      context: { change: 'new' },
      context_mode: 'merge',
    });
    expect(explicit.context).toEqual({ keep: 1, change: 'new' });
    const c = await remember(req, { content: 'c', context: { keep: 1, change: 'old' } });
    const replaced = await revise(req, c.memory_id, {
      context: { only: 'this' },
      context_mode: 'replace',
    });
    expect(replaced.context).toEqual({ only: 'this' });
    expect((await req('GET', `/v1/memories/${c.memory_id}`)).body.context).toEqual({
      only: 'this',
    });
  });

  it('entity_id null clears the entity; a string sets it; absent keeps it', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'x', entity_id: 'alice' });
    const kept = await revise(req, m.memory_id, { importance: 0.3 });
    expect(kept.entity_id).toBe('alice');
    const moved = await revise(req, m.memory_id, { entity_id: 'bob' });
    expect(moved.entity_id).toBe('bob');
    expect(
      (await req('GET', '/v1/memories?entity_id=bob')).body.memories.map((x: any) => x.memory_id),
    ).toEqual([m.memory_id]);
    expect((await req('GET', '/v1/memories?entity_id=alice')).body.memories).toEqual([]);
    const cleared = await revise(req, m.memory_id, { entity_id: null });
    expect(cleared.entity_id).toBeNull();
    expect((await req('GET', `/v1/memories/${m.memory_id}`)).body.entity_id).toBeNull();
    expect((await req('GET', '/v1/memories?entity_id=bob')).body.memories).toEqual([]);
    expect((await req('GET', '/v1/entities')).body).toEqual([]);
  });

  it('answers 400 when no revisable field is given, changing nothing', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'x' });
    for (const body of [{}, { context_mode: 'replace' }, { unknown_field: 1 }]) {
      const res = await req('PUT', `/v1/revise/${m.memory_id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
    const got = await req('GET', `/v1/memories/${m.memory_id}`);
    expect(got.body).toMatchObject({ kind: 'episode', logical_clock: 0 });
    expect(await storedIds(req)).toEqual([m.memory_id]);
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    const req = await freshWorkspace();
    const unknown = await req('PUT', `/v1/revise/${randomHex()}`, { body: { content: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_code).toBe('not_found');
    const bad = await req('PUT', '/v1/revise/nope', { body: { content: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error_code).toBe('invalid_input');
    expect(await storedIds(req)).toEqual([]);
  });

  it('serialises concurrent revisions of one memory: every one counts', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'v0', context: {} });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        req('PUT', `/v1/revise/${m.memory_id}`, { body: { context: { [`k${i}`]: i } } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(results.map((r) => r.body.logical_clock).sort((x, y) => x - y)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
    const live = await req('GET', `/v1/memories/${m.memory_id}`);
    expect(live.body.logical_clock).toBe(10);
    expect(Object.keys(live.body.context)).toHaveLength(10);
    expect(await storedIds(req)).toHaveLength(11);
  });

  it('refuses to revise a superseded version with 400', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'v0' });
    await revise(req, m.memory_id, { content: 'v1' });
    const version = (await storedIds(req)).find((id) => id !== m.memory_id) as string;
    const res = await req('PUT', `/v1/revise/${version}`, { body: { content: 'v0 edited' } });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect((await req('GET', `/v1/memories/${version}`)).body.content).toBe('v0');
    expect(await storedIds(req)).toHaveLength(2);
  });

  it.each([
    ['importance above 1', { importance: 1.5 }, 'importance'],
    ['importance wrong type', { importance: 'high' }, 'importance'],
    ['content wrong type', { content: 42 }, 'content'],
    ['context not an object', { context: 'x' }, 'context'],
    ['context_mode unknown', { content: 'x', context_mode: 'append' }, 'context_mode'],
    ['content over 64 KiB', { content: 'a'.repeat(64 * 1024 + 1) }, 'content'],
    ['entity_id over 256 chars', { entity_id: 'e'.repeat(257) }, 'entity_id'],
  ])('rejects %s with 400 naming the field, changing nothing', async (_name, body, field) => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'x' });
    const res = await req('PUT', `/v1/revise/${m.memory_id}`, { body });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toContain(field);
    expect((await req('GET', `/v1/memories/${m.memory_id}`)).body).toMatchObject({
      content: 'x',
      logical_clock: 0,
    });
    expect(await storedIds(req)).toEqual([m.memory_id]);
  });
});

describe('POST /v1/forget', () => {
  it('forgets by memory_ids and returns the four counts', async () => {
    const req = await freshWorkspace();
    const [a, b, c] = [
      await remember(req, { content: 'a' }),
      await remember(req, { content: 'b' }),
      await remember(req, { content: 'c' }),
    ];
    const res = await forget(req, {
      memory_ids: [a.memory_id, c.memory_id.toUpperCase(), randomHex()],
    });
    expect(res).toEqual({
      forgotten_count: 2,
      cascade_count: 0,
      truncated: false,
      tombstone_count: 2,
    });
    expect((await req('GET', `/v1/memories/${a.memory_id}`)).status).toBe(404);
    expect((await req('GET', `/v1/memories/${c.memory_id}`)).status).toBe(404);
    expect((await req('GET', `/v1/memories/${b.memory_id}`)).status).toBe(200);
    expect(await storedIds(req)).toEqual([b.memory_id]);
    // Forgetting again finds nothing.
    expect(await forget(req, { memory_ids: [a.memory_id] })).toEqual({
      forgotten_count: 0,
      cascade_count: 0,
      truncated: false,
      tombstone_count: 0,
    });
  });

  it('forgets by entity_id alone', async () => {
    const req = await freshWorkspace();
    await remember(req, { content: 'a1', entity_id: 'alice' });
    await remember(req, { content: 'a2', entity_id: 'alice' });
    const b = await remember(req, { content: 'b1', entity_id: 'bob' });
    const n = await remember(req, { content: 'none' });
    const res = await forget(req, { entity_id: 'alice' });
    expect(res.forgotten_count).toBe(2);
    expect(await storedIds(req)).toEqual([b.memory_id, n.memory_id]);
  });

  it('forgets by staleness_threshold_us alone (last_accessed_at older than the cutoff)', async () => {
    const req = await freshWorkspace();
    const old = await remember(req, { content: 'old' });
    await untilClockPasses(old.last_accessed_at);
    const fresh = await remember(req, { content: 'fresh' });
    expect(fresh.last_accessed_at).toBeGreaterThan(old.last_accessed_at);
    const none = await forget(req, { staleness_threshold_us: old.last_accessed_at });
    expect(none.forgotten_count).toBe(0);
    const res = await forget(req, { staleness_threshold_us: fresh.last_accessed_at });
    expect(res.forgotten_count).toBe(1);
    expect(await storedIds(req)).toEqual([fresh.memory_id]);
  });

  it('forgets by access_count_floor alone (fewer accesses than the floor)', async () => {
    const req = await freshWorkspace();
    await remember(req, { content: 'a' });
    await remember(req, { content: 'b' });
    expect((await forget(req, { access_count_floor: 0 })).forgotten_count).toBe(0);
    expect(await storedIds(req)).toHaveLength(2);
    expect((await forget(req, { access_count_floor: 1 })).forgotten_count).toBe(2);
    expect(await storedIds(req)).toEqual([]);
  });

  it('forgets by memory_kind alone, taking the superseded versions along', async () => {
    const req = await freshWorkspace();
    const e1 = await remember(req, { content: 'e1' });
    const r = await remember(req, { content: 'r0' });
    await revise(req, r.memory_id, { content: 'r1' });
    const e2 = await remember(req, { content: 'e2' });
    const res = await forget(req, { memory_kind: 'revision' });
    expect(res).toEqual({
      forgotten_count: 1,
      cascade_count: 1,
      truncated: false,
      tombstone_count: 2,
    });
    expect(await storedIds(req)).toEqual([e1.memory_id, e2.memory_id]);
    expect((await forget(req, { memory_kind: 'insight' })).forgotten_count).toBe(0);
    expect((await forget(req, { memory_kind: 'episode' })).forgotten_count).toBe(2);
    expect(await storedIds(req)).toEqual([]);
  });

  it('accepts each of the five kinds as memory_kind', async () => {
    const req = await freshWorkspace();
    await remember(req, { content: 'episode' });
    for (const kind of ['insight', 'revision', 'document', 'proposition']) {
      expect((await forget(req, { memory_kind: kind })).forgotten_count, kind).toBe(0);
    }
    expect((await forget(req, { memory_kind: 'episode' })).forgotten_count).toBe(1);
  });

  it('forgets by decay_score_floor alone (decay below the floor)', async () => {
    const req = await freshWorkspace();
    const low = await remember(req, { content: 'low', importance: 0.1 });
    const high = await remember(req, { content: 'high', importance: 0.9 });
    expect(low.decay_score).toBeLessThan(0.5);
    expect(high.decay_score).toBeGreaterThan(0.5);
    const res = await forget(req, { decay_score_floor: 0.5 });
    expect(res.forgotten_count).toBe(1);
    expect(await storedIds(req)).toEqual([high.memory_id]);
  });

  it('combines criteria with AND', async () => {
    const req = await freshWorkspace();
    const aLow = await remember(req, { content: 'a low', entity_id: 'alice', importance: 0.1 });
    const aHigh = await remember(req, { content: 'a high', entity_id: 'alice', importance: 0.9 });
    const bLow = await remember(req, { content: 'b low', entity_id: 'bob', importance: 0.1 });

    // entity AND decay
    expect(
      (await forget(req, { entity_id: 'alice', decay_score_floor: 0.5 })).forgotten_count,
    ).toBe(1);
    expect(await storedIds(req)).toEqual([aHigh.memory_id, bLow.memory_id]);
    void aLow;

    // ids AND entity: only the id that also has the entity
    expect(
      (await forget(req, { memory_ids: [aHigh.memory_id, bLow.memory_id], entity_id: 'bob' }))
        .forgotten_count,
    ).toBe(1);
    expect(await storedIds(req)).toEqual([aHigh.memory_id]);

    // ids AND kind with an empty intersection
    expect(
      (await forget(req, { memory_ids: [aHigh.memory_id], memory_kind: 'insight' }))
        .forgotten_count,
    ).toBe(0);
    // entity AND access floor AND staleness in the past: nothing is older than the cutoff
    expect(
      (
        await forget(req, {
          entity_id: 'alice',
          access_count_floor: 1,
          staleness_threshold_us: aHigh.created_at,
        })
      ).forgotten_count,
    ).toBe(0);
    expect(await storedIds(req)).toEqual([aHigh.memory_id]);
    // entity AND kind AND access floor: matches
    expect(
      (await forget(req, { entity_id: 'alice', memory_kind: 'episode', access_count_floor: 1 }))
        .forgotten_count,
    ).toBe(1);
    expect(await storedIds(req)).toEqual([]);
  });

  it('answers 400 without any criterion, changing nothing', async () => {
    const req = await freshWorkspace();
    await remember(req, { content: 'keep me' });
    for (const body of [{}, { something_else: true }]) {
      const res = await req('POST', '/v1/forget', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
    expect(await storedIds(req)).toHaveLength(1);
  });

  it.each([
    ['memory_kind unknown', { memory_kind: 'dream' }, 'memory_kind'],
    ['memory_ids not an array', { memory_ids: 'abc' }, 'memory_ids'],
    ['entity_id wrong type', { entity_id: 5 }, 'entity_id'],
    ['staleness negative', { staleness_threshold_us: -1 }, 'staleness_threshold_us'],
    ['staleness wrong type', { staleness_threshold_us: 'yesterday' }, 'staleness_threshold_us'],
    ['decay wrong type', { decay_score_floor: 'low' }, 'decay_score_floor'],
  ])('rejects %s with 400 naming the field', async (_name, body, field) => {
    const req = await freshWorkspace();
    await remember(req, { content: 'keep me' });
    const res = await req('POST', '/v1/forget', { body });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toContain(field);
    expect(await storedIds(req)).toHaveLength(1);
  });

  it('cascades to superseded versions and leaves one tombstone per removed memory', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'v0' });
    await revise(req, m.memory_id, { content: 'v1' });
    await revise(req, m.memory_id, { content: 'v2' });
    const other = await remember(req, { content: 'other' });
    const versions = (await storedIds(req)).filter(
      (id) => id !== m.memory_id && id !== other.memory_id,
    );
    expect(versions).toHaveLength(2);
    const res = await forget(req, { memory_ids: [m.memory_id] });
    expect(res).toEqual({
      forgotten_count: 1,
      cascade_count: 2,
      truncated: false,
      tombstone_count: 3,
    });
    for (const id of [m.memory_id, ...versions])
      expect((await req('GET', `/v1/memories/${id}`)).status).toBe(404);
    expect(await storedIds(req)).toEqual([other.memory_id]);
  });

  it('counts a memory once however often it is named, and a version named with its live memory is not a cascade', async () => {
    const req = await freshWorkspace();
    const a = await remember(req, { content: 'a' });
    expect(
      await forget(req, { memory_ids: [a.memory_id, a.memory_id, a.memory_id.toUpperCase()] }),
    ).toEqual({
      forgotten_count: 1,
      cascade_count: 0,
      truncated: false,
      tombstone_count: 1,
    });
    const m = await remember(req, { content: 'v0' });
    await revise(req, m.memory_id, { content: 'v1' });
    await revise(req, m.memory_id, { content: 'v2' });
    const versions = (await storedIds(req)).filter((id) => id !== m.memory_id);
    const res = await forget(req, { memory_ids: [m.memory_id, versions[0]] });
    expect(res).toEqual({
      forgotten_count: 2,
      cascade_count: 1,
      truncated: false,
      tombstone_count: 3,
    });
    expect(await storedIds(req)).toEqual([]);
  });

  it('cascades when selected by entity_id too', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'v0', entity_id: 'e' });
    await revise(req, m.memory_id, { content: 'v1' });
    const res = await forget(req, { entity_id: 'e' });
    expect(res).toEqual({
      forgotten_count: 1,
      cascade_count: 1,
      truncated: false,
      tombstone_count: 2,
    });
    expect(await storedIds(req)).toEqual([]);
  });

  it('removes the edges of forgotten memories from their neighbours', async () => {
    const req = await freshWorkspace();
    const a = await remember(req, { content: 'a' });
    const b = await remember(req, {
      content: 'b',
      edges: [{ target_id: a.memory_id, edge_type: 'caused_by' }],
    });
    const c = await remember(req, {
      content: 'c',
      edges: [
        { target_id: b.memory_id, edge_type: 'followed_by' },
        { target_id: a.memory_id, edge_type: 'related_to' },
      ],
    });
    expect((await req('GET', `/v1/memories/${a.memory_id}/edges`)).body.incoming).toHaveLength(2);
    await forget(req, { memory_ids: [b.memory_id] });
    const aEdges = await req('GET', `/v1/memories/${a.memory_id}/edges`);
    expect(aEdges.body.incoming.map((e: any) => e.source_id)).toEqual([c.memory_id]);
    const cEdges = await req('GET', `/v1/memories/${c.memory_id}/edges`);
    expect(cEdges.body.outgoing.map((e: any) => [e.target_id, e.edge_type])).toEqual([
      [a.memory_id, 'related_to'],
    ]);
    expect((await req('GET', `/v1/memories/${b.memory_id}/edges`)).status).toBe(404);
  });

  it('forgotten ids are gone from every read: get 404, batch skips, revise 404, a new edge to them 400', async () => {
    const req = await freshWorkspace();
    const gone = await remember(req, { content: 'secret' });
    const kept = await remember(req, { content: 'kept' });
    await forget(req, { memory_ids: [gone.memory_id] });
    expect((await req('GET', `/v1/memories/${gone.memory_id}`)).status).toBe(404);
    const batch = await req('POST', '/v1/memories/batch', {
      body: { memory_ids: [gone.memory_id, kept.memory_id] },
    });
    expect(batch.body.map((m: any) => m.memory_id)).toEqual([kept.memory_id]);
    expect(
      (await req('PUT', `/v1/revise/${gone.memory_id}`, { body: { content: 'x' } })).status,
    ).toBe(404);
    const edge = await req('POST', '/v1/memories', {
      body: { content: 'y', edges: [{ target_id: gone.memory_id, edge_type: 'related_to' }] },
    });
    expect(edge.status).toBe(400);
  });

  it('forgets at most 1000 per call and reports truncated (list limit 5000 is capped at 1000 on the way)', async () => {
    const req = await freshWorkspace();
    const total = 1001;
    for (let i = 0; i < total; i += 100) {
      const n = Math.min(100, total - i);
      const results = await Promise.all(
        Array.from({ length: n }, (_, j) =>
          req('POST', '/v1/memories', {
            body: { content: `bulk memory ${i + j}`, entity_id: 'bulk' },
          }),
        ),
      );
      expect(results.every((r) => r.status === 201)).toBe(true);
    }
    const capped = await req('GET', '/v1/memories?limit=5000');
    expect(capped.status).toBe(200);
    expect(capped.body.memories).toHaveLength(1000);
    expect(capped.body.next_cursor).toBe(capped.body.memories[999].memory_id);
    const tail = await req('GET', `/v1/memories?limit=5000&cursor=${capped.body.next_cursor}`);
    expect(tail.body.memories).toHaveLength(1);
    expect(tail.body.next_cursor).toBeNull();

    const first = await forget(req, { entity_id: 'bulk' });
    expect(first).toEqual({
      forgotten_count: 1000,
      cascade_count: 0,
      truncated: true,
      tombstone_count: 1000,
    });
    const left = await req('GET', '/v1/memories?limit=1000');
    expect(left.body.memories).toHaveLength(1);
    const second = await forget(req, { entity_id: 'bulk' });
    expect(second).toEqual({
      forgotten_count: 1,
      cascade_count: 0,
      truncated: false,
      tombstone_count: 1,
    });
    expect(await storedIds(req)).toEqual([]);
  });
});

describe('GET /v1/entities', () => {
  it('returns the sorted distinct entity ids of live memories', async () => {
    const req = await freshWorkspace();
    const empty = await req('GET', '/v1/entities');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    for (const e of ['zeta', 'alpha', 'mid', 'alpha', 'beta'])
      await remember(req, { content: `about ${e}`, entity_id: e });
    await remember(req, { content: 'no entity' });
    const res = await req('GET', '/v1/entities');
    expect(res.body).toEqual(['alpha', 'beta', 'mid', 'zeta']);
  });

  it('drops an entity once all its memories are forgotten', async () => {
    const req = await freshWorkspace();
    await remember(req, { content: 'a1', entity_id: 'a' });
    await remember(req, { content: 'a2', entity_id: 'a' });
    const b = await remember(req, { content: 'b1', entity_id: 'b' });
    await forget(req, { entity_id: 'a' });
    expect((await req('GET', '/v1/entities')).body).toEqual(['b']);
    await forget(req, { memory_ids: [b.memory_id] });
    expect((await req('GET', '/v1/entities')).body).toEqual([]);
  });

  it('counts live memories only: an entity left only on superseded versions is not listed', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'x', entity_id: 'old' });
    await revise(req, m.memory_id, { entity_id: 'new' });
    expect((await req('GET', '/v1/entities')).body).toEqual(['new']);
    // The version still carries 'old'.
    const all = await req('GET', '/v1/memories?include_superseded=true&entity_id=old');
    expect(all.body.memories).toHaveLength(1);
    expect(all.body.memories[0].superseded_by).toBe(m.memory_id);
  });
});

describe('revise and forget survive a restart', () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await startTestApp();
  });
  afterAll(async () => r.stop());

  it('keeps revisions, versions and edges, and forgotten memories stay forgotten', async () => {
    const req: Req = (method, path, opts = {}) => r.req(method, path, opts);
    const kept = await remember(req, { content: 'kept v0', entity_id: 'k' });
    await revise(req, kept.memory_id, { content: 'kept v1', context: { n: 1 } });
    const gone = await remember(req, {
      content: 'gone',
      entity_id: 'g',
      edges: [{ target_id: kept.memory_id, edge_type: 'related_to' }],
    });
    const goneRevised = await remember(req, { content: 'gone too v0' });
    await revise(req, goneRevised.memory_id, { content: 'gone too v1' });
    const f = await forget(req, { memory_ids: [gone.memory_id, goneRevised.memory_id] });
    expect(f).toEqual({
      forgotten_count: 2,
      cascade_count: 1,
      truncated: false,
      tombstone_count: 3,
    });
    const beforeRestart = await req('GET', '/v1/memories?include_superseded=true');

    await r.restart();

    const after = await req('GET', '/v1/memories?include_superseded=true');
    expect(after.body).toEqual(beforeRestart.body);
    expect(after.body.memories).toHaveLength(2);
    const live = await req('GET', `/v1/memories/${kept.memory_id}`);
    expect(live.body).toMatchObject({
      content: 'kept v1',
      kind: 'revision',
      logical_clock: 1,
      context: { n: 1 },
      entity_id: 'k',
    });
    const edges = await req('GET', `/v1/memories/${kept.memory_id}/edges`);
    expect(edges.body.outgoing.map((e: any) => e.edge_type)).toEqual(['revised_from']);
    expect(edges.body.incoming).toEqual([]);
    expect((await req('GET', `/v1/memories/${gone.memory_id}`)).status).toBe(404);
    expect((await req('GET', `/v1/memories/${goneRevised.memory_id}`)).status).toBe(404);
    expect((await req('GET', '/v1/entities')).body).toEqual(['k']);
    // The next revise continues the logical clock.
    expect((await revise(req, kept.memory_id, { importance: 0.8 })).logical_clock).toBe(2);
  });
});

describe('forgotten content leaves the data directory', () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await startTestApp({ eraseWithinS: 2 });
  });
  afterAll(async () => r.stop());

  function filesContaining(dir: string, needle: string): string[] {
    return dataFiles(dir)
      .filter((f) => f.bytes.includes(needle))
      .map((f) => f.path);
  }

  it('within FLASHBULB_ERASE_WITHIN_S, for the memory and its superseded versions', async () => {
    const req: Req = (method, path, opts = {}) => r.req(method, path, opts);
    const secret = `zq-secret-${process.pid}-${Date.now()}`;
    const keep = `zq-keep-${process.pid}-${Date.now()}`;
    const m = await remember(req, { content: `${secret} first` });
    await revise(req, m.memory_id, { content: `${secret} second` });
    await remember(req, { content: keep });
    expect(filesContaining(r.dataDir, secret).length).toBeGreaterThan(0);
    const f = await forget(req, { memory_ids: [m.memory_id] });
    expect(f.tombstone_count).toBe(2);
    let hits = filesContaining(r.dataDir, secret);
    await until(() => (hits = filesContaining(r.dataDir, secret)).length === 0, {
      what: 'the forgotten text to leave every file',
      deadlineMs: 2000 + 1500,
      everyMs: 100,
    }).catch(() => undefined);
    expect(hits).toEqual([]);
    // What was not forgotten is still stored and served.
    expect(filesContaining(r.dataDir, keep).length).toBeGreaterThan(0);
    expect((await req('GET', '/v1/memories')).body.memories.map((x: any) => x.content)).toEqual([
      keep,
    ]);
  });
});
