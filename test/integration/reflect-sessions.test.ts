/**
 * The deprecated agent-driven reflection, POST /v1/reflect/prepare and /v1/reflect/commit
 * (spec 2.8, 3 "Reflect session", 4.6; DESIGN.md 9): prepare clusters the episodes and hands out
 * prompts under a session id (no model is called, nothing is stored); commit stores the insights
 * the agent wrote. Sessions expire 10 minutes after creation; an unknown or expired session — or
 * another workspace's — is a 404; source ids outside the session's clusters are a 400 naming them;
 * a commit applies all or nothing. Both routes carry `Deprecation: true`.
 *
 * Expiry is tested on the router's clock (the app's `clock`, a ManualClock set years away from the
 * real time): sessions live in the router and expire on that clock, so the test moves it past the
 * ten minutes instead of waiting or faking `Date` (shards run in worker threads and keep the real clock).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToUlidText } from '../../src/model/ids.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

const GARDEN = [
  'Garden tomato plants need garden watering each morning.',
  'Garden compost feeds the garden tomato beds.',
  'Garden slugs attacked the garden tomato seedlings.',
  'Garden basil grows beside garden tomato plants.',
  'Raised garden beds hold garden tomato vines.',
  'Garden drip hose waters garden tomato roots.',
];
const BAKING = [
  'Sourdough bread starter needs flour feeding.',
  'Sourdough bread loaf rose after overnight sourdough proof.',
  'Sourdough bread baked in a Dutch oven has crisp crust.',
  'Whole wheat flour makes sourdough bread denser.',
  'Scoring sourdough bread loaf before baking.',
  'Baking sourdough bread every Saturday morning.',
];
const TEN_MINUTES = 10 * 60 * 1000;

type Req = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any; headers: Headers; text: string }>;
interface Ws {
  slug: string;
  key: string;
  req: Req;
  ids: string[];
  contentOf: Map<string, string>;
}

const T0 = Date.UTC(2001, 0, 1);
const clock = new ManualClock(T0);
let t: TestApp;
let n = 0;

beforeAll(async () => {
  t = await startTestApp({}, {}, { clock });
});
afterAll(async () => {
  await t?.stop();
});

/** A fresh workspace holding the garden and baking episodes (the garden ones with entity_id 'gardener'). */
async function workspaceWithEpisodes(): Promise<Ws> {
  const slug = `sess-${++n}-${Date.now().toString(36)}`;
  const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.api_key as string;
  const req: Req = (method, path, body) =>
    t.req(method, path, body === undefined ? { key } : { key, body });
  const ids: string[] = [];
  const contentOf = new Map<string, string>();
  for (const [content, entity] of [
    ...GARDEN.map((c) => [c, 'gardener'] as const),
    ...BAKING.map((c) => [c, null] as const),
  ]) {
    const res = await req(
      'POST',
      '/v1/memories',
      entity ? { content, entity_id: entity, importance: 0.7 } : { content },
    );
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.memory_id);
    contentOf.set(res.body.memory_id, content);
  }
  return { slug, key, req, ids, contentOf };
}

async function prepare(ws: Ws, body: unknown = {}): Promise<any> {
  const res = await ws.req('POST', '/v1/reflect/prepare', body);
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('deprecation')).toBe('true');
  return res.body;
}

const sessionIds = (prep: any): string[] => prep.clusters.flatMap((c: any) => c.memory_ids);

async function insightCount(ws: Ws): Promise<number> {
  const res = await ws.req('GET', '/v1/insights');
  expect(res.status).toBe(200);
  return (res.body as any[]).length;
}

describe('POST /v1/reflect/prepare', () => {
  it('returns a session, the clusters as ClusterPrompts with their memories, and stores nothing', async () => {
    const ws = await workspaceWithEpisodes();
    const prep = await prepare(ws);
    expect(typeof prep.session_id).toBe('string');
    expect(prep.session_id.length).toBeGreaterThan(0);
    expect(prep.memories_processed).toBe(12);
    expect(prep.existing_insight_count).toBe(0);
    expect(prep.clusters.length).toBeGreaterThanOrEqual(1);
    const clusterIds = new Set<number>();
    for (const c of prep.clusters) {
      expect(Number.isInteger(c.cluster_id)).toBe(true);
      clusterIds.add(c.cluster_id);
      expect(c.member_count).toBe(c.memory_ids.length);
      expect(c.member_count).toBeGreaterThanOrEqual(3);
      expect(c.proposal_system_prompt.length).toBeGreaterThan(20);
      expect(typeof c.validation_context).toBe('string');
      expect(c.memories).toHaveLength(c.member_count);
      for (const [i, m] of (c.memories as any[]).entries()) {
        expect(m.memory_id).toBe(c.memory_ids[i]);
        expect(ws.ids).toContain(m.memory_id);
        expect(m.content).toBe(ws.contentOf.get(m.memory_id));
        // The prompt shows the agent every statement of the cluster.
        expect(c.proposal_user_prompt).toContain(m.content);
        expect(m.importance).toBeCloseTo(GARDEN.includes(m.content) ? 0.7 : 0.5, 5);
        expect(m.entity_id).toBe(GARDEN.includes(m.content) ? 'gardener' : null);
        expect(Number.isInteger(m.created_at)).toBe(true);
        expect(m.created_at).toBeGreaterThan(1e15);
      }
    }
    expect(clusterIds.size).toBe(prep.clusters.length);
    expect(await insightCount(ws)).toBe(0);
    expect((await ws.req('GET', '/v1/memories?kind=insight')).body.memories).toEqual([]);
  });

  it('scopes to entity_id', async () => {
    const ws = await workspaceWithEpisodes();
    const prep = await prepare(ws, { entity_id: 'gardener' });
    expect(prep.memories_processed).toBe(GARDEN.length);
    for (const id of sessionIds(prep)) expect(GARDEN).toContain(ws.contentOf.get(id));
  });

  it('accepts an empty body, and answers an empty workspace with no clusters', async () => {
    const slug = `sess-empty-${Date.now().toString(36)}`;
    const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
    const res = await t.req('POST', '/v1/reflect/prepare', { key: created.body.api_key });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      memories_processed: 0,
      clusters: [],
      existing_insight_count: 0,
    });
  });
});

describe('POST /v1/reflect/commit', () => {
  it('stores the agent’s insights with insight_from edges; prepare then counts them', async () => {
    const ws = await workspaceWithEpisodes();
    const prep = await prepare(ws);
    const c = prep.clusters[0];
    const res = await ws.req('POST', '/v1/reflect/commit', {
      session_id: prep.session_id,
      insights: [
        {
          content: 'The gardener tends tomatoes daily.',
          confidence: 0.8,
          source_memory_ids: c.memory_ids,
          tags: ['garden', 'tomato'],
          cluster_id: c.cluster_id,
        },
        {
          content: 'A second, narrower insight.',
          confidence: 0.4,
          source_memory_ids: c.memory_ids.slice(0, 2),
        },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('deprecation')).toBe('true');
    expect(res.body).toEqual({ insights_created: 2 });
    const insights = (await ws.req('GET', '/v1/insights')).body as any[];
    expect(insights.map((i) => i.content)).toEqual([
      'The gardener tends tomatoes daily.',
      'A second, narrower insight.',
    ]);
    const [first, second] = insights;
    expect(first).toMatchObject({ kind: 'insight', source_memory_ids: c.memory_ids });
    expect(first.context).toMatchObject({
      confidence: 0.8,
      source_count: c.memory_ids.length,
      tags: ['garden', 'tomato'],
      cluster_id: c.cluster_id,
    });
    expect(second.context).toMatchObject({ confidence: 0.4, source_count: 2, tags: [] });
    const edges = await ws.req('GET', `/v1/memories/${first.memory_id}/edges`);
    expect(
      (edges.body.outgoing as any[])
        .filter((e) => e.edge_type === 'insight_from')
        .map((e) => e.target_id)
        .sort(),
    ).toEqual([...c.memory_ids].sort());
    expect((await prepare(ws)).existing_insight_count).toBe(2);
  });

  it('accepts ULID text and upper-case hex for source ids', async () => {
    const ws = await workspaceWithEpisodes();
    const prep = await prepare(ws);
    const ids = prep.clusters[0].memory_ids as string[];
    const res = await ws.req('POST', '/v1/reflect/commit', {
      session_id: prep.session_id,
      insights: [
        {
          content: 'Upper-case ids work.',
          confidence: 0.5,
          source_memory_ids: ids.map((id) => id.toUpperCase()),
        },
        {
          content: 'ULID text ids work.',
          confidence: 0.5,
          source_memory_ids: ids.map((id) => hexToUlidText(id)),
        },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.insights_created).toBe(2);
    const stored = (await ws.req('GET', '/v1/insights')).body as any[];
    for (const ins of stored) expect([...ins.source_memory_ids].sort()).toEqual([...ids].sort());
  });

  it('an unknown session is a 404', async () => {
    const ws = await workspaceWithEpisodes();
    const res = await ws.req('POST', '/v1/reflect/commit', {
      session_id: '01J0000000000000000000000Z',
      insights: [{ content: 'x', confidence: 0.5, source_memory_ids: [ws.ids[0]] }],
    });
    expect(res.status, res.text).toBe(404);
    expect(res.body.error_code).toBe('not_found');
    expect(await insightCount(ws)).toBe(0);
  });

  it('error answers of the deprecated routes carry `Deprecation: true` too', async () => {
    const ws = await workspaceWithEpisodes();
    const res = await ws.req('POST', '/v1/reflect/commit', { session_id: 'nope', insights: [] });
    expect(res.status).toBe(404);
    expect(res.headers.get('deprecation')).toBe('true');
    const bad = await ws.req('POST', '/v1/contradictions/commit', {
      verdicts: [{ pending_id: 'f'.repeat(32), verdict: 'dismiss', confidence: 1 }],
    });
    expect(bad.status).toBe(404);
    expect(bad.headers.get('deprecation')).toBe('true');
  });

  it('source ids outside the session’s clusters are a 400 naming them, and nothing is stored', async () => {
    const ws = await workspaceWithEpisodes();
    const prep = await prepare(ws);
    const inSession = sessionIds(prep);
    // A memory written after prepare, and a well-formed id that exists nowhere.
    const later = (
      await ws.req('POST', '/v1/memories', {
        content: 'Garden tomato cages for the garden tomato rows.',
      })
    ).body.memory_id as string;
    const nowhere = 'ab'.repeat(16);
    for (const foreign of [later, nowhere]) {
      const res = await ws.req('POST', '/v1/reflect/commit', {
        session_id: prep.session_id,
        insights: [
          {
            content: 'Mixed sources.',
            confidence: 0.6,
            source_memory_ids: [inSession[0], foreign],
          },
        ],
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
      expect(res.body.message).toContain(foreign);
      expect(res.body.message).not.toContain(inSession[0]);
    }
    expect(await insightCount(ws)).toBe(0);
    // The session is still good for a correct commit.
    const ok = await ws.req('POST', '/v1/reflect/commit', {
      session_id: prep.session_id,
      insights: [{ content: 'Fine.', confidence: 0.6, source_memory_ids: [inSession[0]] }],
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.insights_created).toBe(1);
  });

  it('applies all or nothing: one bad insight among good ones stores none', async () => {
    const ws = await workspaceWithEpisodes();
    const prep = await prepare(ws);
    const ids = sessionIds(prep);
    const good = {
      content: 'A good insight.',
      confidence: 0.7,
      source_memory_ids: ids.slice(0, 3),
    };
    const later = (
      await ws.req('POST', '/v1/memories', { content: 'Sourdough bread crumb was gummy.' })
    ).body.memory_id as string;
    for (const bad of [
      { content: 'Foreign source.', confidence: 0.7, source_memory_ids: [later] },
      { content: 'Too confident.', confidence: 1.5, source_memory_ids: ids.slice(0, 1) },
      { content: '   ', confidence: 0.5, source_memory_ids: ids.slice(0, 1) },
      { content: 'No sources.', confidence: 0.5, source_memory_ids: [] },
      { content: 'Malformed id.', confidence: 0.5, source_memory_ids: ['not-an-id'] },
    ]) {
      const res = await ws.req('POST', '/v1/reflect/commit', {
        session_id: prep.session_id,
        insights: [good, bad, good],
      });
      expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
    expect(await insightCount(ws)).toBe(0);
    expect((await ws.req('GET', '/v1/memories?kind=insight')).body.memories).toEqual([]);
  });

  it('rejects malformed bodies with 400', async () => {
    const ws = await workspaceWithEpisodes();
    for (const body of [
      {},
      { session_id: 'x' },
      { insights: [] },
      { session_id: 'x', insights: {} },
      { session_id: 'x', insights: [{ content: 'c' }] },
    ]) {
      const res = await ws.req('POST', '/v1/reflect/commit', body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
  });

  it('a session belongs to its workspace: another workspace gets a 404, and the owner can still commit', async () => {
    const a = await workspaceWithEpisodes();
    const b = await workspaceWithEpisodes();
    const prep = await prepare(a);
    const insight = {
      content: 'Only for A.',
      confidence: 0.6,
      source_memory_ids: sessionIds(prep).slice(0, 3),
    };
    const fromB = await b.req('POST', '/v1/reflect/commit', {
      session_id: prep.session_id,
      insights: [insight],
    });
    expect(fromB.status, fromB.text).toBe(404);
    // An admin addressing B by prefix is refused too.
    const viaPrefix = await t.req('POST', `/v1/workspaces/${b.slug}/reflect/commit`, {
      body: { session_id: prep.session_id, insights: [insight] },
    });
    expect(viaPrefix.status, viaPrefix.text).toBe(404);
    expect(await insightCount(a)).toBe(0);
    expect(await insightCount(b)).toBe(0);
    const fromA = await a.req('POST', '/v1/reflect/commit', {
      session_id: prep.session_id,
      insights: [insight],
    });
    expect(fromA.status, fromA.text).toBe(200);
    expect(await insightCount(a)).toBe(1);
    expect(await insightCount(b)).toBe(0);
  });

  it('a session lives 10 minutes: usable just before, 404 just after (nothing stored)', async () => {
    const ws = await workspaceWithEpisodes();
    const early = await prepare(ws);
    const late = await prepare(ws);
    const createdAt = clock.nowUs() / 1000;
    const insight = (prep: any): unknown => ({
      session_id: prep.session_id,
      insights: [
        { content: 'Timed.', confidence: 0.5, source_memory_ids: sessionIds(prep).slice(0, 3) },
      ],
    });

    clock.setMs(createdAt + TEN_MINUTES - 5_000);
    const before = await ws.req('POST', '/v1/reflect/commit', insight(early));
    expect(before.status, before.text).toBe(200);
    expect(before.body.insights_created).toBe(1);

    clock.setMs(createdAt + TEN_MINUTES + 5_000);
    const after = await ws.req('POST', '/v1/reflect/commit', insight(late));
    expect(after.status, after.text).toBe(404);
    expect(after.body.error_code).toBe('not_found');

    expect(await insightCount(ws)).toBe(1);
    // Still gone with the clock set back inside its ten minutes: the sweep removed it.
    clock.setMs(createdAt);
    const again = await ws.req('POST', '/v1/reflect/commit', insight(late));
    expect(again.status).toBe(404);
  });
});
