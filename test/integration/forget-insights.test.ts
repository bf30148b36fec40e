/**
 * Issue 12, defects 2 and 4: forgotten content must not survive inside insights. Forgetting a
 * source rewrites each insight drawn from it from the sources that remain (or removes it when none
 * remain), in the same commit, and the erasure snapshot then removes the quoted text from every
 * file; a reflection whose sources vanish while it runs writes what remains instead of failing.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureBuilt,
  filesContaining,
  http,
  killQuietly,
  startServer,
  waitExit,
  type ChildServer,
} from '../helpers/child.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const ERASE_WITHIN_S = 2;

/** One theme with shared vocabulary, which the hash embedder clusters (as in reflect-insights.test.ts). */
const GARDEN = [
  'Garden tomato plants need garden watering each morning.',
  'Garden compost feeds the garden tomato beds.',
  'Garden slugs attacked the garden tomato seedlings.',
  'Garden tomato harvest came early; garden tomatoes ripened fast.',
  'Garden basil grows beside garden tomato plants.',
  'Raised garden beds hold garden tomato vines.',
  'Garden drip hose waters garden tomato roots.',
  'Garden aphids found on garden tomato leaves.',
];

let t: TestApp;
let seq = 0;

beforeAll(async () => {
  t = await startTestApp({ eraseWithinS: ERASE_WITHIN_S });
});
afterAll(async () => t.stop());

type Req = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any; text: string }>;

async function freshWorkspace(): Promise<{ slug: string; req: Req }> {
  const slug = `forget-ins-${process.pid}-${++seq}`;
  const res = await t.req('POST', '/v1/workspaces', { body: { slug } });
  const key = res.body.api_key as string;
  return {
    slug,
    req: (method, path, body) => t.req(method, path, body === undefined ? { key } : { key, body }),
  };
}

/** The garden theme, each statement carrying a marker word of its own; returns id → marker. */
async function writeGarden(req: Req): Promise<Map<string, string>> {
  const markers = new Map<string, string>();
  for (const text of GARDEN) {
    const marker = `mark${randomBytes(6).toString('hex')}`;
    const res = await req('POST', '/v1/memories', { content: `${text} ${marker}` });
    expect(res.status, res.text).toBe(201);
    markers.set(res.body.memory_id, marker);
  }
  return markers;
}

async function theInsight(req: Req): Promise<any> {
  const res = await req('GET', '/v1/insights');
  expect(res.status).toBe(200);
  expect(res.body).toHaveLength(1);
  return res.body[0];
}

/** Polls until no file under the data dir holds any needle, or the erasure deadline passes. */
async function expectErasedWithin(needles: string[], since: number): Promise<void> {
  let holding: string[] = [];
  const left = since + ERASE_WITHIN_S * 1000 - Date.now();
  const find = (): string[] =>
    (holding = needles.flatMap((n) => filesContaining(t.dataDir, n).map((f) => `${n} in ${f}`)));
  await until(() => find().length === 0, {
    what: 'forgotten content to leave every file',
    deadlineMs: Math.max(0, left),
    everyMs: 50,
  }).catch(() => undefined);
  expect(holding, `still on disk ${Date.now() - since} ms after the forget`).toEqual([]);
}

describe('forgetting the sources of an insight (defect 2)', () => {
  it('the insight is rewritten without the forgotten text, everywhere, and removed with its last source', async () => {
    const { req } = await freshWorkspace();
    const markers = await writeGarden(req);
    expect((await req('POST', '/v1/reflect', {})).status).toBe(200);
    const before = await theInsight(req);
    const quoted = [...markers].filter(([, m]) => before.content.includes(m));
    expect(quoted.length).toBeGreaterThan(0);
    // Acknowledged, so on disk now: the insight quotes the markers.
    expect(filesContaining(t.dataDir, quoted[0]?.[1] as string).length).toBeGreaterThan(0);

    const since = Date.now();
    const forgotten = quoted.map(([id]) => id);
    const res = await req('POST', '/v1/forget', { memory_ids: forgotten });
    expect(res.body).toMatchObject({ forgotten_count: forgotten.length });
    const gone = quoted.map(([, m]) => m);

    const after = await theInsight(req);
    expect(after.memory_id).toBe(before.memory_id);
    expect(after.source_memory_ids.sort()).toEqual(
      [...markers.keys()].filter((id) => !forgotten.includes(id)).sort(),
    );
    for (const m of gone) expect(after.content).not.toContain(m);
    expect(after.context.source_count).toBe(markers.size - forgotten.length);
    // It now quotes what remains.
    expect(
      [...markers].some(([id, m]) => !forgotten.includes(id) && after.content.includes(m)),
    ).toBe(true);
    // Recall and the full listing do not serve the forgotten text either.
    const recall = await req('POST', '/v1/recall', {
      cue: `garden tomato ${gone.join(' ')}`,
      strategies: ['similarity'],
      top_k: 50,
    });
    expect(recall.status, recall.text).toBe(200);
    for (const m of gone) expect(recall.text).not.toContain(m);
    const listed = await req('GET', '/v1/memories?include_superseded=true&limit=1000');
    for (const m of gone) expect(listed.text).not.toContain(m);
    await expectErasedWithin(gone, since);

    // Forgetting every remaining source removes the insight.
    const rest = [...markers.keys()].filter((id) => !forgotten.includes(id));
    const last = await req('POST', '/v1/forget', { memory_ids: rest });
    expect(last.body).toMatchObject({
      forgotten_count: rest.length,
      cascade_count: 1,
      tombstone_count: rest.length + 1,
    });
    expect((await req('GET', '/v1/insights')).body).toEqual([]);
    expect((await req('GET', `/v1/memories/${before.memory_id}`)).status).toBe(404);
    await expectErasedWithin([...markers.values()], Date.now());
  });

  it('the rewrite survives a restart (it is logged with the forget)', async () => {
    const { req } = await freshWorkspace();
    const markers = await writeGarden(req);
    await req('POST', '/v1/reflect', {});
    const before = await theInsight(req);
    const quoted = [...markers].filter(([, m]) => before.content.includes(m));
    await req('POST', '/v1/forget', { memory_ids: quoted.map(([id]) => id) });
    await t.restart();
    const after = await theInsight(req);
    expect(after.memory_id).toBe(before.memory_id);
    for (const [, m] of quoted) expect(after.content).not.toContain(m);
  });
});

describe('forgetting the sources of an insight, then a crash', () => {
  let child: ChildServer | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'flashbulb-forget-crash-'));
  afterAll(async () => {
    await killQuietly(child);
    rmSync(dir, { recursive: true, force: true });
  });

  it('kill -9 right after the forget: the restart still erases the quoted text within the window', async () => {
    ensureBuilt();
    // A long window on the first run, so the crash comes before the erasure snapshot.
    child = await startServer({
      dataDir: dir,
      env: {
        FLASHBULB_EMBEDDER: 'hash',
        FLASHBULB_ERASE_WITHIN_S: '600',
        FLASHBULB_REFLECT_ENABLED: 'false',
      },
    });
    const markers = new Map<string, string>();
    for (const text of GARDEN) {
      const marker = `mark${randomBytes(6).toString('hex')}`;
      const res = await http(child.base, 'POST', '/v1/memories', { content: `${text} ${marker}` });
      markers.set(res.body.memory_id, marker);
    }
    expect((await http(child.base, 'POST', '/v1/reflect', {})).status).toBe(200);
    const [insight] = (await http(child.base, 'GET', '/v1/insights')).body;
    const quoted = [...markers].filter(([, m]) => insight.content.includes(m));
    expect(quoted.length).toBeGreaterThan(0);
    const forgot = await http(child.base, 'POST', '/v1/forget', {
      memory_ids: quoted.map(([id]) => id),
    });
    expect(forgot.body.forgotten_count).toBe(quoted.length);
    child.proc.kill('SIGKILL');
    await waitExit(child);
    const gone = quoted.map(([, m]) => m);
    expect(
      gone.some((m) => filesContaining(dir, m).length > 0),
      'precondition: the crash came before erasure',
    ).toBe(true);

    child = await startServer({
      dataDir: dir,
      env: {
        FLASHBULB_EMBEDDER: 'hash',
        FLASHBULB_ERASE_WITHIN_S: String(ERASE_WITHIN_S),
        FLASHBULB_REFLECT_ENABLED: 'false',
      },
    });
    const since = Date.now();
    const [after] = (await http(child.base, 'GET', '/v1/insights')).body;
    expect(after.memory_id).toBe(insight.memory_id);
    for (const m of gone) expect(after.content).not.toContain(m);
    let holding = gone.filter((m) => filesContaining(dir, m).length > 0);
    const left = since + ERASE_WITHIN_S * 1000 - Date.now();
    await until(
      () => (holding = gone.filter((m) => filesContaining(dir, m).length > 0)).length === 0,
      { what: 'forgotten text to leave every file', deadlineMs: Math.max(0, left), everyMs: 50 },
    ).catch(() => undefined);
    expect(holding, 'forgotten text still on disk after the restart').toEqual([]);
  });
});

describe('reflection racing a forget (defect 4)', () => {
  it('an insight whose sources partly vanished is written from the rest; one with none left is skipped', async () => {
    const { slug, req } = await freshWorkspace();
    const markers = await writeGarden(req);
    const ids = [...markers.keys()];
    const vanished = ids.slice(0, 3);
    await req('POST', '/v1/forget', { memory_ids: vanished });
    const dim = t.app.svc.embedder.dim;
    const draft = (sources: string[]): any => ({
      content: `quotes ${vanished.map((id) => markers.get(id)).join(' ')}`,
      embedding: new Float32Array(dim).fill(1 / Math.sqrt(dim)),
      sources,
      confidence: 0.8,
      importance: 0.5,
      entityId: null,
      context: { source_count: sources.length },
      refreshId: null,
    });
    // What the reflection engine sends after gathering before the forget.
    const written = await t.app.svc.shards.call(slug, 'writeInsights', {
      insights: [draft(ids), draft(vanished)],
    });
    expect(written.created).toHaveLength(1);
    const insight = await theInsight(req);
    expect(insight.source_memory_ids.sort()).toEqual(ids.slice(3).sort());
    for (const id of vanished) expect(insight.content).not.toContain(markers.get(id));
    expect(insight.context.source_count).toBe(ids.length - 3);
  });

  it('POST /v1/reflect under concurrent forgets never answers 400', async () => {
    const { req } = await freshWorkspace();
    const markers = await writeGarden(req);
    const ids = [...markers.keys()];
    const runs = await Promise.all([
      req('POST', '/v1/reflect', {}),
      req('POST', '/v1/forget', { memory_ids: ids.slice(0, 4) }),
      req('POST', '/v1/reflect', {}),
    ]);
    for (const r of runs) expect(r.status, r.text).toBe(200);
  });
});
