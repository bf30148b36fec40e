/**
 * Reflection performed by the service, over REST and gRPC, with the hash embedder (DESIGN.md 9,
 * 3.3; spec 4.1 insights, 4.2 ReflectService). Themes are written with shared vocabulary, which is
 * what the hash embedder can see (reflect-model.test.ts does the same with the real model and
 * natural sentences): 4 themes × 8 episodes plus 6 unrelated ones.
 *
 * - POST /v1/reflect writes one insight per theme, whose sources all belong to that theme (no
 *   noise, nothing from another theme), with kind 'insight', insight_from edges to every source,
 *   source_memory_ids, a context carrying cluster_id, confidence, source_count and tags, and an
 *   extractive text made of the theme's own statements and terms;
 * - reflecting again refreshes those insights in place (same ids, insights_created 0), and a new
 *   episode of a theme joins that theme's insight;
 * - GET /v1/insights orders by confidence and honours min_confidence, max_results and entity_id;
 *   gRPC GetInsights and Reflect agree.
 *
 * Background reflection and contradiction checks stay off here (the test app's default): every
 * insight comes from an explicit call.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import {
  connectGrpc,
  failsWith,
  type GrpcClient,
  type HebbsReplies,
  type MethodOf,
} from '../helpers/grpc.ts';

export const THEMES: Record<string, string[]> = {
  garden: [
    'Garden tomato plants need garden watering each morning.',
    'Garden compost feeds the garden tomato beds.',
    'Garden slugs attacked the garden tomato seedlings.',
    'Garden tomato harvest came early; garden tomatoes ripened fast.',
    'Garden basil grows beside garden tomato plants.',
    'Raised garden beds hold garden tomato vines.',
    'Garden drip hose waters garden tomato roots.',
    'Garden aphids found on garden tomato leaves.',
  ],
  running: [
    'Marathon training: long marathon run along the river.',
    'Marathon plan has a long marathon run every Sunday.',
    'Running shoes eased knee pain on long marathon runs.',
    'Marathon coach wants easy marathon running pace.',
    'Half marathon finished; marathon running time improved.',
    'Track intervals build marathon running speed.',
    'Stretching calves after long marathon runs.',
    'City marathon route: long marathon running course by the harbour.',
  ],
  database: [
    'Postgres database query slow: missing Postgres index.',
    'Postgres index made the database query faster.',
    'Database connection pool exhausted; Postgres database overloaded.',
    'Nightly Postgres database vacuum reclaims database space.',
    'Postgres query plan showed a database sequential scan.',
    'Postgres database replica lagged behind the primary database.',
    'Postgres work_mem raised so database sorts stay in memory.',
    'Slow Postgres database queries are logged.',
  ],
  baking: [
    'Sourdough bread starter needs flour feeding.',
    'Sourdough bread loaf rose after overnight sourdough proof.',
    'Sourdough bread baked in a Dutch oven has crisp crust.',
    'Sourdough bread dough uses high hydration flour.',
    'Whole wheat flour makes sourdough bread denser.',
    'Scoring sourdough bread loaf before baking.',
    'Sourdough starter smelled sour; sourdough bread needs fresh starter.',
    'Baking sourdough bread every Saturday morning.',
  ],
};
export const NOISE = [
  'The dentist appointment was moved to Friday afternoon.',
  'My passport expires next March.',
  'The cat knocked a glass off the kitchen table.',
  'Jupiter has dozens of known moons.',
  'I bought noise-cancelling headphones for the office.',
  'The electricity bill arrived two days late.',
];

type Req = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any; headers: Headers; text: string }>;

let t: TestApp;
let wsCounter = 0;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

/** A fresh workspace and a request function bound to its workspace key. */
async function freshWorkspace(): Promise<{ slug: string; key: string; req: Req }> {
  const slug = `refl-${++wsCounter}-${Date.now().toString(36)}`;
  const res = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(res.status, res.text).toBe(201);
  const key = res.body.api_key as string;
  return {
    slug,
    key,
    req: (method, path, body) => t.req(method, path, body === undefined ? { key } : { key, body }),
  };
}

async function remember(
  req: Req,
  content: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await req('POST', '/v1/memories', { content, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body.memory_id as string;
}

/** Writes every theme and the noise (in an interleaved order); returns id → label. */
async function writeThemes(req: Req): Promise<Map<string, string>> {
  const labelOf = new Map<string, string>();
  const items: Array<[string, string]> = [];
  const longest = Math.max(...Object.values(THEMES).map((v) => v.length));
  for (let i = 0; i < longest; i++) {
    for (const [label, texts] of Object.entries(THEMES))
      if (texts[i]) items.push([texts[i] as string, label]);
    if (NOISE[i]) items.push([NOISE[i] as string, 'noise']);
  }
  for (const [content, label] of items) labelOf.set(await remember(req, content), label);
  return labelOf;
}

async function insightsOf(req: Req, query = ''): Promise<any[]> {
  const res = await req('GET', `/v1/insights${query}`);
  expect(res.status, res.text).toBe(200);
  expect(Array.isArray(res.body)).toBe(true);
  return res.body as any[];
}

function labelsOf(insight: any, labelOf: Map<string, string>): string[] {
  return (insight.source_memory_ids as string[]).map((id) => labelOf.get(id) ?? `unknown:${id}`);
}

function shape(insights: any[], labelOf: Map<string, string>): string {
  return insights.map((i) => labelsOf(i, labelOf).join(',')).join(' | ');
}

/** The insight most of whose sources carry `label`. */
function insightFor(insights: any[], labelOf: Map<string, string>, label: string): any {
  const ranked = insights
    .map((i) => ({ i, n: labelsOf(i, labelOf).filter((l) => l === label).length }))
    .sort((a, b) => b.n - a.n);
  expect(
    ranked[0]?.n ?? 0,
    `no insight about ${label}: ${shape(insights, labelOf)}`,
  ).toBeGreaterThan(0);
  return ranked[0]?.i;
}

describe('POST /v1/reflect (hash embedder, themes with shared vocabulary)', () => {
  let ws: Awaited<ReturnType<typeof freshWorkspace>>;
  let labelOf: Map<string, string>;
  let first: any;
  let insights: any[];

  beforeAll(async () => {
    ws = await freshWorkspace();
    labelOf = await writeThemes(ws.req);
    const res = await ws.req('POST', '/v1/reflect', {});
    expect(res.status, res.text).toBe(200);
    first = res.body;
    insights = await insightsOf(ws.req);
  });

  it('reports what it did', () => {
    expect(first.memories_processed).toBe(38);
    expect(first.insights_created).toBe(insights.length);
    expect(first.clusters_processed).toBe(insights.length);
    expect(first.clusters_found).toBeGreaterThanOrEqual(first.clusters_processed);
    expect(insights.length).toBeGreaterThan(0);
  });

  it('writes exactly one insight per theme, each drawing only on that theme (no noise, no other theme)', () => {
    const layout = shape(insights, labelOf);
    expect(insights, layout).toHaveLength(4);
    const themes = new Set<string>();
    for (const ins of insights) {
      const labels = new Set(labelsOf(ins, labelOf));
      expect(labels.size, `an insight mixes ${[...labels].join(' + ')}: ${layout}`).toBe(1);
      const theme = [...labels][0] as string;
      expect(theme, layout).not.toBe('noise');
      expect(themes.has(theme), `two insights about ${theme}: ${layout}`).toBe(false);
      themes.add(theme);
      expect(ins.source_memory_ids.length, layout).toBeGreaterThanOrEqual(6);
    }
    expect([...themes].sort()).toEqual(Object.keys(THEMES).sort());
  });

  it('stores insights as kind insight with sources, context and insight_from edges to every source', async () => {
    for (const ins of insights) {
      expect(ins.kind).toBe('insight');
      expect(ins.memory_id).toMatch(/^[0-9a-f]{32}$/);
      const sources = ins.source_memory_ids as string[];
      expect(sources.length).toBeGreaterThanOrEqual(3);
      expect(new Set(sources).size).toBe(sources.length);
      for (const id of sources)
        expect(labelOf.has(id), `source ${id} is not an episode of this workspace`).toBe(true);
      expect(ins.context).toMatchObject({ source_count: sources.length, method: 'extractive' });
      expect(Number.isInteger(ins.context.cluster_id)).toBe(true);
      expect(ins.context.confidence).toBeGreaterThan(0);
      expect(ins.context.confidence).toBeLessThanOrEqual(1);
      expect(Array.isArray(ins.context.tags)).toBe(true);
      expect(ins.context.tags.length).toBeGreaterThan(0);
      for (const tag of ins.context.tags) expect(typeof tag).toBe('string');
      const edges = await ws.req('GET', `/v1/memories/${ins.memory_id}/edges`);
      expect(edges.status, edges.text).toBe(200);
      const targets = (edges.body.outgoing as any[])
        .filter((e) => e.edge_type === 'insight_from')
        .map((e) => e.target_id as string);
      expect(targets.sort()).toEqual([...sources].sort());
      for (const e of edges.body.outgoing as any[]) expect(e.source_id).toBe(ins.memory_id);
    }
    // Each source sees the edge from its side too.
    const someSource = insights[0].source_memory_ids[0] as string;
    const back = await ws.req('GET', `/v1/memories/${someSource}/edges`);
    expect(
      (back.body.incoming as any[]).some(
        (e) => e.edge_type === 'insight_from' && e.source_id === insights[0].memory_id,
      ),
    ).toBe(true);
    // Cluster ids are distinct within one reflection.
    expect(new Set(insights.map((i) => i.context.cluster_id)).size).toBe(insights.length);
  });

  it('writes a summary: whole central statements of its own sources and its distinguishing terms', async () => {
    const contentOf = new Map<string, string>();
    for (const texts of [...Object.values(THEMES), NOISE])
      for (const c of texts) contentOf.set(c, c);
    for (const ins of insights) {
      const text = ins.content as string;
      const own = await ws.req('POST', '/v1/memories/batch', { memory_ids: ins.source_memory_ids });
      const ownTexts = (own.body as any[]).map((m) => m.content as string);
      const quoted = ownTexts.filter((s) => text.includes(s));
      expect(
        quoted.length,
        `the insight quotes fewer than two of its sources in full: ${text}`,
      ).toBeGreaterThanOrEqual(2);
      const foreign = [...contentOf.keys()].filter(
        (s) => !ownTexts.includes(s) && text.includes(s),
      );
      expect(foreign, text).toEqual([]);
      const tags = ins.context.tags as string[];
      expect(
        tags.filter((tag) => text.toLowerCase().includes(tag)).length,
        text,
      ).toBeGreaterThanOrEqual(1);
      expect(text).toContain(`${ins.source_memory_ids.length} related memories`);
    }
    // The theme's own key words are among the tags.
    const keyWords: Record<string, string[]> = {
      garden: ['garden', 'tomato'],
      running: ['marathon'],
      database: ['postgres', 'database'],
      baking: ['sourdough', 'bread'],
    };
    for (const [label, words] of Object.entries(keyWords)) {
      const ins = insightFor(insights, labelOf, label);
      for (const w of words) expect(ins.context.tags, `${label}: ${ins.context.tags}`).toContain(w);
    }
  });

  it('reflecting again refreshes the insights in place instead of adding duplicates', async () => {
    const before = await insightsOf(ws.req);
    const again = await ws.req('POST', '/v1/reflect', {});
    expect(again.status, again.text).toBe(200);
    expect(again.body.insights_created).toBe(0);
    expect(again.body.insights_refreshed).toBe(before.length);
    const after = await insightsOf(ws.req);
    expect(after.map((i) => i.memory_id).sort()).toEqual(before.map((i) => i.memory_id).sort());
    for (const ins of after) {
      const old = before.find((b) => b.memory_id === ins.memory_id);
      expect(ins.logical_clock).toBe(old.logical_clock + 1);
      expect(ins.updated_at).toBeGreaterThanOrEqual(old.updated_at);
      expect(ins.created_at).toBe(old.created_at);
    }
    const listed = await ws.req('GET', '/v1/memories?kind=insight');
    expect(listed.body.memories).toHaveLength(before.length);
  });

  it('a new episode of a theme joins that theme’s insight on the next reflection', async () => {
    const before = await insightsOf(ws.req);
    const garden = insightFor(before, labelOf, 'garden');
    const added = await remember(ws.req, 'Garden tomato stakes keep garden tomato stems upright.');
    labelOf.set(added, 'garden');
    const res = await ws.req('POST', '/v1/reflect', {});
    expect(res.body.insights_created).toBe(0);
    const after = await insightsOf(ws.req);
    expect(after).toHaveLength(before.length);
    const refreshed = after.find((i) => i.memory_id === garden.memory_id);
    expect(refreshed, 'the garden insight kept its id').toBeDefined();
    expect(refreshed.source_memory_ids).toContain(added);
    expect(refreshed.context.source_count).toBe(refreshed.source_memory_ids.length);
    const edges = await ws.req('GET', `/v1/memories/${garden.memory_id}/edges`);
    expect(
      (edges.body.outgoing as any[]).some(
        (e) => e.edge_type === 'insight_from' && e.target_id === added,
      ),
    ).toBe(true);
  });

  it('an empty workspace reflects to nothing', async () => {
    const empty = await freshWorkspace();
    const res = await empty.req('POST', '/v1/reflect');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      insights_created: 0,
      clusters_found: 0,
      clusters_processed: 0,
      memories_processed: 0,
    });
    expect(await insightsOf(empty.req)).toEqual([]);
  });

  it('insights are workspace-scoped', async () => {
    const other = await freshWorkspace();
    expect(await insightsOf(other.req)).toEqual([]);
    const prefixed = await t.req('GET', `/v1/workspaces/${ws.slug}/insights`);
    expect(prefixed.status).toBe(200);
    expect((prefixed.body as any[]).length).toBe((await insightsOf(ws.req)).length);
  });
});

describe('reflect scoped to an entity', () => {
  it('clusters only that entity’s episodes and gives the insights its entity_id; GET /v1/insights filters by entity_id', async () => {
    const ws = await freshWorkspace();
    const alice = new Set<string>();
    for (const c of THEMES['garden'] as string[])
      alice.add(await remember(ws.req, c, { entity_id: 'alice' }));
    for (const c of THEMES['baking'] as string[]) await remember(ws.req, c, { entity_id: 'bob' });
    const res = await ws.req('POST', '/v1/reflect', { entity_id: 'alice' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.memories_processed).toBe(8);
    expect(res.body.insights_created).toBeGreaterThanOrEqual(1);
    const forAlice = await insightsOf(ws.req, '?entity_id=alice');
    expect(forAlice.length).toBe(res.body.insights_created);
    for (const ins of forAlice) {
      expect(ins.entity_id).toBe('alice');
      for (const id of ins.source_memory_ids) expect(alice.has(id)).toBe(true);
    }
    expect(await insightsOf(ws.req, '?entity_id=bob')).toEqual([]);
    expect(await insightsOf(ws.req, '?entity_id=nobody')).toEqual([]);
    const bob = await ws.req('POST', '/v1/reflect', { entity_id: 'bob' });
    expect(bob.body.insights_created).toBeGreaterThanOrEqual(1);
    const forBob = await insightsOf(ws.req, '?entity_id=bob');
    expect(forBob.every((i) => i.entity_id === 'bob')).toBe(true);
    expect((await insightsOf(ws.req)).length).toBe(forAlice.length + forBob.length);
  });
});

// ─── GET /v1/insights and gRPC GetInsights, with confidences set through the deprecated commit ─────

describe('GET /v1/insights', () => {
  let ws: Awaited<ReturnType<typeof freshWorkspace>>;
  const confidences = [0.55, 0.9, 0.2, 0.75];

  beforeAll(async () => {
    ws = await freshWorkspace();
    for (const c of THEMES['database'] as string[]) await remember(ws.req, c);
    const prep = await ws.req('POST', '/v1/reflect/prepare', {});
    expect(prep.status, prep.text).toBe(200);
    const ids = prep.body.clusters.flatMap((c: any) => c.memory_ids) as string[];
    expect(ids.length).toBeGreaterThanOrEqual(3);
    const commit = await ws.req('POST', '/v1/reflect/commit', {
      session_id: prep.body.session_id,
      insights: confidences.map((confidence, i) => ({
        content: `Database insight ${i} at confidence ${confidence}.`,
        confidence,
        source_memory_ids: ids.slice(0, 3),
        tags: ['db'],
      })),
    });
    expect(commit.status, commit.text).toBe(200);
    expect(commit.body.insights_created).toBe(confidences.length);
  });

  it('orders insights by confidence, highest first', async () => {
    const all = await insightsOf(ws.req);
    expect(all.map((i) => i.context.confidence)).toEqual([0.9, 0.75, 0.55, 0.2]);
    expect(all.every((i) => i.kind === 'insight')).toBe(true);
  });

  it('min_confidence keeps insights at or above it', async () => {
    expect(
      (await insightsOf(ws.req, '?min_confidence=0.6')).map((i) => i.context.confidence),
    ).toEqual([0.9, 0.75]);
    expect(
      (await insightsOf(ws.req, '?min_confidence=0.75')).map((i) => i.context.confidence),
    ).toEqual([0.9, 0.75]);
    expect(await insightsOf(ws.req, '?min_confidence=0.95')).toEqual([]);
    expect((await insightsOf(ws.req, '?min_confidence=0')).length).toBe(4);
  });

  it('max_results keeps the most confident ones', async () => {
    expect((await insightsOf(ws.req, '?max_results=1')).map((i) => i.context.confidence)).toEqual([
      0.9,
    ]);
    expect(
      (await insightsOf(ws.req, '?max_results=3&min_confidence=0.5')).map(
        (i) => i.context.confidence,
      ),
    ).toEqual([0.9, 0.75, 0.55]);
    expect((await insightsOf(ws.req, '?max_results=100000')).length).toBe(4);
  });

  it('rejects out-of-range and malformed parameters with 400', async () => {
    for (const q of [
      '?min_confidence=1.5',
      '?min_confidence=-0.1',
      '?min_confidence=abc',
      '?max_results=0',
      '?max_results=abc',
    ]) {
      const res = await ws.req('GET', `/v1/insights${q}`);
      expect(res.status, `${q}: ${res.text}`).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
  });

  describe('gRPC ReflectService', () => {
    let rpc: GrpcClient;
    const call = <M extends MethodOf<'ReflectService'>>(
      method: M,
      req: object,
      key = ws.key,
    ): Promise<HebbsReplies['ReflectService'][M]> =>
      rpc.call('ReflectService', method, req, { key });

    beforeAll(() => {
      rpc = connectGrpc(t.app.grpcPort);
    });
    afterAll(() => rpc?.close());

    it('GetInsights orders by confidence and honours min_confidence and max_results', async () => {
      const all = await call('GetInsights', {});
      expect(all.insights).toHaveLength(4);
      const conf = (r: any): number[] =>
        r.insights.map((m: any) => Math.round(m.context.fields.confidence.numberValue * 100) / 100);
      expect(conf(all)).toEqual([0.9, 0.75, 0.55, 0.2]);
      for (const m of all.insights) {
        expect(m.kind).toBe('MEMORY_KIND_INSIGHT');
        expect(Buffer.isBuffer(m.memory_id) && m.memory_id.length === 16).toBe(true);
        expect(m.source_memory_ids).toHaveLength(3);
        for (const s of m.source_memory_ids) expect(s.length).toBe(16);
      }
      const rest = await insightsOf(ws.req);
      expect(all.insights.map((m: any) => m.memory_id.toString('hex'))).toEqual(
        rest.map((i) => i.memory_id),
      );
      expect(conf(await call('GetInsights', { min_confidence: 0.6 }))).toEqual([0.9, 0.75]);
      expect(conf(await call('GetInsights', { max_results: 2 }))).toEqual([0.9, 0.75]);
    });

    it('GetInsights filters by entity_id and is scoped to the caller’s workspace', async () => {
      expect((await call('GetInsights', { entity_id: 'nobody' })).insights).toEqual([]);
      const other = await freshWorkspace();
      expect((await call('GetInsights', {}, other.key)).insights).toEqual([]);
    });

    it('Reflect runs the service’s reflection (scope required)', async () => {
      const other = await freshWorkspace();
      for (const c of THEMES['running'] as string[]) await remember(other.req, c);
      const res = await call('Reflect', { scope: { global: {} } }, other.key);
      expect(Number(res.memories_processed)).toBe(8);
      expect(Number(res.insights_created)).toBeGreaterThanOrEqual(1);
      expect((await insightsOf(other.req)).length).toBe(Number(res.insights_created));
      await failsWith(call('Reflect', {}, other.key), grpc.status.INVALID_ARGUMENT);
    });
  });
});
