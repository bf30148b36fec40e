/**
 * `asked_at_us` on recall (issue 50): the time a cue is asked at. A cue's relative time ("in
 * January" is the latest January up to then) and the recency term read it instead of the clock;
 * memories written after it are not hidden; a value that is no time is refused naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  expect((await t.req('POST', '/v1/workspaces', { body: { slug: 'asked' } })).status).toBe(201);
  const at = (iso: string): number => Date.parse(iso) * 1000;
  const lines = [
    { content: 'lunch with Ana at the harbour', created_at: at('2025-01-14T12:00:00Z') },
    { content: 'lunch with Ana at the harbour', created_at: at('2026-01-14T12:00:00Z') },
  ].map((memory) => JSON.stringify({ memory }));
  const res = await t.req('POST', '/v1/workspaces/asked/import', {
    raw: lines.join('\n'),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  expect(res.status, res.text).toBe(200);
});
afterAll(async () => {
  await t?.stop();
});

const ONLY_RELEVANCE = { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 };

async function recall(
  body: Record<string, unknown>,
): Promise<{ status: number; body: any; text: string }> {
  return t.req('POST', '/v1/workspaces/asked/recall', {
    body: { strategies: ['similarity'], ...body },
  });
}

const year = (r: any): number => new Date(r.memory.created_at / 1000).getUTCFullYear();

describe('recall asked_at_us', () => {
  it('reads "in January" as the January before the time the cue is asked at', async () => {
    const cue = 'lunch with Ana in January';
    const then = await recall({
      cue,
      scoring_weights: ONLY_RELEVANCE,
      asked_at_us: Date.parse('2025-02-20T00:00:00Z') * 1000,
    });
    expect(then.status, then.text).toBe(200);
    expect(then.body.results.map(year)).toEqual([2025, 2026]);
    // ISO 8601 text as well as microseconds, as every time a caller writes.
    const later = await recall({
      cue,
      scoring_weights: ONLY_RELEVANCE,
      asked_at_us: '2026-02-20T00:00:00Z',
    });
    expect(later.body.results.map(year)).toEqual([2026, 2025]);
  });

  it('reads recency from it', async () => {
    const res = await recall({
      cue: 'lunch with Ana',
      scoring_weights: { w_relevance: 0, w_recency: 1, w_importance: 0, w_reinforcement: 0 },
      asked_at_us: Date.parse('2025-01-29T12:00:00Z') * 1000,
    });
    const byYear = new Map(res.body.results.map((r: any) => [year(r), r.score]));
    // 15 days into a 30-day window; the memory of 2026 is after it (age 0: full recency).
    expect(byYear.get(2025)).toBeCloseTo(0.5, 6);
    expect(byYear.get(2026)).toBe(1);
  });

  it('refuses a value that is not a time, naming the field', async () => {
    for (const bad of [-1, 2 ** 60]) {
      const res = await recall({ cue: 'lunch', asked_at_us: bad });
      expect(res.status).toBe(400);
      expect(res.text).toContain('asked_at_us');
    }
    const res = await recall({ cue: 'lunch', asked_at_us: 'yesterday' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('asked_at_us');
  });
});
