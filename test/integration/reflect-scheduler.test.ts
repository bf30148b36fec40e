/**
 * Background reflection (DESIGN.md 9): with FLASHBULB_REFLECT_ENABLED=true the service reflects a
 * workspace on its own once FLASHBULB_REFLECT_MIN_NEW new episodes have arrived; with it off,
 * nothing is written until somebody asks.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const GARDEN = [
  'Garden tomato plants need garden watering each morning.',
  'Garden compost feeds the garden tomato beds.',
  'Garden slugs attacked the garden tomato seedlings.',
  'Garden basil grows beside garden tomato plants.',
  'Raised garden beds hold garden tomato vines.',
  'Garden drip hose waters garden tomato roots.',
];

const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.stop();
});

async function writeAll(t: TestApp, texts: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const content of texts) {
    const res = await t.req('POST', '/v1/memories', { body: { content } });
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.memory_id);
  }
  return ids;
}

/** Polls GET /v1/insights until it is non-empty or `ms` pass. */
async function pollInsights(t: TestApp, ms: number): Promise<any[]> {
  let insights: any[] = [];
  await until(
    async () => {
      const res = await t.req('GET', '/v1/insights');
      expect(res.status).toBe(200);
      insights = res.body;
      return insights.length > 0;
    },
    { what: 'an insight', deadlineMs: ms, everyMs: 100 },
  ).catch(() => undefined);
  return insights;
}

async function reflectionRuns(t: TestApp): Promise<number> {
  const text = (await t.req('GET', '/v1/metrics')).text;
  const m = /^flashbulb_reflection_runs_total (\d+(?:\.\d+)?)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

describe('background reflection', () => {
  it('reflects on its own after FLASHBULB_REFLECT_MIN_NEW (5) new episodes', async () => {
    const t = await startTestApp(
      {},
      { FLASHBULB_REFLECT_ENABLED: 'true', FLASHBULB_REFLECT_MIN_NEW: '5' },
    );
    apps.push(t);
    expect(t.config.reflectEnabled).toBe(true);
    expect(t.config.reflectMinNew).toBe(5);
    const runsBefore = await reflectionRuns(t);
    // Four episodes: below the threshold, nothing happens. The scheduler decides within each
    // remember request (ReflectionEngine.noteEpisode), and a run it starts counts itself before
    // the reply is sent, so once the writes are answered each had its chance to start one.
    const ids = await writeAll(t, GARDEN.slice(0, 4));
    expect((await t.req('GET', '/v1/insights')).body).toEqual([]);
    expect(await reflectionRuns(t)).toBe(runsBefore);
    // The fifth starts a reflection in the background; the write is answered without waiting for it.
    ids.push(...(await writeAll(t, GARDEN.slice(4))));
    const insights = await pollInsights(t, 10_000);
    expect(insights.length, 'no insight appeared within 10 s').toBeGreaterThanOrEqual(1);
    const ins = insights[0];
    expect(ins.kind).toBe('insight');
    expect(ins.source_memory_ids.length).toBeGreaterThanOrEqual(3);
    for (const id of ins.source_memory_ids) expect(ids).toContain(id);
    expect(ins.context).toMatchObject({ scope: 'global', method: 'extractive' });
    expect(await reflectionRuns(t)).toBeGreaterThan(runsBefore);
  });

  it('writes nothing on its own when FLASHBULB_REFLECT_ENABLED=false', async () => {
    const t = await startTestApp({ reflectMinNew: 5 }, { FLASHBULB_REFLECT_ENABLED: 'false' });
    apps.push(t);
    expect(t.config.reflectEnabled).toBe(false);
    const runsBefore = await reflectionRuns(t);
    // Enabled, the fifth of these writes would start a run within its request (the test above);
    // disabled, no write starts one and no interval timer exists, so nothing is left to wait for.
    await writeAll(t, GARDEN);
    expect(await reflectionRuns(t)).toBe(runsBefore);
    expect((await t.req('GET', '/v1/insights')).body).toEqual([]);
    expect((await t.req('GET', '/v1/memories?kind=insight')).body.memories).toEqual([]);
    // An explicit reflect still works.
    const res = await t.req('POST', '/v1/reflect', { body: {} });
    expect(res.status, res.text).toBe(200);
    expect(res.body.insights_created).toBeGreaterThanOrEqual(1);
  });
});
