/**
 * Recalls whose strategies never read the cue's vector (temporal; causal from a seed_memory_id)
 * skip the embedding (issue 17): the embedder is not called, results and their order are the same
 * as before, `relevance` is 0 and the score has no relevance term. A recall that also asks for a
 * strategy that needs the vector embeds the cue and reports cosine relevance as before.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let key = '';
const ids: string[] = [];

async function recall(
  body: Record<string, unknown>,
): Promise<{ results: any[]; strategy_errors: any[] }> {
  const res = await t.req('POST', '/v1/recall', { body, key });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Texts the embedder was asked for while `run` ran. */
async function embeddedDuring(run: () => Promise<unknown>): Promise<string[]> {
  const spy = vi.spyOn(t.app.svc.embedder, 'embed');
  try {
    await run();
    return spy.mock.calls.flatMap(([texts]) => [...texts]);
  } finally {
    spy.mockRestore();
  }
}

beforeAll(async () => {
  t = await startTestApp();
  const created = await t.req('POST', '/v1/workspaces', { body: { slug: `rwe-${process.pid}` } });
  expect(created.status, created.text).toBe(201);
  key = created.body.api_key as string;
  const contents = [
    'harbor cranes unload crates',
    'glacier melt feeds the fjord',
    'orchid blooms in the meadow',
    'reef fish shelter in kelp',
  ];
  for (const [i, content] of contents.entries()) {
    const edges = i === 0 ? [] : [{ target_id: ids[i - 1], edge_type: 'caused_by' }];
    const res = await t.req('POST', '/v1/memories', {
      body: { content, importance: 0.2 * (i + 1), entity_id: 'port', edges },
      key,
    });
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.memory_id as string);
  }
});
afterAll(async () => t.stop());

describe('recall without embedding the cue', () => {
  it('temporal only: no embedding, newest first, relevance 0, score without the relevance term', async () => {
    let out: Awaited<ReturnType<typeof recall>> | undefined;
    const texts = await embeddedDuring(async () => {
      out = await recall({
        cue: 'cranes at the harbor',
        strategies: ['temporal'],
        scoring_weights: { w_relevance: 1, w_recency: 0, w_importance: 1, w_reinforcement: 0 },
      });
    });
    expect(texts).toEqual([]);
    expect(out?.results.map((r) => r.memory.memory_id)).toEqual([...ids].reverse());
    for (const r of out?.results ?? []) {
      expect(r.relevance).toBe(0);
      expect(r.score).toBeCloseTo(r.memory.importance, 9);
    }
  });

  it('causal from a seed_memory_id: no embedding, the same walk, relevance 0', async () => {
    let out: Awaited<ReturnType<typeof recall>> | undefined;
    const texts = await embeddedDuring(async () => {
      out = await recall({
        cue: 'anything',
        strategies: ['causal', 'temporal'],
        seed_memory_id: ids[0],
        top_k: 10,
      });
    });
    expect(texts).toEqual([]);
    const causal =
      out?.results.filter((r) => r.strategy_details.some((d: any) => d.strategy === 'causal')) ??
      [];
    expect(causal.map((r) => r.memory.memory_id).sort()).toEqual(ids.slice(1).sort());
    for (const r of out?.results ?? []) expect(r.relevance).toBe(0);
  });

  it('a causal recall without a seed, or any similarity or analogical strategy, embeds the cue and reports cosine relevance', async () => {
    // Shares words with the first two memories, so whichever seeds the walk, the other is found.
    const BOTH = 'harbor cranes unload crates; glacier melt feeds the fjord';
    for (const strategies of [['causal'], ['temporal', 'similarity'], ['analogical']]) {
      let out: Awaited<ReturnType<typeof recall>> | undefined;
      const texts = await embeddedDuring(async () => {
        out = await recall({ cue: BOTH, strategies });
      });
      expect(texts, strategies.join('+')).toEqual([BOTH]);
      const relevance = (out?.results ?? []).map((r) => r.relevance);
      expect(relevance.length, strategies.join('+')).toBeGreaterThan(0);
      expect(Math.max(...relevance), strategies.join('+')).toBeGreaterThan(0);
    }
  });

  it('an empty cue is still refused when nothing would embed it', async () => {
    const res = await t.req('POST', '/v1/recall', {
      body: { cue: '  ', strategies: ['temporal'] },
      key,
    });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('invalid_input');
    expect(res.body.message).toMatch(/cue/);
  });
});
