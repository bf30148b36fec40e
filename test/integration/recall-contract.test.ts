/**
 * POST /v1/recall, the contract (spec 2.7, 4.3; DESIGN.md 3.3, 6): score and relevance, sorting,
 * top_k per strategy, request forms (`strategy` alias, strategy objects with their own options,
 * cue_context as text or object, ef_search), validation (400 with the JSON error body) and access
 * counting. Hash embedder; relevance is checked against cosines computed here with the same
 * deterministic embedder. Background reflection and contradiction checks are off so that each
 * workspace holds exactly what the test wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashEmbedder } from '../../src/embedding/hash-embedder.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const QUIET = { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' };
const ONLY_RELEVANCE = { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 };
const MAX_AGE_US = 30 * 86_400_000_000;

const hash = createHashEmbedder(384);

async function embed(text: string): Promise<Float32Array> {
  return hash.embed([text]);
}

/** Cosine of two texts under the hash embedder, clamped to [0, 1] (what `relevance` must be). */
async function relevanceOf(cue: string, content: string): Promise<number> {
  const [a, b] = await Promise.all([embed(cue), embed(content)]);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return Math.min(1, Math.max(0, s));
}

let t: TestApp;
let seq = 0;

type Req = (
  method: string,
  path: string,
  opts?: { body?: unknown; raw?: string; headers?: Record<string, string> },
) => ReturnType<TestApp['req']>;

async function freshWorkspace(): Promise<Req> {
  const slug = `rc-${process.pid}-${++seq}`;
  const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.api_key as string;
  return (method, path, opts = {}) => t.req(method, path, { ...opts, key });
}

async function remember(req: Req, body: Record<string, unknown>): Promise<any> {
  const res = await req('POST', '/v1/memories', { body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function recall(
  req: Req,
  body: Record<string, unknown>,
): Promise<{ results: any[]; strategy_errors: any[] }> {
  const res = await req('POST', '/v1/recall', { body });
  expect(res.status, res.text).toBe(200);
  expect(Array.isArray(res.body.results)).toBe(true);
  expect(Array.isArray(res.body.strategy_errors)).toBe(true);
  return res.body;
}

function detailsOf(results: any[], strategy: string): any[] {
  return results.flatMap((r) => r.strategy_details.filter((d: any) => d.strategy === strategy));
}

function ids(results: any[]): string[] {
  return results.map((r) => r.memory.memory_id);
}

const TOPICS = [
  'the red bicycle was stolen from the garage last night',
  'a volcano erupted and covered the village in grey ash',
  'our team won the chess tournament in the final round',
  'the bakery on main street sells sourdough bread every morning',
  'heavy snow closed the mountain pass for three days',
  'the violinist tuned her instrument before the concert',
  'grandfather planted tomatoes and beans in the garden',
  'the stock market fell sharply after the bank announcement',
];

/** A small workspace: the topics above with rising importance, B→A chains for causal walks. */
async function topicWorkspace(): Promise<{ req: Req; memories: any[] }> {
  const req = await freshWorkspace();
  const memories: any[] = [];
  for (const [i, content] of TOPICS.entries()) {
    const edges = i === 0 ? [] : [{ target_id: memories[i - 1].memory_id, edge_type: 'caused_by' }];
    memories.push(
      await remember(req, {
        content,
        importance: (i + 1) / 10,
        context: { topic: `t${i}`, n: i },
        edges,
      }),
    );
  }
  return { req, memories };
}

beforeAll(async () => {
  t = await startTestApp({}, QUIET);
});
afterAll(async () => t.stop());

describe('score and relevance', () => {
  it('relevance is the similarity relevance where similarity found the memory, else the clamped cosine; weights 1/0/0/0 make score equal it', async () => {
    const { req, memories } = await topicWorkspace();
    const cue = 'a stolen bicycle in the garage';
    const out = await recall(req, {
      cue,
      strategies: ['similarity', 'temporal', 'causal', 'analogical'],
      top_k: 4,
      scoring_weights: ONLY_RELEVANCE,
    });
    expect(out.results.length).toBeLessThanOrEqual(memories.length);
    for (const strategy of ['similarity', 'temporal', 'causal', 'analogical'])
      expect(detailsOf(out.results, strategy).length).toBeGreaterThan(0);
    let withoutSimilarity = 0;
    for (const r of out.results) {
      expect(r.relevance).toBeGreaterThanOrEqual(0);
      expect(r.relevance).toBeLessThanOrEqual(1);
      const cosine = await relevanceOf(cue, r.memory.content);
      const sim = r.strategy_details.find((d: any) => d.strategy === 'similarity');
      if (sim) {
        expect(r.relevance).toBeCloseTo(sim.relevance, 9);
        expect(sim.cosine).toBeCloseTo(cosine, 5);
      } else {
        withoutSimilarity += 1;
        expect(r.relevance).toBeCloseTo(cosine, 5);
      }
      expect(r.score).toBeCloseTo(r.relevance, 9);
    }
    expect(withoutSimilarity).toBeGreaterThan(0);
  });

  it('similarity details carry the same relevance, and distance + relevance == 1', async () => {
    const { req } = await topicWorkspace();
    const out = await recall(req, {
      cue: 'volcano ash over the village',
      strategies: ['similarity'],
      top_k: 8,
    });
    expect(out.results).toHaveLength(8);
    for (const r of out.results) {
      expect(r.strategy_details).toHaveLength(1);
      const [d] = r.strategy_details;
      expect(Object.keys(d).sort()).toEqual([
        'cosine',
        'distance',
        'lexical',
        'relevance',
        'strategy',
      ]);
      expect(d.relevance).toBeCloseTo(r.relevance, 9);
      expect(d.distance + d.relevance).toBeCloseTo(1, 9);
      expect(d.cosine).toBeCloseTo(
        await relevanceOf('volcano ash over the village', r.memory.content),
        5,
      );
      expect(d.lexical).toBeGreaterThanOrEqual(0);
      expect(d.lexical).toBeLessThanOrEqual(1);
    }
    expect(out.results[0].memory.content).toBe(TOPICS[1]);
  });

  it('score is the weighted blend of relevance, recency, importance and reinforcement (DESIGN 6)', async () => {
    const { req } = await topicWorkspace();
    const weights = { w_relevance: 0.3, w_recency: 0.4, w_importance: 0.3, w_reinforcement: 0 };
    const before = Date.now() * 1000;
    const out = await recall(req, {
      cue: 'chess tournament final',
      strategies: ['similarity'],
      scoring_weights: weights,
    });
    const after = Date.now() * 1000;
    for (const r of out.results) {
      const m = r.memory;
      const recencyHigh = Math.max(0, 1 - Math.max(0, before - m.created_at) / MAX_AGE_US);
      const recencyLow = Math.max(0, 1 - Math.max(0, after - m.created_at) / MAX_AGE_US);
      const base = 0.3 * r.relevance + 0.3 * m.importance;
      expect(r.score).toBeGreaterThanOrEqual(base + 0.4 * recencyLow - 1e-9);
      expect(r.score).toBeLessThanOrEqual(base + 0.4 * recencyHigh + 1e-9);
    }
    // Importance alone: the score is the importance, and the order follows it.
    const byImportance = await recall(req, {
      cue: 'anything at all',
      strategies: ['similarity'],
      scoring_weights: { w_relevance: 0, w_recency: 0, w_importance: 1, w_reinforcement: 0 },
    });
    for (const r of byImportance.results) expect(r.score).toBeCloseTo(r.memory.importance, 9);
    expect(byImportance.results.map((r) => r.memory.importance)).toEqual([
      0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1,
    ]);
    // A short max_age_us makes recency 0 for memories older than it.
    const aged = await recall(req, {
      cue: 'x',
      strategies: ['temporal'],
      scoring_weights: {
        w_relevance: 0,
        w_recency: 1,
        w_importance: 0,
        w_reinforcement: 0,
        max_age_us: 1,
      },
    });
    for (const r of aged.results) expect(r.score).toBeCloseTo(0, 12);
  });

  it('reinforcement = min(1, log2(1 + access_count) / log2(1 + cap)) of the returned access_count', async () => {
    const req = await freshWorkspace();
    await remember(req, { content: 'the lighthouse keeper logs every passing ship' });
    const weights = {
      w_relevance: 0,
      w_recency: 0,
      w_importance: 0,
      w_reinforcement: 1,
      reinforcement_cap: 3,
    };
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const [r] = (
        await recall(req, {
          cue: 'lighthouse ship',
          strategies: ['similarity'],
          scoring_weights: weights,
        })
      ).results;
      const n = r.memory.access_count as number;
      seen.push(n);
      expect(r.score).toBeCloseTo(Math.min(1, Math.log2(1 + n) / Math.log2(4)), 9);
    }
    expect(seen[4]).toBeGreaterThan(seen[0] as number);
  });

  it('a multi-strategy recall is ordered by rank fusion: what similarity finds for the cue comes first', async () => {
    const { req } = await topicWorkspace();
    const cue = 'snow in the mountains';
    const alone = await recall(req, { cue, strategies: ['similarity'], top_k: 3 });
    const out = await recall(req, {
      cue,
      strategies: ['temporal', 'similarity', 'analogical', 'causal'],
      top_k: 3,
    });
    expect(out.results.length).toBeGreaterThan(3);
    expect(new Set(ids(out.results)).size).toBe(out.results.length);
    expect(new Set(ids(out.results).slice(0, 3))).toEqual(new Set(ids(alone.results)));
  });
});

describe('top_k', () => {
  it('applies per strategy: each strategy contributes at most top_k, the union may hold more', async () => {
    const req = await freshWorkspace();
    for (let i = 0; i < 12; i++)
      await remember(req, {
        content: `harbour note ${i}: a boat arrived with ${i} crates of apples`,
      });
    const both = await recall(req, {
      cue: 'boat with crates',
      strategies: ['similarity', 'temporal'],
      top_k: 3,
    });
    expect(detailsOf(both.results, 'similarity')).toHaveLength(3);
    expect(detailsOf(both.results, 'temporal')).toHaveLength(3);
    expect(both.results.length).toBeGreaterThanOrEqual(3);
    expect(both.results.length).toBeLessThanOrEqual(6);

    const perStrategy = await recall(req, {
      cue: 'boat with crates',
      strategies: [
        { strategy: 'similarity', top_k: 2 },
        { strategy: 'temporal', top_k: 5 },
      ],
      top_k: 1,
    });
    expect(detailsOf(perStrategy.results, 'similarity')).toHaveLength(2);
    expect(detailsOf(perStrategy.results, 'temporal')).toHaveLength(5);

    const byDefault = await recall(req, { cue: 'boat with crates', strategies: ['similarity'] });
    expect(byDefault.results).toHaveLength(10);
    const all = await recall(req, {
      cue: 'boat with crates',
      strategies: ['similarity'],
      top_k: 1000,
    });
    expect(all.results).toHaveLength(12);
  });
});

describe('request forms', () => {
  it('accepts `strategy` (one string) as an alias of `strategies`', async () => {
    const { req } = await topicWorkspace();
    const a = await recall(req, {
      cue: 'bread from the bakery',
      strategy: 'similarity',
      top_k: 3,
      scoring_weights: ONLY_RELEVANCE,
    });
    const b = await recall(req, {
      cue: 'bread from the bakery',
      strategies: ['similarity'],
      top_k: 3,
      scoring_weights: ONLY_RELEVANCE,
    });
    expect(ids(a.results)).toEqual(ids(b.results));
    expect(a.results).toHaveLength(3);
    expect(a.results[0].memory.content).toBe(TOPICS[3]);
    const temporal = await recall(req, { cue: 'x', strategy: 'temporal', top_k: 2 });
    expect(detailsOf(temporal.results, 'temporal')).toHaveLength(2);
  });

  it('strategies may be objects with their own options, falling back to the request-level ones', async () => {
    const req = await freshWorkspace();
    const a = [];
    const b = [];
    for (let i = 0; i < 4; i++)
      a.push(
        await remember(req, {
          content: `ant colony report ${i}: workers carried leaves`,
          entity_id: 'ants',
        }),
      );
    for (let i = 0; i < 4; i++)
      b.push(
        await remember(req, {
          content: `bee hive report ${i}: workers carried pollen`,
          entity_id: 'bees',
        }),
      );
    const out = await recall(req, {
      cue: 'workers carried pollen',
      entity_id: 'ants',
      top_k: 3,
      strategies: [
        { strategy: 'temporal' },
        { strategy: 'similarity', entity_id: 'bees', top_k: 1 },
      ],
    });
    const temporalIds = out.results
      .filter((r) => r.strategy_details.some((d: any) => d.strategy === 'temporal'))
      .map((r) => r.memory.memory_id);
    const similarIds = out.results
      .filter((r) => r.strategy_details.some((d: any) => d.strategy === 'similarity'))
      .map((r) => r.memory.memory_id);
    expect(temporalIds).toHaveLength(3);
    expect(new Set(temporalIds)).toEqual(new Set(a.slice(1).map((m) => m.memory_id)));
    expect(similarIds).toHaveLength(1);
    expect(b.map((m) => m.memory_id)).toContain(similarIds[0]);
  });

  it('cue_context as a string is appended to the cue for embedding', async () => {
    const { req } = await topicWorkspace();
    const plain = await recall(req, {
      cue: 'what happened there?',
      strategies: ['similarity'],
      top_k: 8,
      scoring_weights: ONLY_RELEVANCE,
    });
    const withText = await recall(req, {
      cue: 'what happened there?',
      cue_context: 'volcano erupted, village ash',
      strategies: ['similarity'],
      top_k: 8,
      scoring_weights: ONLY_RELEVANCE,
    });
    expect(withText.results[0].memory.content).toBe(TOPICS[1]);
    const rel = (out: { results: any[] }): number =>
      out.results.find((r) => r.memory.content === TOPICS[1]).relevance;
    expect(rel(withText)).toBeGreaterThan(rel(plain) + 0.1);
  });

  it('cue_context as an object is rendered as key/value text and appended to the cue', async () => {
    const { req } = await topicWorkspace();
    const plain = await recall(req, {
      cue: 'what happened there?',
      strategies: ['similarity'],
      top_k: 8,
      scoring_weights: ONLY_RELEVANCE,
    });
    const withObject = await recall(req, {
      cue: 'what happened there?',
      cue_context: { event: 'volcano erupted', place: 'village', covered_in: 'grey ash' },
      strategies: ['similarity'],
      top_k: 8,
      scoring_weights: ONLY_RELEVANCE,
    });
    expect(withObject.results[0].memory.content).toBe(TOPICS[1]);
    const rel = (out: { results: any[] }): number =>
      out.results.find((r) => r.memory.content === TOPICS[1]).relevance;
    expect(rel(withObject)).toBeGreaterThan(rel(plain) + 0.1);
  });

  it('ef_search is accepted per request and per strategy; on a small workspace results are exact either way', async () => {
    const { req } = await topicWorkspace();
    const base = await recall(req, {
      cue: 'garden tomatoes',
      strategies: ['similarity'],
      top_k: 5,
      scoring_weights: ONLY_RELEVANCE,
    });
    for (const body of [
      { ef_search: 1 },
      { ef_search: 500 },
      { strategies: [{ strategy: 'similarity', ef_search: 200 }] },
    ]) {
      const out = await recall(req, {
        cue: 'garden tomatoes',
        strategies: ['similarity'],
        top_k: 5,
        scoring_weights: ONLY_RELEVANCE,
        ...body,
      });
      expect(ids(out.results)).toEqual(ids(base.results));
    }
  });
});

describe('validation: 400 with the JSON error body naming the problem', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['empty cue', { cue: '', strategies: ['similarity'] }, /cue/],
    ['blank cue', { cue: '   ', strategies: ['similarity'] }, /cue/],
    ['cue of the wrong type', { cue: 42, strategies: ['similarity'] }, /cue/],
    ['empty strategies', { cue: 'x', strategies: [] }, /strateg/],
    ['unknown strategy', { cue: 'x', strategies: ['similarity', 'telepathy'] }, /telepathy/],
    [
      'unknown strategy object',
      { cue: 'x', strategies: [{ strategy: 'clairvoyance' }] },
      /clairvoyance/,
    ],
    ['unknown strategy alias', { cue: 'x', strategy: 'dowsing' }, /dowsing/],
    ['top_k 0', { cue: 'x', strategies: ['similarity'], top_k: 0 }, /top_k/],
    ['top_k 1001', { cue: 'x', strategies: ['similarity'], top_k: 1001 }, /top_k/],
    ['top_k not an integer', { cue: 'x', strategies: ['similarity'], top_k: 2.5 }, /top_k/],
    [
      'per-strategy top_k 0',
      { cue: 'x', strategies: [{ strategy: 'temporal', top_k: 0 }] },
      /top_k/,
    ],
    [
      'analogical_alpha 2',
      { cue: 'x', strategies: ['analogical'], analogical_alpha: 2 },
      /analogical_alpha/,
    ],
    [
      'analogical_alpha -0.1',
      { cue: 'x', strategies: ['analogical'], analogical_alpha: -0.1 },
      /analogical_alpha/,
    ],
    [
      'unknown edge type',
      { cue: 'x', strategies: ['causal'], edge_types: ['caused_by', 'bumped_into'] },
      /bumped_into/,
    ],
    [
      'time_range start after end',
      { cue: 'x', strategies: ['temporal'], time_range: { start_us: 200, end_us: 100 } },
      /time_range/,
    ],
    [
      'time_range {start, end} start after end',
      { cue: 'x', strategies: ['temporal'], time_range: { start: 200, end: 100 } },
      /time_range/,
    ],
    ['ef_search 0', { cue: 'x', strategies: ['similarity'], ef_search: 0 }, /ef_search/],
    ['max_depth 0', { cue: 'x', strategies: ['causal'], max_depth: 0 }, /max_depth/],
    [
      'malformed seed_memory_id',
      { cue: 'x', strategies: ['causal'], seed_memory_id: 'not-an-id' },
      /seed_memory_id/,
    ],
    [
      'negative weight',
      { cue: 'x', strategies: ['similarity'], scoring_weights: { w_relevance: -1 } },
      /w_relevance/,
    ],
  ];
  it.each(cases)('%s', async (_name, body, mentions) => {
    const res = await t.req('POST', '/v1/recall', { body });
    expect(res.status, res.text).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.error_code).toBe('invalid_input');
    expect(typeof res.body.message).toBe('string');
    expect(res.body.message).toMatch(mentions);
  });

  it('a body that is not JSON', async () => {
    const res = await t.req('POST', '/v1/recall', {
      raw: '{"cue": "x", strategies',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
  });
});

describe('access counting', () => {
  it('recall counts as an access: access_count rises and last_accessed_at moves (eventually)', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'the observatory dome opens at dusk' });
    const other = await remember(req, { content: 'quarterly tax forms are due in april' });
    expect(m.access_count).toBe(0);
    const out = await recall(req, {
      cue: 'observatory dome at dusk',
      strategies: ['similarity'],
      top_k: 1,
    });
    expect(ids(out.results)).toEqual([m.memory_id]);
    await recall(req, { cue: 'observatory dome at dusk', strategies: ['similarity'], top_k: 1 });
    let got: any;
    await until(
      async () => (got = (await req('GET', `/v1/memories/${m.memory_id}`)).body).access_count >= 2,
      { what: 'access_count 2', deadlineMs: 3_000, everyMs: 50 },
    ).catch(() => undefined);
    expect(got.access_count).toBe(2);
    expect(got.last_accessed_at).toBeGreaterThanOrEqual(m.created_at);
    // A memory that was not returned was not accessed.
    expect((await req('GET', `/v1/memories/${other.memory_id}`)).body.access_count).toBe(0);
  });

  it('a recall accesses only its first result: the memories listed below it are not reinforced', async () => {
    const req = await freshWorkspace();
    const first = await remember(req, { content: 'the observatory dome opens at dusk' });
    const second = await remember(req, { content: 'the observatory car park closes at dusk' });
    for (let i = 0; i < 3; i++) {
      const out = await recall(req, {
        cue: 'observatory dome opens at dusk',
        strategies: ['similarity', 'temporal'],
        top_k: 2,
      });
      expect(ids(out.results)).toEqual([first.memory_id, second.memory_id]);
    }
    let got: any;
    await until(
      async () =>
        (got = (await req('GET', `/v1/memories/${first.memory_id}`)).body).access_count >= 3,
      { what: 'access_count 3', deadlineMs: 3_000, everyMs: 50 },
    ).catch(() => undefined);
    expect(got.access_count).toBe(3);
    expect((await req('GET', `/v1/memories/${second.memory_id}`)).body.access_count).toBe(0);
  });

  it('prime counts as an access too', async () => {
    const req = await freshWorkspace();
    const m = await remember(req, { content: 'the greenhouse needs watering on mondays' });
    const res = await req('POST', '/v1/prime', { body: { max_memories: 5 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: any) => r.memory.memory_id)).toContain(m.memory_id);
    let count = 0;
    await until(
      async () =>
        (count = (await req('GET', `/v1/memories/${m.memory_id}`)).body.access_count) >= 1,
      { what: 'access_count 1', deadlineMs: 3_000, everyMs: 50 },
    ).catch(() => undefined);
    expect(count).toBe(1);
  });
});
