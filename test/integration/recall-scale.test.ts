/**
 * Recall over a workspace past the exact-scan size, where similarity runs on the HNSW graph
 * (DESIGN.md 6, 11): entity scoping finds every memory of a rare entity even when none of them is
 * globally similar to the cue; a high ef_search gives the exact top k; recall after a restart
 * (graph saved and adopted) returns the same results; forgetting and then writing more keeps the
 * index serving, before and after a restart. 3000 memories written with parallel requests; hash
 * embedder, with the exact answers computed here by brute force; background reflection and
 * contradiction checks are off so that the workspace holds exactly what was written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashEmbedder } from '../../src/embedding/hash-embedder.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { untilIdle } from '../helpers/wait.ts';

const QUIET = { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' };
const ONLY_RELEVANCE = { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 };
const OTHERS = 3000;
const ENTITY = 'rare-x';
const CUE = 'sunny skies and mild winds in the weather report';
const X_CONTENT = [
  'seminar notes on gluon confinement in quantum chromodynamics',
  'a recipe for saffron risotto finished with parmesan',
  'the lighthouse keeper repaired the rusty foghorn',
];

const hash = createHashEmbedder(384);
let t: TestApp;
let req: (method: string, path: string, opts?: { body?: unknown }) => ReturnType<TestApp['req']>;
const metrics = async (): Promise<string> => (await req('GET', '/v1/metrics')).text;
/** id → content of every memory written. */
const contents = new Map<string, string>();
const xIds: string[] = [];

function other(i: number): string {
  return `weather report ${i}: sunny skies and mild winds along the coast, station ${i % 37}`;
}

async function remember(body: Record<string, unknown>): Promise<any> {
  const res = await req('POST', '/v1/memories', { body });
  expect(res.status, res.text).toBe(201);
  contents.set(res.body.memory_id, body.content as string);
  return res.body;
}

async function recall(
  body: Record<string, unknown>,
): Promise<{ results: any[]; strategy_errors: any[] }> {
  const res = await req('POST', '/v1/recall', { body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function bruteForce(cue: string, k: number): Promise<Array<{ id: string; sim: number }>> {
  const entries = [...contents];
  const vectors = await hash.embed([cue, ...entries.map(([, c]) => c)]);
  const dim = hash.dim;
  const q = vectors.subarray(0, dim);
  return entries
    .map(([id], i) => {
      const v = vectors.subarray((i + 1) * dim, (i + 2) * dim);
      let s = 0;
      for (let j = 0; j < dim; j++) s += (q[j] as number) * (v[j] as number);
      return { id, sim: s };
    })
    .sort((a, b) => b.sim - a.sim)
    .slice(0, k);
}

const ids = (out: { results: any[] }): string[] => out.results.map((r) => r.memory.memory_id);

beforeAll(async () => {
  t = await startTestApp({ durability: 'os' }, QUIET);
  const ws = await t.req('POST', '/v1/workspaces', { body: { slug: `scale-${process.pid}` } });
  expect(ws.status, ws.text).toBe(201);
  const key = ws.body.api_key as string;
  req = (method, path, opts = {}) => t.req(method, path, { ...opts, key });
  // X1 first (the others link to it); X2 and X3 go out in the middle of the parallel flood.
  xIds.push((await remember({ content: X_CONTENT[0], entity_id: ENTITY })).memory_id);
  const xAt = new Map([
    [1000, 1],
    [2000, 2],
  ]);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < OTHERS) {
      const i = next++;
      const x = xAt.get(i);
      if (x !== undefined) {
        const edgeType = x === 1 ? 'caused_by' : 'related_to';
        xIds.push(
          (
            await remember({
              content: X_CONTENT[x],
              entity_id: ENTITY,
              edges: [{ target_id: xIds[0], edge_type: edgeType }],
            })
          ).memory_id,
        );
      }
      await remember({ content: other(i) });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  expect(contents.size).toBe(OTHERS + 3);
}, 120_000);
afterAll(async () => t.stop());

describe(`recall over ${OTHERS} memories`, () => {
  it('entity_id returns every memory of a rare entity, though none is globally similar to the cue', async () => {
    const global = await recall({ cue: CUE, strategies: ['similarity'], top_k: 10 });
    expect(global.results).toHaveLength(10);
    for (const id of xIds) expect(ids(global)).not.toContain(id);

    const scoped = await recall({
      cue: CUE,
      strategies: ['similarity'],
      top_k: 10,
      entity_id: ENTITY,
    });
    expect(new Set(ids(scoped))).toEqual(new Set(xIds));
    for (const r of scoped.results) expect(r.memory.entity_id).toBe(ENTITY);

    // top_k 2 keeps the two most similar of the three.
    const ranked = (await bruteForce(CUE, OTHERS + 3))
      .filter((x) => xIds.includes(x.id))
      .map((x) => x.id);
    const two = await recall({
      cue: CUE,
      strategies: ['similarity'],
      top_k: 2,
      entity_id: ENTITY,
      scoring_weights: ONLY_RELEVANCE,
    });
    expect(ids(two)).toEqual(ranked.slice(0, 2));

    const temporal = await recall({ cue: CUE, strategies: ['temporal'], entity_id: ENTITY });
    expect(temporal.results).toHaveLength(3);
    expect(new Set(ids(temporal))).toEqual(new Set(xIds));
    const times = temporal.results.map((r) => r.memory.created_at);
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const analogical = await recall({ cue: CUE, strategies: ['analogical'], entity_id: ENTITY });
    expect(new Set(ids(analogical))).toEqual(new Set(xIds));

    const causal = await recall({ cue: CUE, strategies: ['causal'], entity_id: ENTITY });
    expect(causal.strategy_errors).toEqual([]);
    const seed = causal.results[0]?.strategy_details[0]?.seed_id as string;
    expect(xIds).toContain(seed);
    expect(new Set(ids(causal))).toEqual(new Set(xIds.filter((id) => id !== seed)));

    const prime = await req('POST', '/v1/prime', {
      body: { entity_id: ENTITY, similarity_cue: CUE, max_memories: 10 },
    });
    expect(prime.status, prime.text).toBe(200);
    expect(new Set(prime.body.results.map((r: any) => r.memory.memory_id))).toEqual(new Set(xIds));
  });

  it('a high ef_search gives the exact top k; the default is close to it', async () => {
    for (const cue of [CUE, 'station 12 along the coast', 'weather report 1234']) {
      const exact = await bruteForce(cue, 11);
      const got = await recall({
        cue,
        strategies: ['similarity'],
        similarity_mode: 'dense',
        top_k: 10,
        ef_search: OTHERS + 3,
        scoring_weights: ONLY_RELEVANCE,
      });
      expect(got.results).toHaveLength(10);
      const eleventh = (exact[10] as { sim: number }).sim;
      const exactTop = new Set(exact.slice(0, 10).map((x) => x.id));
      // In the exact top 10, up to ties with the 11th at the boundary.
      const isExact = (r: any): boolean =>
        exactTop.has(r.memory.memory_id) || Math.abs(r.relevance - eleventh) < 1e-9;
      for (const r of got.results) expect(isExact(r), r.memory.content).toBe(true);
      const def = await recall({
        cue,
        strategies: ['similarity'],
        similarity_mode: 'dense',
        top_k: 10,
      });
      const overlap = def.results.filter(isExact).length;
      // Hash-embedded vectors are close to random in 384 dimensions, HNSW's hardest case: at the
      // default ef 50 it finds most, not all, of the exact top 10 (real-model vectors fare better).
      expect(overlap).toBeGreaterThanOrEqual(6);
    }
  });

  it('returns the same results after a restart (graph saved with the snapshot and adopted)', async () => {
    const queries: Array<Record<string, unknown>> = [
      {
        cue: CUE,
        strategies: ['similarity'],
        top_k: 10,
        ef_search: OTHERS + 3,
        scoring_weights: ONLY_RELEVANCE,
      },
      {
        cue: 'station 5 coast',
        strategies: ['similarity'],
        top_k: 25,
        ef_search: OTHERS + 3,
        scoring_weights: ONLY_RELEVANCE,
      },
      {
        cue: CUE,
        strategies: ['similarity', 'temporal', 'causal'],
        top_k: 3,
        entity_id: ENTITY,
        scoring_weights: ONLY_RELEVANCE,
      },
      { cue: CUE, strategies: ['temporal'], top_k: 20 },
    ];
    const view = (out: { results: any[] }): Array<[string, number, string[]]> =>
      out.results.map((r) => [
        r.memory.memory_id,
        Number(r.relevance.toFixed(6)),
        r.strategy_details.map((d: any) => d.strategy),
      ]);
    const before = [];
    for (const q of queries) before.push(view(await recall(q)));
    const accessed = (await req('GET', `/v1/memories/${xIds[0]}`)).body;
    expect(accessed.access_count).toBeGreaterThan(0);
    await t.restart();
    // Access counts are written lazily, but a clean shutdown keeps them.
    const reloaded = (await req('GET', `/v1/memories/${xIds[0]}`)).body;
    expect(reloaded.access_count).toBe(accessed.access_count);
    expect(reloaded.last_accessed_at).toBe(accessed.last_accessed_at);
    for (const [i, q] of queries.entries())
      expect(view(await recall(q)), JSON.stringify(q)).toEqual(before[i]);
    const one = await req('GET', `/v1/memories/${xIds[0]}`);
    expect(one.status).toBe(200);
    expect(one.body.content).toBe(X_CONTENT[0]);
  });

  it('forgetting and then writing more keeps the index serving, before and after a restart', async () => {
    const forgetIds = [...contents.keys()].filter((id) => !xIds.includes(id)).slice(100, 105);
    const f = await req('POST', '/v1/forget', { body: { memory_ids: forgetIds } });
    expect(f.status, f.text).toBe(200);
    expect(f.body.forgotten_count).toBe(5);
    for (const id of forgetIds) contents.delete(id);
    const fresh: Array<{ id: string; content: string }> = [];
    const words = ['marmalade', 'xylophone', 'quokka', 'zeppelin', 'origami'];
    for (const w of words) {
      const content = `${w} ${w} ${w} appears in this note only`;
      fresh.push({ id: (await remember({ content })).memory_id, content });
    }
    await untilIdle(metrics); // the shard moves the new vectors into the graph between requests
    for (const { id, content } of fresh) {
      const out = await recall({ cue: content, strategies: ['similarity'], top_k: 1 });
      expect(ids(out)).toEqual([id]);
    }
    for (const id of forgetIds) expect((await req('GET', `/v1/memories/${id}`)).status).toBe(404);

    // Forget the newest (its graph point stays in the saved file, deleted), restart, write again.
    const last = fresh.pop() as { id: string; content: string };
    expect((await req('POST', '/v1/forget', { body: { memory_ids: [last.id] } })).status).toBe(200);
    await t.restart();
    const after = { id: '', content: 'kaleidoscope kaleidoscope written after the restart' };
    after.id = (await remember({ content: after.content })).memory_id;
    const more = { id: '', content: 'tambourine tambourine written after the restart' };
    more.id = (await remember({ content: more.content })).memory_id;
    await untilIdle(metrics);
    for (const { id, content } of [after, more, ...fresh]) {
      const out = await recall({ cue: content, strategies: ['similarity'], top_k: 1 });
      expect(ids(out)).toEqual([id]);
    }
    const gone = await recall({ cue: last.content, strategies: ['similarity'], top_k: 5 });
    expect(ids(gone)).not.toContain(last.id);
    expect((await req('GET', '/v1/health/ready')).status).toBe(200);
  });
});
