/**
 * The typed edge graph over REST (spec 2.3, 2.5, 2.6, 4.6; DESIGN.md 2, 3.3, 3.4): edges written
 * with POST /v1/memories, GET /v1/memories/:id/edges, and POST /v1/graph — breadth-first in both
 * directions (or one), depth default 2 capped at 5, max_nodes default 100 capped at 500, edge type
 * filters, and `truncated` exactly when a node reachable within the depth was left out. Graphs are
 * small chains, cycles, fans and cross-entity links with exact expected node and edge sets.
 * Background reflection and contradiction checks are off so that no edge appears by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

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
type EdgeSpec = [target: string, type: string, confidence?: number];

interface G {
  req: Req;
  slug: string;
  id: Record<string, string>;
  name: Record<string, string>;
  /** Adds memory `n` with edges to earlier memories (source = the new memory). */
  add: (n: string, edges?: EdgeSpec[], extra?: Record<string, unknown>) => Promise<any>;
  graph: (
    center: string,
    opts?: Record<string, unknown>,
  ) => Promise<{ nodes: string[]; edges: string[]; truncated: boolean; raw: any }>;
}

async function freshGraph(): Promise<G> {
  const slug = `gt-${process.pid}-${++seq}`;
  const created = await t.inject('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.api_key as string;
  const req: Req = (method, path, opts = {}) => t.inject(method, path, { ...opts, key });
  const id: Record<string, string> = {};
  const name: Record<string, string> = {};
  let n = 0;
  const g: G = {
    req,
    slug,
    id,
    name,
    add: async (label, edges = [], extra = {}) => {
      const body = {
        content: `${label} ${WORDS[n++ % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} node`,
        edges: edges.map(([target, type, confidence]) => ({
          target_id: id[target],
          edge_type: type,
          ...(confidence === undefined ? {} : { confidence }),
        })),
        ...extra,
      };
      const res = await req('POST', '/v1/memories', { body });
      expect(res.status, res.text).toBe(201);
      id[label] = res.body.memory_id;
      name[res.body.memory_id] = label;
      return res.body;
    },
    graph: async (center, opts = {}) => {
      const res = await req('POST', '/v1/graph', {
        body: { center_id: id[center] ?? center, ...opts },
      });
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['edges', 'nodes', 'truncated']);
      const nodes = (res.body.nodes as any[]).map((m) => name[m.memory_id] ?? m.memory_id);
      expect(new Set(nodes).size, 'nodes are distinct').toBe(nodes.length);
      const inNodes = new Set((res.body.nodes as any[]).map((m) => m.memory_id));
      for (const e of res.body.edges as any[]) {
        expect(inNodes.has(e.source_id) && inNodes.has(e.target_id), 'edge ends are nodes').toBe(
          true,
        );
      }
      const edges = (res.body.edges as any[]).map(
        (e) =>
          `${name[e.source_id] ?? e.source_id}>${name[e.target_id] ?? e.target_id}:${e.edge_type}`,
      );
      expect(new Set(edges).size, 'edges are distinct').toBe(edges.length);
      return {
        nodes: nodes.sort(),
        edges: edges.sort(),
        truncated: res.body.truncated,
        raw: res.body,
      };
    },
  };
  return g;
}

/** A ← B ← … (each later node `caused_by` the one before it). */
async function chain(g: G, labels: string[], type = 'caused_by'): Promise<void> {
  for (const [i, label] of labels.entries())
    await g.add(label, i === 0 ? [] : [[labels[i - 1] as string, type]]);
}

const sorted = (xs: string[]): string[] => [...xs].sort();

beforeAll(async () => {
  t = await startTestApp({}, QUIET);
});
afterAll(async () => t.stop());

describe('edges written with a memory, and GET /v1/memories/:id/edges', () => {
  it('stores each edge once, from the new memory, in the REST spelling, with confidence and timestamp', async () => {
    const g = await freshGraph();
    const a = await g.add('A');
    const before = Date.now() * 1000;
    await g.add('B', [['A', 'CausedBy', 0.7]]);
    await g.add('C', [
      ['A', 'RELATED_TO'],
      ['B', 'EDGE_TYPE_FOLLOWED_BY', 0.25],
    ]);
    const after = Date.now() * 1000;

    const ea = await g.req('GET', `/v1/memories/${g.id.A}/edges`);
    expect(ea.status).toBe(200);
    expect(Object.keys(ea.body).sort()).toEqual(['incoming', 'outgoing']);
    expect(ea.body.outgoing).toEqual([]);
    expect(ea.body.incoming).toHaveLength(2);
    const b2a = ea.body.incoming.find((e: any) => e.source_id === g.id.B);
    expect(b2a).toMatchObject({
      source_id: g.id.B,
      target_id: a.memory_id,
      edge_type: 'caused_by',
      confidence: 0.7,
    });
    expect(Object.keys(b2a).sort()).toEqual([
      'confidence',
      'edge_type',
      'source_id',
      'target_id',
      'timestamp_iso',
      'timestamp_us',
    ]);
    expect(Number.isInteger(b2a.timestamp_us)).toBe(true);
    expect(b2a.timestamp_us).toBeGreaterThanOrEqual(before - 1000);
    expect(b2a.timestamp_us).toBeLessThanOrEqual(after + 1000);
    expect(ea.body.incoming.find((e: any) => e.source_id === g.id.C)).toMatchObject({
      target_id: g.id.A,
      edge_type: 'related_to',
      confidence: 1,
    });

    const ec = (await g.req('GET', `/v1/memories/${g.id.C}/edges`)).body;
    expect(ec.incoming).toEqual([]);
    expect(
      sorted(ec.outgoing.map((e: any) => `${g.name[e.target_id]}:${e.edge_type}:${e.confidence}`)),
    ).toEqual(['A:related_to:1', 'B:followed_by:0.25']);

    const eb = (await g.req('GET', `/v1/memories/${g.id.B}/edges`)).body;
    expect(eb.outgoing.map((e: any) => g.name[e.target_id])).toEqual(['A']);
    expect(eb.incoming.map((e: any) => `${g.name[e.source_id]}:${e.edge_type}`)).toEqual([
      'C:followed_by',
    ]);
  });

  it('unknown id → 404, malformed id → 400', async () => {
    const g = await freshGraph();
    const unknown = await g.req('GET', `/v1/memories/${'ab'.repeat(16)}/edges`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_code).toBe('not_found');
    const bad = await g.req('GET', '/v1/memories/zzz/edges');
    expect(bad.status).toBe(400);
    expect(bad.body.error_code).toBe('invalid_input');
  });

  it('an edge to a memory outside the workspace, or of an unknown type, is a 400 and stores nothing', async () => {
    const g = await freshGraph();
    const other = await freshGraph();
    await other.add('X');
    await g.add('A');
    const missing = await g.req('POST', '/v1/memories', {
      body: { content: 'dangling', edges: [{ target_id: other.id.X, edge_type: 'caused_by' }] },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error_code).toBe('invalid_input');
    expect(missing.body.message).toContain(other.id.X as string);
    const badType = await g.req('POST', '/v1/memories', {
      body: { content: 'bad type', edges: [{ target_id: g.id.A, edge_type: 'inspired_by' }] },
    });
    expect(badType.status).toBe(400);
    expect(badType.body.message).toContain('inspired_by');
    const list = await g.req('GET', '/v1/memories');
    expect(list.body.memories.map((m: any) => m.memory_id)).toEqual([g.id.A]);
    expect((await g.req('GET', `/v1/memories/${g.id.A}/edges`)).body).toEqual({
      outgoing: [],
      incoming: [],
    });
  });
});

describe('POST /v1/graph', () => {
  it('chain: nodes and edges at each depth; default depth 2; depth capped at 5', async () => {
    const g = await freshGraph();
    await chain(g, ['A', 'B', 'C', 'D', 'E', 'F', 'G']);
    const byDepth = async (
      depth?: number,
    ): Promise<{ nodes: string[]; edges: string[]; truncated: boolean }> =>
      g.graph('A', depth === undefined ? {} : { depth });
    expect(await byDepth(0)).toMatchObject({ nodes: ['A'], edges: [], truncated: false });
    expect(await byDepth(1)).toMatchObject({
      nodes: ['A', 'B'],
      edges: ['B>A:caused_by'],
      truncated: false,
    });
    const def = await byDepth();
    expect(def).toMatchObject({
      nodes: ['A', 'B', 'C'],
      edges: ['B>A:caused_by', 'C>B:caused_by'],
      truncated: false,
    });
    expect(await byDepth(2)).toMatchObject(def);
    const five = await byDepth(5);
    expect(five.nodes).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(five.edges).toHaveLength(5);
    expect(five.truncated).toBe(false);
    for (const capped of [6, 9, 1000])
      expect(await byDepth(capped)).toMatchObject({
        nodes: five.nodes,
        edges: five.edges,
        truncated: false,
      });
    // Nodes are full memories.
    const raw = (await g.graph('A', { depth: 1 })).raw;
    for (const m of raw.nodes)
      expect(m).toMatchObject({
        memory_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        content: expect.any(String),
        kind: 'episode',
      });
  });

  it('direction: out follows edges source → target, in target → source, both (the default) either way', async () => {
    const g = await freshGraph();
    await chain(g, ['A', 'B', 'C', 'D', 'E', 'F', 'G']);
    expect(await g.graph('D', { depth: 2, direction: 'out' })).toMatchObject({
      nodes: ['B', 'C', 'D'],
      edges: ['C>B:caused_by', 'D>C:caused_by'],
    });
    expect(await g.graph('D', { depth: 2, direction: 'in' })).toMatchObject({
      nodes: ['D', 'E', 'F'],
      edges: ['E>D:caused_by', 'F>E:caused_by'],
    });
    const both = await g.graph('D', { depth: 2, direction: 'both' });
    expect(both.nodes).toEqual(['B', 'C', 'D', 'E', 'F']);
    expect(await g.graph('D', { depth: 2 })).toMatchObject({
      nodes: both.nodes,
      edges: both.edges,
    });
  });

  it('edge_types restricts both the walk and the edges returned (any accepted spelling)', async () => {
    const g = await freshGraph();
    await g.add('P');
    await g.add('Q', [
      ['P', 'caused_by'],
      ['P', 'related_to'],
    ]);
    await g.add('R', [['Q', 'followed_by']]);
    await g.add('S', [['R', 'related_to']]);
    expect(await g.graph('P', { depth: 3 })).toMatchObject({
      nodes: ['P', 'Q', 'R', 'S'],
      edges: ['Q>P:caused_by', 'Q>P:related_to', 'R>Q:followed_by', 'S>R:related_to'],
    });
    expect(await g.graph('P', { depth: 3, edge_types: ['caused_by', 'FollowedBy'] })).toMatchObject(
      {
        nodes: ['P', 'Q', 'R'],
        edges: ['Q>P:caused_by', 'R>Q:followed_by'],
        truncated: false,
      },
    );
    expect(await g.graph('P', { depth: 3, edge_types: ['RELATED_TO'] })).toMatchObject({
      nodes: ['P', 'Q'],
      edges: ['Q>P:related_to'],
    });
    expect(await g.graph('P', { depth: 3, edge_types: ['contradicts'] })).toMatchObject({
      nodes: ['P'],
      edges: [],
      truncated: false,
    });
  });

  it('cycle: every node once, edges between reached nodes included even when not walked', async () => {
    const g = await freshGraph();
    await g.add('A');
    await g.add('B', [['A', 'caused_by']]);
    await g.add('C', [['B', 'followed_by']]);
    await g.add('D', [
      ['C', 'related_to'],
      ['A', 'related_to'],
    ]);
    expect(await g.graph('A', { depth: 1 })).toMatchObject({
      nodes: ['A', 'B', 'D'],
      edges: ['B>A:caused_by', 'D>A:related_to'],
    });
    expect(await g.graph('A', { depth: 2 })).toMatchObject({
      nodes: ['A', 'B', 'C', 'D'],
      edges: ['B>A:caused_by', 'C>B:followed_by', 'D>A:related_to', 'D>C:related_to'],
      truncated: false,
    });
    expect(await g.graph('A', { depth: 5 })).toMatchObject({
      nodes: ['A', 'B', 'C', 'D'],
      truncated: false,
    });
    // From B, depth 1 reaches A and C; the A–D–C path adds D only at depth 2.
    expect(await g.graph('B', { depth: 1 })).toMatchObject({
      nodes: ['A', 'B', 'C'],
      edges: ['B>A:caused_by', 'C>B:followed_by'],
    });
  });

  it('fan-in: truncated is true exactly when a node within the depth was left out by max_nodes', async () => {
    const g = await freshGraph();
    await g.add('H');
    const leaves = Array.from({ length: 10 }, (_, i) => `L${i}`);
    for (const l of leaves) await g.add(l, [['H', 'related_to']]);
    await g.add('M', [['L0', 'caused_by']]); // depth 2 from H

    const full = await g.graph('H', { depth: 1 });
    expect(full).toMatchObject({ nodes: sorted(['H', ...leaves]), truncated: false });
    expect(full.edges).toHaveLength(10);
    expect(await g.graph('H', { depth: 1, max_nodes: 11 })).toMatchObject({
      nodes: sorted(['H', ...leaves]),
      truncated: false,
    });
    const ten = await g.graph('H', { depth: 1, max_nodes: 10 });
    expect(ten.nodes).toHaveLength(10);
    expect(ten.nodes).toContain('H');
    expect(ten.truncated).toBe(true);
    expect(ten.edges).toHaveLength(9);
    expect(await g.graph('H', { depth: 1, max_nodes: 1 })).toMatchObject({
      nodes: ['H'],
      edges: [],
      truncated: true,
    });
    // M is two hops away: not reachable at depth 1, so 11 places are enough there, but not at depth 2.
    expect((await g.graph('H', { depth: 2, max_nodes: 11 })).truncated).toBe(true);
    const twelve = await g.graph('H', { depth: 2, max_nodes: 12 });
    expect(twelve).toMatchObject({ nodes: sorted(['H', 'M', ...leaves]), truncated: false });
    expect(twelve.edges).toHaveLength(11);
    // Nodes reached only through filtered-out edge types do not count.
    expect(
      await g.graph('H', { depth: 2, max_nodes: 11, edge_types: ['related_to'] }),
    ).toMatchObject({ nodes: sorted(['H', ...leaves]), truncated: false });
    // From a leaf: the hub at depth 1, the other leaves at depth 2.
    const fromLeaf = await g.graph('L3', { depth: 2, max_nodes: 5 });
    expect(fromLeaf.nodes).toHaveLength(5);
    expect(fromLeaf.nodes).toContain('H');
    expect(fromLeaf.truncated).toBe(true);
  });

  it('max_nodes defaults to 100 and is capped at 500 (a larger value is not an error)', async () => {
    const g = await freshGraph();
    const hub = await g.add('H');
    const leafCount = 501;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < leafCount) {
        const i = next++;
        const res = await g.req('POST', '/v1/memories', {
          body: {
            content: `leaf ${i}`,
            edges: [{ target_id: hub.memory_id, edge_type: 'related_to' }],
          },
        });
        expect(res.status, res.text).toBe(201);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const def = await g.graph('H', { depth: 1 });
    expect(def.nodes).toHaveLength(100);
    expect(def.edges).toHaveLength(99);
    expect(def.truncated).toBe(true);
    for (const maxNodes of [500, 502, 100_000]) {
      const capped = await g.graph('H', { depth: 1, max_nodes: maxNodes });
      expect(capped.nodes).toHaveLength(500);
      expect(capped.truncated).toBe(true);
    }
  });

  it('walks across entities: edges link memories of different entities', async () => {
    const g = await freshGraph();
    await g.add('X1', [], { entity_id: 'xavier' });
    await g.add('Y1', [['X1', 'related_to']], { entity_id: 'yolanda' });
    await g.add('Z', [['Y1', 'entity_relation']]);
    const out = await g.graph('X1');
    expect(out).toMatchObject({
      nodes: ['X1', 'Y1', 'Z'],
      edges: ['Y1>X1:related_to', 'Z>Y1:entity_relation'],
      truncated: false,
    });
    expect(sorted(out.raw.nodes.map((m: any) => String(m.entity_id)))).toEqual([
      'null',
      'xavier',
      'yolanda',
    ]);
  });

  it('works under /v1/workspaces/<slug>/graph, and a centre in another workspace is a 404', async () => {
    const g = await freshGraph();
    await chain(g, ['A', 'B']);
    const scoped = await t.inject('POST', `/v1/workspaces/${g.slug}/graph`, {
      body: { center_id: g.id.A },
    });
    expect(scoped.status, scoped.text).toBe(200);
    expect(scoped.body.nodes).toHaveLength(2);
    const other = await freshGraph();
    const cross = await other.req('POST', '/v1/graph', { body: { center_id: g.id.A } });
    expect(cross.status).toBe(404);
    expect(cross.body.error_code).toBe('not_found');
  });

  it('bad requests: unknown centre 404; malformed centre, bad edge type, direction or depth 400', async () => {
    const g = await freshGraph();
    await g.add('A');
    const unknown = await g.req('POST', '/v1/graph', { body: { center_id: 'cd'.repeat(16) } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_code).toBe('not_found');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /center_id/],
      [{ center_id: 'nope' }, /center_id/],
      [{ center_id: g.id.A, edge_types: ['caused_by', 'pushed_by'] }, /pushed_by/],
      [{ center_id: g.id.A, direction: 'sideways' }, /direction/],
      [{ center_id: g.id.A, depth: -1 }, /depth/],
      [{ center_id: g.id.A, depth: 1.5 }, /depth/],
      [{ center_id: g.id.A, max_nodes: 0 }, /max_nodes/],
    ];
    for (const [body, mentions] of cases) {
      const res = await g.req('POST', '/v1/graph', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
      expect(res.body.message).toMatch(mentions);
    }
  });
});
