/**
 * Export and import (issue 14): a workspace with revisions, edges, insights, documents and an
 * expiry goes out as NDJSON and into a fresh server, and comes back with identical memories,
 * edges and recall results; import validates each line, reports errors by line number, applies
 * nothing of a bad line, and is idempotent by memory id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const GARDEN = [
  'Garden tomato plants need garden watering each morning.',
  'Garden compost feeds the garden tomato beds.',
  'Garden slugs attacked the garden tomato seedlings.',
  'Garden tomato harvest came early; garden tomatoes ripened fast.',
  'Garden basil grows beside garden tomato plants.',
  'Raised garden beds hold garden tomato vines.',
];
const OTHER = [
  'The quarterly invoice was paid late.',
  'Alice moved to Berlin in May.',
  'The train to Lyon was cancelled.',
];

async function exportText(t: TestApp, query = ''): Promise<string> {
  const res = await fetch(`${t.base}/v1/export${query}`, {
    headers: { authorization: `Bearer ${t.adminKey}` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/x-ndjson');
  return res.text();
}

async function importText(t: TestApp, text: string, query = ''): Promise<any> {
  const res = await t.req('POST', `/v1/import${query}`, {
    raw: text,
    headers: { 'content-type': 'application/x-ndjson' },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Every memory (versions included) without the fields that depend on when they are read. */
async function allMemories(t: TestApp): Promise<any[]> {
  const res = await t.req('GET', '/v1/memories?include_superseded=true&limit=1000');
  return (res.body.memories as any[]).map(({ decay_score: _d, ...m }) => m);
}

async function allEdges(t: TestApp, ids: string[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const id of ids) out[id] = (await t.req('GET', `/v1/memories/${id}/edges`)).body;
  return out;
}

async function recallIds(t: TestApp, cue: string): Promise<Array<[string, number]>> {
  const res = await t.req('POST', '/v1/recall', {
    body: {
      cue,
      strategies: ['similarity', 'temporal', 'causal'],
      top_k: 20,
      scoring_weights: { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 },
    },
  });
  expect(res.status).toBe(200);
  return (res.body.results as any[]).map((r) => [
    r.memory.memory_id,
    Math.round(r.relevance * 1e6),
  ]);
}

describe('export → import round trip', () => {
  let src: TestApp;
  let withVectors: TestApp;
  let reembedded: TestApp;
  let text: string;
  let textWithVectors: string;

  beforeAll(async () => {
    src = await startTestApp();
    const ids: string[] = [];
    for (const content of [...GARDEN, ...OTHER]) {
      const res = await src.req('POST', '/v1/memories', {
        body: {
          content,
          entity_id: content.startsWith('Garden') ? 'garden' : null,
          context: { n: ids.length },
        },
      });
      ids.push(res.body.memory_id);
    }
    await src.req('POST', '/v1/memories', {
      body: {
        content: 'Slugs came because the compost was wet.',
        edges: [
          { target_id: ids[1], edge_type: 'caused_by' },
          { target_id: ids[2], edge_type: 'related_to', confidence: 0.4 },
        ],
      },
    });
    await src.req('PUT', `/v1/revise/${ids[6]}`, {
      body: {
        content: 'The quarterly invoice was paid on time after all.',
        context: { checked: true },
      },
    });
    await src.req('PUT', `/v1/revise/${ids[6]}`, { body: { importance: 0.9 } });
    await src.req('POST', '/v1/memories', {
      body: { content: 'Temporary door code 4471.', ttl_s: 3600 },
    });
    const reflected = await src.req('POST', '/v1/reflect', {});
    expect(reflected.body.insights_created).toBeGreaterThan(0);
    const form = new FormData();
    form.append(
      'files',
      new Blob(['---\nentity_id: bob\n---\nBob grows tomatoes. Bob lives in Lyon.\n']),
      'entities/bob/profile.md',
    );
    const up = await fetch(`${src.base}/v1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${src.adminKey}` },
      body: form,
    });
    expect(up.status).toBe(200);
    text = await exportText(src);
    textWithVectors = await exportText(src, '?embeddings=true');
    withVectors = await startTestApp();
    reembedded = await startTestApp();
  });
  afterAll(async () => {
    for (const t of [src, withVectors, reembedded]) await t?.stop();
  });

  it('exports one line per live memory, with versions and edges; embeddings only when asked', () => {
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const kinds = new Set(lines.map((l) => l.memory.kind));
    for (const k of ['episode', 'revision', 'insight', 'document', 'proposition'])
      expect(kinds).toContain(k);
    const revised = lines.find((l) => l.memory.kind === 'revision');
    expect(revised.versions).toHaveLength(2);
    expect(revised.versions.every((v: any) => v.superseded_by === revised.memory.memory_id)).toBe(
      true,
    );
    expect(lines.some((l) => l.edges.some((e: any) => e.edge_type === 'insight_from'))).toBe(true);
    expect(lines.some((l) => l.memory.expires_at !== null)).toBe(true);
    expect(lines.every((l) => l.memory.embedding === undefined)).toBe(true);
    const vectors = textWithVectors
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(Buffer.from(vectors[0].memory.embedding, 'base64').byteLength).toBe(
      src.app.svc.embedder.dim * 4,
    );
    // Each edge appears once, and only after both of its ends.
    const seen = new Set<string>();
    const edgeKeys = new Set<string>();
    for (const l of lines) {
      seen.add(l.memory.memory_id);
      for (const v of l.versions) seen.add(v.memory_id);
      for (const e of l.edges) {
        expect(seen.has(e.source_id) && seen.has(e.target_id)).toBe(true);
        const key = `${e.source_id}>${e.target_id}:${e.edge_type}`;
        expect(edgeKeys.has(key)).toBe(false);
        edgeKeys.add(key);
      }
    }
  });

  it('a fresh server that imports the export holds identical memories, edges and recall results', async () => {
    for (const [dst, body] of [
      [withVectors, textWithVectors],
      [reembedded, text],
    ] as const) {
      const summary = await importText(dst, body);
      const lineCount = body.trim().split('\n').length;
      expect(summary).toEqual({
        lines: lineCount,
        imported: lineCount,
        skipped: 0,
        expired: 0,
        error_count: 0,
        errors: [],
      });
      const want = await allMemories(src);
      expect(await allMemories(dst)).toEqual(want);
      const ids = want.map((m) => m.memory_id);
      expect(await allEdges(dst, ids)).toEqual(await allEdges(src, ids));
    }
    // Recall counts as an access, so it comes after every memory comparison.
    for (const dst of [withVectors, reembedded]) {
      for (const cue of ['garden tomato slugs', 'invoice paid', 'Bob in Lyon'])
        expect(await recallIds(dst, cue)).toEqual(await recallIds(src, cue));
      expect((await dst.req('GET', '/v1/insights')).body.map((m: any) => m.memory_id)).toEqual(
        (await src.req('GET', '/v1/insights')).body.map((m: any) => m.memory_id),
      );
      expect((await dst.req('GET', '/v1/entities')).body).toEqual(
        (await src.req('GET', '/v1/entities')).body,
      );
    }
  });

  it('importing the same file again changes nothing (idempotent by memory id)', async () => {
    const before = await allMemories(withVectors);
    const summary = await importText(withVectors, textWithVectors);
    const lineCount = textWithVectors.trim().split('\n').length;
    expect(summary).toMatchObject({ imported: 0, skipped: lineCount, error_count: 0 });
    expect(await allMemories(withVectors)).toEqual(before);
  });
});

describe('import validation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('reports each bad line by number, applies nothing of it, and imports the good ones', async () => {
    const good = (id: string, content: string): string =>
      JSON.stringify({ memory: { memory_id: id, content, created_at: 1_700_000_000_000_000 } });
    const a = `${'0'.repeat(30)}a1`;
    const b = `${'0'.repeat(30)}b2`;
    const c = `${'0'.repeat(30)}c3`;
    const lines = [
      good(a, 'first good line'),
      '{not json',
      JSON.stringify({
        memory: { memory_id: b, content: 'points nowhere' },
        edges: [{ source_id: b, target_id: 'f'.repeat(32), edge_type: 'caused_by' }],
      }),
      JSON.stringify({ memory: { memory_id: c, importance: 2, content: 'too important' } }),
      '',
      JSON.stringify({
        memory: { content: 'no id: a new one is given', kind: 'insight' },
        edges: [{ source_id: a, target_id: a, edge_type: 'sideways' }],
      }),
      JSON.stringify({ memory: { memory_id: c, content: 'good after bad', expires_at: 1 } }),
      JSON.stringify({
        memory: {
          memory_id: b,
          content: 'second good line',
          embedding: Buffer.alloc(8).toString('base64'),
        },
      }),
      JSON.stringify({
        memory: { memory_id: b, content: 'linked' },
        edges: [{ source_id: b, target_id: a, edge_type: 'CausedBy' }],
      }),
      JSON.stringify({ versions: [] }),
    ].join('\n');
    const summary = await importText(t, lines, '?first_line=101');
    expect(summary.lines).toBe(9);
    expect(summary.imported).toBe(2);
    expect(summary.expired).toBe(1);
    expect(summary.errors.map((e: any) => e.line)).toEqual([102, 103, 104, 106, 108, 110]);
    expect(summary.error_count).toBe(6);
    const [json, edge, importance, type, dims, shape] = summary.errors.map((e: any) => e.message);
    expect(json).toMatch(/not valid JSON/);
    expect(edge).toMatch(/neither on this line nor already in the workspace/);
    expect(importance).toMatch(/memory\.importance must be between 0 and 1/);
    expect(type).toMatch(/edges\[0\]\.edge_type 'sideways' is not one of caused_by/);
    expect(dims).toMatch(/memory\.embedding has 2 dimensions/);
    expect(shape).toMatch(/memory is required/);
    const all = (await t.req('GET', '/v1/memories?limit=100')).body.memories as any[];
    expect(all.map((m) => m.content).sort()).toEqual(['first good line', 'linked']);
    expect((await t.req('GET', `/v1/memories/${b}/edges`)).body.outgoing).toMatchObject([
      { target_id: a, edge_type: 'caused_by' },
    ]);
  });

  it('a memory imported with created_at and no id gets an id of that time, so creation order is created_at order', async () => {
    const at = (iso: string): number => Date.parse(iso) * 1000;
    const lines = [
      { content: 'dated import: June', created_at: at('2023-06-09T19:55:00Z') },
      { content: 'dated import: May', created_at: at('2023-05-08T13:56:00Z') },
      { content: 'dated import: May, a minute later', created_at: at('2023-05-08T13:57:00Z') },
    ].map((memory) => JSON.stringify({ memory }));
    expect((await importText(t, lines.join('\n'))).imported).toBe(3);
    const dated = (await exportText(t))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).memory)
      .filter((m: any) => m.content.startsWith('dated import'));
    // The export walks ids in order: ids sort by creation time.
    expect(dated.map((m: any) => m.content)).toEqual([
      'dated import: May',
      'dated import: May, a minute later',
      'dated import: June',
    ]);
    for (const m of dated)
      expect(parseInt(m.memory_id.slice(0, 12), 16)).toBe(Math.floor(m.created_at / 1000));
  });

  it('refuses a body that is not NDJSON, and an export of a workspace the key cannot reach', async () => {
    const res = await t.req('POST', '/v1/import', {
      raw: '<xml/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(res.status).toBe(415);
    const ws = await t.req('POST', '/v1/workspaces', { body: { slug: 'other-ws' } });
    const denied = await t.req('GET', '/v1/workspaces/default/export', { key: ws.body.api_key });
    expect(denied.status).toBe(403);
    expect((await t.req('GET', '/v1/export?embeddings=maybe')).status).toBe(400);
  });
});
