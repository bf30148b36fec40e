/**
 * The four recall strategies over small, exactly known graphs (spec 4.3; DESIGN.md 6):
 * causal walks (exact result sets, depths, edge types and seed; seed excluded; max_depth default 5
 * and cap 10; edge_types; seed nearest to the cue when none is given; an empty graph is a
 * strategy error, not a failed call), temporal order and time ranges, analogical re-ranking by
 * α·embedding + (1−α)·structure, and the merge of several strategies. Hash embedder; background
 * reflection and contradiction checks are off so that no memory or edge appears by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { untilClockPasses } from '../helpers/wait.ts';

const QUIET = { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' };
const WORDS = [
  'amber',
  'birch',
  'cobalt',
  'dune',
  'ember',
  'fjord',
  'glacier',
  'harbor',
  'iris',
  'juniper',
  'kelp',
  'lagoon',
  'meadow',
  'nectar',
  'orchid',
  'pebble',
  'quartz',
  'reef',
  'saffron',
  'tundra',
  'umber',
  'violet',
  'willow',
  'yarrow',
  'zephyr',
];

let t: TestApp;
let seq = 0;

type Req = (method: string, path: string, opts?: { body?: unknown }) => ReturnType<TestApp['req']>;
type EdgeSpec = [target: string, type: string];

interface W {
  req: Req;
  id: Record<string, string>;
  name: Record<string, string>;
  mem: Record<string, any>;
  add: (n: string, edges?: EdgeSpec[], extra?: Record<string, unknown>) => Promise<any>;
  recall: (body: Record<string, unknown>) => Promise<{ results: any[]; strategy_errors: any[] }>;
}

async function fresh(): Promise<W> {
  const slug = `rs-${process.pid}-${++seq}`;
  const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.api_key as string;
  const req: Req = (method, path, opts = {}) => t.req(method, path, { ...opts, key });
  const w: W = {
    req,
    id: {},
    name: {},
    mem: {},
    add: async (label, edges = [], extra = {}) => {
      const n = Object.keys(w.id).length;
      const body = {
        content: `${label} ${WORDS[n % WORDS.length]} ${WORDS[(n * 7 + 3) % WORDS.length]} node`,
        edges: edges.map(([target, type]) => ({ target_id: w.id[target], edge_type: type })),
        ...extra,
      };
      const res = await req('POST', '/v1/memories', { body });
      expect(res.status, res.text).toBe(201);
      w.id[label] = res.body.memory_id;
      w.name[res.body.memory_id] = label;
      w.mem[label] = res.body;
      return res.body;
    },
    recall: async (body) => {
      const res = await req('POST', '/v1/recall', { body });
      expect(res.status, res.text).toBe(200);
      expect(Array.isArray(res.body.strategy_errors)).toBe(true);
      return res.body;
    },
  };
  return w;
}

async function chain(w: W, labels: string[], type = 'caused_by'): Promise<void> {
  for (const [i, label] of labels.entries())
    await w.add(label, i === 0 ? [] : [[labels[i - 1] as string, type]]);
}

/** Causal results as `label:depth:edge_type`, sorted; every detail must name the expected seed. */
function causalView(w: W, out: { results: any[] }, seed: string): string[] {
  return out.results
    .map((r) => {
      const d = r.strategy_details.filter((x: any) => x.strategy === 'causal');
      expect(d, 'one causal detail per result').toHaveLength(1);
      expect(Object.keys(d[0]).sort()).toEqual(['depth', 'edge_type', 'seed_id', 'strategy']);
      expect(d[0].seed_id).toBe(w.id[seed]);
      return `${w.name[r.memory.memory_id] ?? r.memory.memory_id}:${d[0].depth}:${d[0].edge_type}`;
    })
    .sort();
}

beforeAll(async () => {
  t = await startTestApp({}, QUIET);
});
afterAll(async () => t.stop());

describe('causal', () => {
  it('chain: walks both directions from the seed, with depth and edge type; the seed is not a result', async () => {
    const w = await fresh();
    await chain(w, ['A', 'B', 'C', 'D', 'E', 'F', 'G']);
    const out = await w.recall({
      cue: 'anything',
      strategies: ['causal'],
      seed_memory_id: w.id.D,
      top_k: 20,
    });
    expect(out.strategy_errors).toEqual([]);
    expect(causalView(w, out, 'D')).toEqual([
      'A:3:caused_by',
      'B:2:caused_by',
      'C:1:caused_by',
      'E:1:caused_by',
      'F:2:caused_by',
      'G:3:caused_by',
    ]);
    expect(
      causalView(
        w,
        await w.recall({ cue: 'x', strategies: ['causal'], seed_memory_id: w.id.D, max_depth: 1 }),
        'D',
      ),
    ).toEqual(['C:1:caused_by', 'E:1:caused_by']);
    expect(
      causalView(
        w,
        await w.recall({ cue: 'x', strategies: ['causal'], seed_memory_id: w.id.D, max_depth: 2 }),
        'D',
      ),
    ).toEqual(['B:2:caused_by', 'C:1:caused_by', 'E:1:caused_by', 'F:2:caused_by']);
    // The seed may be given in upper-case hex too.
    const upper = await w.recall({
      cue: 'x',
      strategies: ['causal'],
      seed_memory_id: (w.id.D as string).toUpperCase(),
      max_depth: 1,
    });
    expect(causalView(w, upper, 'D')).toEqual(['C:1:caused_by', 'E:1:caused_by']);
  });

  it('max_depth defaults to 5 and is capped at 10', async () => {
    const w = await fresh();
    const labels = Array.from({ length: 13 }, (_, i) => `N${i}`);
    await chain(w, labels, 'followed_by');
    const walk = async (extra: Record<string, unknown>): Promise<string[]> =>
      causalView(
        w,
        await w.recall({
          cue: 'x',
          strategies: ['causal'],
          seed_memory_id: w.id.N0,
          top_k: 50,
          ...extra,
        }),
        'N0',
      );
    const expected = (n: number): string[] =>
      Array.from({ length: n }, (_, i) => `N${i + 1}:${i + 1}:followed_by`).sort();
    expect(await walk({})).toEqual(expected(5));
    expect(await walk({ max_depth: 10 })).toEqual(expected(10));
    expect(await walk({ max_depth: 11 })).toEqual(expected(10));
    expect(await walk({ max_depth: 1000 })).toEqual(expected(10));
  });

  it('edge_types restricts the walk (any accepted spelling); no edge of those types is a strategy error', async () => {
    const w = await fresh();
    await w.add('P');
    await w.add('Q', [['P', 'caused_by']]);
    await w.add('R', [['Q', 'followed_by']]);
    await w.add('S', [['R', 'related_to']]);
    const walk = async (edgeTypes?: string[]): Promise<string[]> =>
      causalView(
        w,
        await w.recall({
          cue: 'x',
          strategies: ['causal'],
          seed_memory_id: w.id.Q,
          ...(edgeTypes ? { edge_types: edgeTypes } : {}),
        }),
        'Q',
      );
    expect(await walk()).toEqual(['P:1:caused_by', 'R:1:followed_by', 'S:2:related_to']);
    expect(await walk(['CausedBy'])).toEqual(['P:1:caused_by']);
    expect(await walk(['followed_by'])).toEqual(['R:1:followed_by']);
    expect(await walk(['CAUSED_BY', 'EDGE_TYPE_FOLLOWED_BY'])).toEqual([
      'P:1:caused_by',
      'R:1:followed_by',
    ]);
    expect(await walk(['FollowedBy', 'RelatedTo'])).toEqual(['R:1:followed_by', 'S:2:related_to']);

    const none = await w.recall({
      cue: 'x',
      strategies: ['causal'],
      seed_memory_id: w.id.P,
      edge_types: ['followed_by'],
    });
    expect(none.results).toEqual([]);
    expect(none.strategy_errors).toHaveLength(1);
    expect(none.strategy_errors[0].strategy).toBe('causal');
    expect(typeof none.strategy_errors[0].message).toBe('string');
  });

  it('fan-in: nearer memories first; top_k keeps the nearest', async () => {
    const w = await fresh();
    await w.add('H');
    for (const l of ['L1', 'L2', 'L3', 'L4']) await w.add(l, [['H', 'related_to']]);
    await w.add('M', [['L1', 'caused_by']]);
    const all = await w.recall({ cue: 'x', strategies: ['causal'], seed_memory_id: w.id.H });
    expect(causalView(w, all, 'H')).toEqual([
      'L1:1:related_to',
      'L2:1:related_to',
      'L3:1:related_to',
      'L4:1:related_to',
      'M:2:caused_by',
    ]);
    const three = await w.recall({
      cue: 'x',
      strategies: ['causal'],
      seed_memory_id: w.id.H,
      top_k: 3,
    });
    expect(three.results).toHaveLength(3);
    for (const r of three.results) expect(r.strategy_details[0].depth).toBe(1);
  });

  it('cycle: each memory once, at its shortest depth, with an edge type it was reached by', async () => {
    const w = await fresh();
    await w.add('A');
    await w.add('B', [['A', 'caused_by']]);
    await w.add('C', [['B', 'followed_by']]);
    await w.add('D', [
      ['C', 'related_to'],
      ['A', 'related_to'],
    ]);
    const view = causalView(
      w,
      await w.recall({ cue: 'x', strategies: ['causal'], seed_memory_id: w.id.A }),
      'A',
    );
    expect(view).toHaveLength(3);
    expect(view[0]).toBe('B:1:caused_by');
    expect(['C:2:followed_by', 'C:2:related_to']).toContain(view[1]);
    expect(view[2]).toBe('D:1:related_to');
  });

  it('crosses entities, and never returns superseded versions', async () => {
    const w = await fresh();
    await w.add('X', [], { entity_id: 'xavier' });
    await w.add('Y', [['X', 'related_to']], { entity_id: 'yolanda' });
    const revised = await w.req('PUT', `/v1/revise/${w.id.Y}`, {
      body: { content: 'Y was revised: cobalt lagoon' },
    });
    expect(revised.status, revised.text).toBe(200);
    const out = await w.recall({ cue: 'x', strategies: ['causal'], seed_memory_id: w.id.X });
    expect(causalView(w, out, 'X')).toEqual(['Y:1:related_to']);
    for (const r of out.results) expect(r.memory.superseded_by ?? null).toBeNull();
    // From the revised memory the version is one revised_from hop away, but it is not a result.
    const fromY = await w.recall({ cue: 'x', strategies: ['causal'], seed_memory_id: w.id.Y });
    expect(causalView(w, fromY, 'Y')).toEqual(['X:1:related_to']);
  });

  it('without seed_memory_id the seed is the memory nearest to the cue', async () => {
    const w = await fresh();
    await chain(w, ['A', 'B', 'C', 'D']);
    const out = await w.recall({ cue: w.mem.C.content, strategies: ['causal'] });
    expect(causalView(w, out, 'C')).toEqual(['A:2:caused_by', 'B:1:caused_by', 'D:1:caused_by']);
    const viaCtx = await w.recall({
      cue: 'A',
      cue_context: w.mem.A.content,
      strategies: ['causal'],
      max_depth: 1,
    });
    expect(causalView(w, viaCtx, 'A')).toEqual(['B:1:caused_by']);
  });

  it('no edges, or no memory to seed from: HTTP 200 with a strategy_errors entry; other strategies still answer', async () => {
    const empty = await fresh();
    const nothing = await empty.recall({ cue: 'anything', strategies: ['causal'] });
    expect(nothing.results).toEqual([]);
    expect(nothing.strategy_errors).toHaveLength(1);
    expect(nothing.strategy_errors[0]).toMatchObject({
      strategy: 'causal',
      message: expect.any(String),
    });

    const w = await fresh();
    await w.add('A');
    await w.add('B');
    const out = await w.recall({ cue: w.mem.A.content, strategies: ['similarity', 'causal'] });
    expect(out.results.length).toBe(2);
    for (const r of out.results)
      expect(r.strategy_details.map((d: any) => d.strategy)).toEqual(['similarity']);
    expect(out.strategy_errors).toHaveLength(1);
    expect(out.strategy_errors[0].strategy).toBe('causal');
    expect(out.strategy_errors[0].message.length).toBeGreaterThan(0);
  });
});

describe('temporal', () => {
  /** Six memories a few milliseconds apart (distinct created_at), two entities interleaved. */
  async function timeline(): Promise<{ w: W; m: any[] }> {
    const w = await fresh();
    const m: any[] = [];
    for (let i = 0; i < 6; i++) {
      m.push(
        await w.add(`T${i}`, [], {
          entity_id: i % 2 === 0 ? 'even' : 'odd',
          importance: 1 - i / 10,
        }),
      );
      await untilClockPasses(m[i].created_at);
    }
    expect(new Set(m.map((x) => x.created_at)).size).toBe(6);
    return { w, m };
  }
  const labels = (w: W, out: { results: any[] }): string[] =>
    out.results.map((r) => w.name[r.memory.memory_id] as string);

  it('newest first, with timestamp = created_at and rank 1, 2, 3…, whatever the scores say', async () => {
    const { w, m } = await timeline();
    const out = await w.recall({ cue: 'x', strategies: ['temporal'] });
    expect(labels(w, out)).toEqual(['T5', 'T4', 'T3', 'T2', 'T1', 'T0']);
    out.results.forEach((r, i) => {
      expect(r.strategy_details).toEqual([
        {
          strategy: 'temporal',
          timestamp: m[5 - i].created_at,
          timestamp_iso: m[5 - i].created_at_iso,
          rank: i + 1,
        },
      ]);
    });
    // Importance falls with age here, so an importance-only score would order them the other way.
    const byImportance = await w.recall({
      cue: 'x',
      strategies: ['temporal'],
      scoring_weights: { w_relevance: 0, w_recency: 0, w_importance: 1, w_reinforcement: 0 },
    });
    expect(labels(w, byImportance)).toEqual(['T5', 'T4', 'T3', 'T2', 'T1', 'T0']);
    expect(labels(w, await w.recall({ cue: 'x', strategies: ['temporal'], top_k: 2 }))).toEqual([
      'T5',
      'T4',
    ]);
  });

  it('time_range bounds are inclusive, given as {start_us, end_us} or {start, end}, either end optional', async () => {
    const { w, m } = await timeline();
    const at = (i: number): number => m[i].created_at;
    const range = async (time_range: Record<string, number>): Promise<string[]> =>
      labels(w, await w.recall({ cue: 'x', strategies: ['temporal'], time_range }));
    expect(await range({ start_us: at(1), end_us: at(3) })).toEqual(['T3', 'T2', 'T1']);
    expect(await range({ start: at(1), end: at(3) })).toEqual(['T3', 'T2', 'T1']);
    expect(await range({ start_us: at(4) })).toEqual(['T5', 'T4']);
    expect(await range({ end_us: at(1) })).toEqual(['T1', 'T0']);
    expect(await range({ start_us: at(2), end_us: at(2) })).toEqual(['T2']);
    expect(await range({ start_us: at(2) + 1, end_us: at(3) - 1 })).toEqual([]);
    expect(await range({ start_us: at(5) + 1 })).toEqual([]);
    // Per-strategy time_range wins over the request-level one.
    const per = await w.recall({
      cue: 'x',
      time_range: { start_us: at(5) },
      strategies: [{ strategy: 'temporal', time_range: { end_us: at(0) } }],
    });
    expect(labels(w, per)).toEqual(['T0']);
  });

  it('memories written within the same millisecond are still newest first (creation order)', async () => {
    const w = await fresh();
    const written: string[] = [];
    for (let i = 0; i < 15; i++) written.push((await w.add(`Q${i}`)).memory_id);
    const out = await w.recall({ cue: 'x', strategies: ['temporal'], top_k: 15 });
    expect(out.results.map((r) => r.memory.memory_id)).toEqual([...written].reverse());
  });

  it('entity_id scopes it to that entity; without one it spans the workspace', async () => {
    const { w } = await timeline();
    expect(
      labels(w, await w.recall({ cue: 'x', strategies: ['temporal'], entity_id: 'odd' })),
    ).toEqual(['T5', 'T3', 'T1']);
    expect(
      labels(
        w,
        await w.recall({ cue: 'x', strategies: ['temporal'], entity_id: 'even', top_k: 2 }),
      ),
    ).toEqual(['T4', 'T2']);
    expect(
      await w.recall({ cue: 'x', strategies: ['temporal'], entity_id: 'nobody' }),
    ).toMatchObject({ results: [] });
  });
});

describe('analogical', () => {
  const CUE = 'quarterly revenue report for the sales team';
  const CUE_CONTEXT = { region: 'emea', quarter: 3, final: true };

  async function analogies(): Promise<W> {
    const w = await fresh();
    // S: nearly the cue's words, a different context shape.
    await w.add('S', [], {
      content: 'quarterly revenue report for the sales team was delayed',
      context: { colour: 'blue' },
    });
    // T: other words, the cue context's shape (same keys, same value types).
    await w.add('T', [], {
      content: 'hiking trip to the alpine lakes',
      context: { region: 'alps', quarter: 2, final: false },
    });
    // T2: the same keys with other value types.
    await w.add('T2', [], {
      content: 'piano recital in the old chapel',
      context: { region: 7, quarter: 'second', final: 'no' },
    });
    await w.add('F1', [], {
      content: 'the ferry timetable changed in winter',
      context: { mood: 'calm' },
    });
    await w.add('F2', [], { content: 'a fox crossed the frozen river', context: {} });
    return w;
  }

  const analogical = (
    out: { results: any[] },
    w: W,
    label: string,
  ): { embedding_similarity: number; structural_similarity: number } => {
    const r = out.results.find((x) => x.memory.memory_id === w.id[label]);
    expect(r, `${label} among the results`).toBeDefined();
    const d = r.strategy_details.find((x: any) => x.strategy === 'analogical');
    expect(Object.keys(d).sort()).toEqual([
      'embedding_similarity',
      'strategy',
      'structural_similarity',
    ]);
    expect(d.embedding_similarity).toBeCloseTo(r.relevance, 6);
    return d;
  };

  it('same shape, other words beats similar words, other shape when α is low, and loses when α is high', async () => {
    const w = await analogies();
    const top1 = async (alpha: number): Promise<string> => {
      const out = await w.recall({
        cue: CUE,
        cue_context: CUE_CONTEXT,
        strategies: ['analogical'],
        analogical_alpha: alpha,
        top_k: 1,
      });
      expect(out.results).toHaveLength(1);
      return w.name[out.results[0].memory.memory_id] as string;
    };
    expect(await top1(0)).toBe('T');
    expect(await top1(0.1)).toBe('T');
    expect(await top1(0.9)).toBe('S');
    expect(await top1(1)).toBe('S');

    for (const alpha of [0.1, 0.9]) {
      const out = await w.recall({
        cue: CUE,
        cue_context: CUE_CONTEXT,
        strategies: ['analogical'],
        analogical_alpha: alpha,
        top_k: 10,
      });
      expect(out.results).toHaveLength(5);
      const s = analogical(out, w, 'S');
      const tt = analogical(out, w, 'T');
      expect(s.embedding_similarity).toBeGreaterThan(tt.embedding_similarity);
      expect(tt.structural_similarity).toBeGreaterThan(s.structural_similarity);
      const blend = (d: { embedding_similarity: number; structural_similarity: number }): number =>
        alpha * d.embedding_similarity + (1 - alpha) * d.structural_similarity;
      if (alpha < 0.5) expect(blend(tt)).toBeGreaterThan(blend(s));
      else expect(blend(s)).toBeGreaterThan(blend(tt));
    }
  });

  it('structure compares keys and value types, not words', async () => {
    const w = await analogies();
    const out = await w.recall({
      cue: CUE,
      cue_context: CUE_CONTEXT,
      strategies: ['analogical'],
      analogical_alpha: 0,
      top_k: 10,
    });
    const st = (label: string): number => analogical(out, w, label).structural_similarity;
    expect(st('T')).toBeGreaterThan(st('T2'));
    expect(st('T2')).toBeGreaterThan(st('S'));
    for (const label of ['S', 'T', 'T2', 'F1', 'F2']) {
      expect(st(label)).toBeGreaterThanOrEqual(0);
      expect(st(label)).toBeLessThanOrEqual(1);
    }
    // Default α (0.5) is accepted.
    const def = await w.recall({ cue: CUE, cue_context: CUE_CONTEXT, strategies: ['analogical'] });
    expect(def.results.length).toBe(5);
  });
});

describe('several strategies at once', () => {
  it('merges by memory id: the union of each strategy alone, with every strategy detail kept', async () => {
    const w = await fresh();
    await chain(w, ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H']);
    await w.add('I', [], { context: { kind_of: 'note' } });
    const cue = w.mem.C.content as string;
    const base = { cue, top_k: 3, seed_memory_id: w.id.E, max_depth: 1, analogical_alpha: 0.5 };
    const alone: Record<string, Set<string>> = {};
    for (const s of ['similarity', 'temporal', 'causal', 'analogical']) {
      const out = await w.recall({ ...base, strategies: [s] });
      alone[s] = new Set(out.results.map((r) => r.memory.memory_id));
      expect(alone[s]?.size).toBeGreaterThan(0);
    }
    const merged = await w.recall({
      ...base,
      strategies: ['similarity', 'temporal', 'causal', 'analogical'],
    });
    expect(merged.strategy_errors).toEqual([]);
    const union = new Set(Object.values(alone).flatMap((s) => [...s]));
    const got = merged.results.map((r) => r.memory.memory_id);
    expect(new Set(got).size).toBe(got.length);
    expect(new Set(got)).toEqual(union);
    for (const r of merged.results) {
      const strategies = r.strategy_details.map((d: any) => d.strategy).sort();
      const expected = Object.entries(alone)
        .filter(([, set]) => set.has(r.memory.memory_id))
        .map(([s]) => s)
        .sort();
      expect(strategies).toEqual(expected);
    }
    // Ordered by rank fusion: similarity's own results lead.
    const firstThree = new Set(got.slice(0, alone.similarity?.size));
    expect(firstThree).toEqual(alone.similarity);
    // C is the cue itself: similarity and analogical both find it, and both details are kept.
    const c = merged.results.find((r) => r.memory.memory_id === w.id.C);
    expect(c.strategy_details.map((d: any) => d.strategy)).toEqual(
      expect.arrayContaining(['similarity', 'analogical']),
    );
  });
});
