/**
 * POST /v1/prime (DESIGN.md 3.3, 7): `{results, temporal_count, similarity_count}`; half of
 * max_memories from the newest memories within the recency window, half from the memories most
 * similar to the cue (similarity_cue, or one made from the entity and context), de-duplicated;
 * when one half comes up short the other fills the remaining places. max_memories default 20,
 * at most 200. Hash embedder; background reflection and contradiction checks are off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const QUIET = { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' };

const OLD = [
  'astronomy club: the telescope showed the rings of saturn',
  'astronomy club: we watched a meteor shower from the hill',
  'astronomy club: jupiter and its moons were bright tonight',
  'astronomy club: the new telescope mount tracks the stars',
  'astronomy club: a comet was visible near the horizon',
];
const RECENT = Array.from(
  { length: 8 },
  (_, i) => `kitchen log ${i}: baked bread and simmered vegetable soup`,
);
const LATEST = 'garden diary: pruned the roses after lunch';
/**
 * RECENT is written this long after OLD, LATEST this long after RECENT. OLD and RECENT are
 * imported with creation times in the past, so no test waits for the gap to pass.
 */
const GAP_MS = 10 * 60 * 1000;

let t: TestApp;
let req: (
  method: string,
  path: string,
  opts?: { body?: unknown; raw?: string; headers?: Record<string, string> },
) => ReturnType<TestApp['req']>;
const ids = { old: [] as string[], recent: [] as string[], latest: '' };
const created = { recentFirst: 0, latest: 0 };

/**
 * A recency window (measured back from the prime call) that reaches `createdUs` with half a gap
 * to spare, so it holds that memory and the newer ones but nothing written a gap earlier.
 */
function windowReaching(createdUs: number): number {
  return Date.now() * 1000 - createdUs + (GAP_MS * 1000) / 2;
}

/** Imports memories created `agoMs` before now (1 ms apart, in order); returns their ids. */
async function importAgo(agoMs: number, lines: Array<Record<string, unknown>>): Promise<string[]> {
  const start = (Date.now() - agoMs) * 1000;
  // Ids are ULIDs: their first 48 bits are the creation millisecond, which the newest-first order reads.
  const ids = lines.map(
    (_, i) =>
      `${(start / 1000 + i).toString(16).padStart(12, '0')}${i.toString(16).padStart(20, '0')}`,
  );
  const text = lines
    .map((m, i) =>
      JSON.stringify({ memory: { ...m, memory_id: ids[i], created_at: start + i * 1000 } }),
    )
    .join('\n');
  const res = await req('POST', '/v1/import', {
    raw: `${text}\n`,
    headers: { 'content-type': 'application/x-ndjson' },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.imported).toBe(lines.length);
  return ids;
}

async function remember(body: Record<string, unknown>): Promise<any> {
  const res = await req('POST', '/v1/memories', { body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function prime(
  body: Record<string, unknown>,
): Promise<{ results: any[]; temporal_count: number; similarity_count: number }> {
  const res = await req('POST', '/v1/prime', { body });
  expect(res.status, res.text).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['results', 'similarity_count', 'temporal_count']);
  const out = res.body;
  expect(Number.isInteger(out.temporal_count) && Number.isInteger(out.similarity_count)).toBe(true);
  expect(out.results.length).toBe(out.temporal_count + out.similarity_count);
  const got = out.results.map((r: any) => r.memory.memory_id);
  expect(new Set(got).size, 'no memory twice').toBe(got.length);
  for (const r of out.results) {
    expect(Object.keys(r).sort()).toEqual(['memory', 'relevance', 'score', 'strategy_details']);
    expect(r.relevance).toBeGreaterThanOrEqual(0);
    expect(r.relevance).toBeLessThanOrEqual(1);
  }
  for (let i = 1; i < out.results.length; i++)
    expect(out.results[i - 1].score).toBeGreaterThanOrEqual(out.results[i].score);
  return out;
}

const idsOf = (out: { results: any[] }): string[] => out.results.map((r) => r.memory.memory_id);

beforeAll(async () => {
  t = await startTestApp({}, QUIET);
  const slug = `prime-${process.pid}`;
  const ws = await t.inject('POST', '/v1/workspaces', { body: { slug } });
  expect(ws.status, ws.text).toBe(201);
  const key = ws.body.api_key as string;
  req = (method, path, opts = {}) => t.inject(method, path, { ...opts, key });
  ids.old.push(
    ...(await importAgo(
      2 * GAP_MS,
      OLD.map((content) => ({ content, entity_id: 'stargazers' })),
    )),
  );
  ids.recent.push(
    ...(await importAgo(
      GAP_MS,
      RECENT.map((content) => ({ content })),
    )),
  );
  created.recentFirst = (await req('GET', `/v1/memories/${ids.recent[0]}`)).body.created_at;
  const latest = await remember({ content: LATEST });
  ids.latest = latest.memory_id;
  created.latest = latest.created_at;
});
afterAll(async () => t.stop());

describe('POST /v1/prime', () => {
  it('answers {results, temporal_count, similarity_count}; default max_memories 20 takes all 14 here', async () => {
    const out = await prime({});
    expect(out.results).toHaveLength(14);
    expect(new Set(idsOf(out))).toEqual(new Set([...ids.old, ...ids.recent, ids.latest]));
    // No cue at all: the similarity half is empty and the temporal half fills every place.
    expect(out.similarity_count).toBe(0);
    expect(out.temporal_count).toBe(14);
  });

  it('splits max_memories between the newest and the most similar', async () => {
    const out = await prime({ similarity_cue: 'telescope stars astronomy club', max_memories: 6 });
    expect(out.results).toHaveLength(6);
    expect(out.temporal_count).toBe(3);
    expect(out.similarity_count).toBe(3);
    const got = new Set(idsOf(out));
    // The three newest…
    for (const id of [ids.latest, ids.recent[7], ids.recent[6]])
      expect(got.has(id as string)).toBe(true);
    // …and three of the astronomy notes.
    expect(ids.old.filter((id) => got.has(id))).toHaveLength(3);
    const details = out.results.flatMap((r) => r.strategy_details.map((d: any) => d.strategy));
    expect(details.filter((s: string) => s === 'temporal')).toHaveLength(3);
    expect(details.filter((s: string) => s === 'similarity')).toHaveLength(3);
  });

  it('de-duplicates: a memory both recent and similar takes one place, and the others fill the rest', async () => {
    const out = await prime({
      similarity_cue: 'kitchen log: baked bread and simmered vegetable soup',
      max_memories: 6,
    });
    expect(out.results).toHaveLength(6);
    expect(out.temporal_count + out.similarity_count).toBe(6);
    expect(out.temporal_count).toBeGreaterThanOrEqual(3);
    expect(out.similarity_count).toBeGreaterThanOrEqual(1);
  });

  it('the recency window bounds the temporal half; the similarity half fills the places it leaves', async () => {
    const out = await prime({
      similarity_cue: 'telescope stars astronomy club',
      max_memories: 6,
      recency_window_us: windowReaching(created.latest),
    });
    expect(out.temporal_count).toBe(1);
    expect(out.similarity_count).toBe(5);
    const got = idsOf(out);
    expect(got).toContain(ids.latest);
    for (const id of ids.old) expect(got).toContain(id);
    const temporal = out.results.filter((r) =>
      r.strategy_details.some((d: any) => d.strategy === 'temporal'),
    );
    expect(temporal.map((r) => r.memory.memory_id)).toEqual([ids.latest]);
  });

  it('with no cue and a short window only the memories inside the window come back', async () => {
    const out = await prime({ max_memories: 6, recency_window_us: windowReaching(created.latest) });
    expect(idsOf(out)).toEqual([ids.latest]);
    expect(out).toMatchObject({ temporal_count: 1, similarity_count: 0 });
    const wider = await prime({
      max_memories: 20,
      recency_window_us: windowReaching(created.recentFirst),
    });
    expect(new Set(idsOf(wider))).toEqual(new Set([...ids.recent, ids.latest]));
  });

  it('an odd max_memories is filled exactly; max_memories 1 gives one memory', async () => {
    const seven = await prime({
      similarity_cue: 'telescope stars astronomy club',
      max_memories: 7,
    });
    expect(seven.results).toHaveLength(7);
    expect([3, 4]).toContain(seven.temporal_count);
    const one = await prime({ max_memories: 1 });
    expect(idsOf(one)).toEqual([ids.latest]);
  });

  it('entity_id scopes both halves; without a cue the entity stands in for one', async () => {
    const out = await prime({ entity_id: 'stargazers', max_memories: 4 });
    expect(out.results).toHaveLength(4);
    for (const r of out.results) expect(r.memory.entity_id).toBe('stargazers');
    expect(out.similarity_count).toBeGreaterThan(0);
    const all = await prime({
      entity_id: 'stargazers',
      similarity_cue: 'kitchen soup',
      max_memories: 20,
    });
    expect(new Set(idsOf(all))).toEqual(new Set(ids.old));
  });

  it('max_memories 200 is accepted; 201, 0 and 2.5 are 400s naming the field', async () => {
    expect((await prime({ max_memories: 200 })).results).toHaveLength(14);
    for (const max of [201, 0, -1, 2.5]) {
      const res = await req('POST', '/v1/prime', { body: { max_memories: max } });
      expect(res.status, String(max)).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
      expect(res.body.message).toMatch(/max_memories/);
    }
    const badWindow = await req('POST', '/v1/prime', { body: { recency_window_us: -5 } });
    expect(badWindow.status).toBe(400);
    expect(badWindow.body.message).toMatch(/recency_window_us/);
  });
});
