/**
 * Contradiction checks after each write and the deprecated candidate flow (DESIGN.md 9; spec 2.8
 * PendingContradictionProto, 3 "Pending contradiction", 4.6): over real sockets, with
 * FLASHBULB_CONTRADICTIONS_ENABLED=true and the hash embedder. The check runs after the write is
 * answered, so results are polled for briefly.
 *
 * - a statement and its negation → `contradicts` edges both ways;
 * - an update ("Bob now lives in Paris" after "Bob lives in Berlin") → `revised_from` newer → older;
 * - an uncertain pair → a pending candidate in POST /v1/contradictions/prepare; committing it with
 *   contradiction / revision / dismiss writes both contradicts edges / one revised_from edge /
 *   nothing, and the counts say so;
 * - an unknown pending id (alone or among known ones), another workspace's id, or an unknown
 *   verdict fails the whole commit and applies nothing.
 *
 * The uncertain pairs disagree on a number about a subject they only half share (score ≈ 0.68,
 * between UNCERTAIN 0.45 and CONFIDENT 0.7), and sit on unrelated topics so they never match each
 * other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIDENT, UNCERTAIN } from '../../src/analysis/contradiction.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until, untilIdle } from '../helpers/wait.ts';

const UNCERTAIN_PAIRS = {
  chess: ['The chess club has 32 members.', 'The chess club has 48 paying adult junior members.'],
  kiln: [
    'The pottery kiln reaches 1200 degrees.',
    'The pottery kiln reaches 1300 degrees during long glaze firing cycles.',
  ],
  lighthouse: [
    'The lighthouse beam reaches 20 miles.',
    'The lighthouse beam reaches 25 miles across calm coastal waters.',
  ],
  orchard: [
    'The orchard yields 300 kilos of apples.',
    'The orchard yields 450 kilos of apples in good sunny autumn seasons.',
  ],
  tram: [
    'The tram line carries 5000 riders.',
    'The tram line carries 8000 riders on busy summer festival weekends.',
  ],
} as const;

type Req = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any; headers: Headers; text: string }>;
interface Ws {
  slug: string;
  key: string;
  req: Req;
}

const ENV = { FLASHBULB_CONTRADICTIONS_ENABLED: 'true' };
let t: TestApp;
let n = 0;

beforeAll(async () => {
  t = await startTestApp({}, ENV);
});
afterAll(async () => {
  await t?.stop();
});

async function freshWorkspace(app: TestApp = t): Promise<Ws> {
  const slug = `contra-${++n}-${Date.now().toString(36)}`;
  const created = await app.req('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.api_key as string;
  return {
    slug,
    key,
    req: (method, path, body) =>
      app.req(method, path, body === undefined ? { key } : { key, body }),
  };
}

async function remember(ws: Ws, content: string): Promise<string> {
  const res = await ws.req('POST', '/v1/memories', { content });
  expect(res.status, res.text).toBe(201);
  return res.body.memory_id as string;
}

async function edgesOf(ws: Ws, id: string): Promise<{ outgoing: any[]; incoming: any[] }> {
  const res = await ws.req('GET', `/v1/memories/${id}/edges`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Polls until `done` holds (or ~20 s pass: the first check of a shard waits for WordNet to load) and returns the last value. */
async function poll<T>(get: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  let last = await get();
  if (done(last)) return last;
  // At the deadline the last value is returned, for the caller's asserts to name.
  await until(async () => done((last = await get())), {
    what: 'the contradiction check',
    deadlineMs: ms,
    everyMs: 50,
  }).catch(() => undefined);
  return last;
}

async function pending(ws: Ws): Promise<any[]> {
  const res = await ws.req('POST', '/v1/contradictions/prepare');
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('deprecation')).toBe('true');
  expect(Array.isArray(res.body)).toBe(true);
  return res.body as any[];
}

const ofType = (edges: any[], type: string): any[] => edges.filter((e) => e.edge_type === type);

/**
 * Waits until the shards have checked everything written so far: their check backlog reads 0 in a
 * report made after the last write (shards report once a second).
 */
async function checksSettled(ms = 15_000): Promise<void> {
  const writtenAt = Date.now();
  const backlog = async (): Promise<number[]> =>
    [
      ...(await t.req('GET', '/v1/metrics')).text.matchAll(
        /^flashbulb_background_backlog\{[^}]*work="contradiction_checks"[^}]*\} (\S+)$/gm,
      ),
    ].map((m) => Number(m[1]));
  const settled = await poll(
    backlog,
    (b) => b.length > 0 && b.every((n) => n === 0) && Date.now() - writtenAt >= 1200,
    ms,
  );
  expect(
    settled.every((n) => n === 0),
    `check backlog ${settled.join(', ')}`,
  ).toBe(true);
}

/** Writes the named uncertain pairs (older first) and waits until each has its candidate. */
async function pendingPairs(
  ws: Ws,
  names: Array<keyof typeof UNCERTAIN_PAIRS>,
): Promise<Map<string, { older: string; newer: string; pending: any }>> {
  const ids = new Map<string, { older: string; newer: string }>();
  for (const name of names) {
    const [a, b] = UNCERTAIN_PAIRS[name];
    const older = await remember(ws, a);
    const newer = await remember(ws, b);
    ids.set(name, { older, newer });
  }
  const candidates = await poll(
    () => pending(ws),
    (c) => c.length >= names.length,
  );
  expect(candidates, JSON.stringify(candidates)).toHaveLength(names.length);
  const out = new Map<string, { older: string; newer: string; pending: any }>();
  for (const [name, { older, newer }] of ids) {
    const p = candidates.find((c) => c.memory_id_a === older && c.memory_id_b === newer);
    expect(p, `no candidate for the ${name} pair: ${JSON.stringify(candidates)}`).toBeDefined();
    out.set(name, { older, newer, pending: p });
  }
  return out;
}

async function commit(
  ws: Ws,
  verdicts: unknown[],
): Promise<{ status: number; body: any; headers: Headers; text: string }> {
  return ws.req('POST', '/v1/contradictions/commit', { verdicts });
}

describe('contradiction checks after a write', () => {
  it('a statement and its negation get contradicts edges both ways', async () => {
    const ws = await freshWorkspace();
    const older = await remember(ws, 'Tom is allergic to peanuts.');
    const newer = await remember(ws, 'Tom is not allergic to peanuts.');
    const fromNewer = await poll(
      () => edgesOf(ws, newer),
      (e) => ofType(e.outgoing, 'contradicts').length > 0,
    );
    expect(ofType(fromNewer.outgoing, 'contradicts').map((e) => e.target_id)).toEqual([older]);
    expect(ofType(fromNewer.incoming, 'contradicts').map((e) => e.source_id)).toEqual([older]);
    const fromOlder = await edgesOf(ws, older);
    const edge = ofType(fromOlder.outgoing, 'contradicts')[0];
    expect(edge).toMatchObject({ source_id: older, target_id: newer, edge_type: 'contradicts' });
    // The edge names the rule that fired, both ways.
    expect(edge.reason).toMatch(/^negation scope: /);
    expect(ofType(fromNewer.outgoing, 'contradicts')[0].reason).toBe(edge.reason);
    expect(edge.confidence).toBeGreaterThanOrEqual(CONFIDENT);
    expect(edge.confidence).toBeLessThanOrEqual(1);
    expect(ofType(fromOlder.outgoing, 'revised_from')).toEqual([]);
    // A confident finding is not left pending.
    expect(await pending(ws)).toEqual([]);
  });

  it("export → import keeps a contradicts edge's reason", async () => {
    const ws = await freshWorkspace();
    const older = await remember(ws, 'The harbour ferry runs on Sundays.');
    const newer = await remember(ws, 'The harbour ferry does not run on Sundays.');
    const made = await poll(
      () => edgesOf(ws, newer),
      (e) => ofType(e.outgoing, 'contradicts').length > 0,
    );
    const reason = ofType(made.outgoing, 'contradicts')[0].reason as string;
    expect(reason).toMatch(/^negation scope: /);
    const exported = await t.req('GET', `/v1/workspaces/${ws.slug}/export?embeddings=true`);
    expect(exported.status, exported.text).toBe(200);
    const copy = await freshWorkspace();
    const imported = await t.req('POST', `/v1/workspaces/${copy.slug}/import`, {
      raw: exported.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.status, imported.text).toBe(200);
    const copied = ofType((await edgesOf(copy, newer)).outgoing, 'contradicts');
    expect(copied.map((e) => [e.target_id, e.reason])).toEqual([[older, reason]]);
  });

  it('an update gets one revised_from edge, newer → older, and no contradicts edges', async () => {
    const ws = await freshWorkspace();
    const older = await remember(ws, 'Bob lives in Berlin.');
    const newer = await remember(ws, 'Bob now lives in Paris.');
    const e = await poll(
      () => edgesOf(ws, newer),
      (x) => ofType(x.outgoing, 'revised_from').length > 0,
    );
    expect(ofType(e.outgoing, 'revised_from')).toHaveLength(1);
    expect(ofType(e.outgoing, 'revised_from')[0]).toMatchObject({
      source_id: newer,
      target_id: older,
    });
    expect(ofType(e.outgoing, 'revised_from')[0].confidence).toBeGreaterThanOrEqual(CONFIDENT);
    expect(ofType(e.outgoing, 'contradicts')).toEqual([]);
    const o = await edgesOf(ws, older);
    expect(ofType(o.outgoing, 'revised_from')).toEqual([]);
    expect(ofType(o.incoming, 'revised_from').map((x) => x.source_id)).toEqual([newer]);
    expect(ofType(o.outgoing, 'contradicts')).toEqual([]);
    // Both stay live episodes: the edge records the update, it does not revise the memory.
    expect((await ws.req('GET', `/v1/memories/${older}`)).body.kind).toBe('episode');
  });

  it('unrelated statements and compatible ones get no edges', async () => {
    const ws = await freshWorkspace();
    const a = await remember(ws, 'Tom is allergic to peanuts.');
    const b = await remember(ws, 'Tom is allergic to peanuts and to shellfish.');
    const c = await remember(ws, 'The museum opens at nine on weekdays.');
    await checksSettled();
    for (const id of [a, b, c]) {
      const e = await edgesOf(ws, id);
      expect(
        [...e.outgoing, ...e.incoming].filter(
          (x) => x.edge_type === 'contradicts' || x.edge_type === 'revised_from',
        ),
      ).toEqual([]);
    }
    expect(await pending(ws)).toEqual([]);
  });

  it('findings are counted in flashbulb_contradictions_found_total', async () => {
    const value = async (): Promise<number> =>
      Number(
        /^flashbulb_contradictions_found_total (\S+)$/m.exec(
          (await t.req('GET', '/v1/metrics')).text,
        )?.[1] ?? 'NaN',
      );
    const before = await value();
    expect(Number.isFinite(before)).toBe(true);
    const ws = await freshWorkspace();
    await remember(ws, 'The harbour ferry is running today.');
    await remember(ws, 'The harbour ferry is not running today.');
    const after = await poll(value, (v) => v > before);
    expect(after).toBeGreaterThan(before);
  });
});

describe('pending candidates (POST /v1/contradictions/prepare)', () => {
  it('an uncertain pair becomes a candidate with the PendingContradictionProto fields, and no edge yet', async () => {
    const ws = await freshWorkspace();
    const pairs = await pendingPairs(ws, ['chess']);
    const {
      older,
      newer,
      pending: p,
    } = pairs.get('chess') as { older: string; newer: string; pending: any };
    expect(p.pending_id).toMatch(/^[0-9a-f]{32}$/);
    expect(p.memory_id_a).toBe(older);
    expect(p.memory_id_b).toBe(newer);
    expect(p.content_a_snippet).toBe(UNCERTAIN_PAIRS.chess[0]);
    expect(p.content_b_snippet).toBe(UNCERTAIN_PAIRS.chess[1]);
    expect(p.classifier_score).toBeGreaterThanOrEqual(UNCERTAIN);
    expect(p.classifier_score).toBeLessThan(CONFIDENT);
    expect(p.classifier_method).toBe('heuristic');
    expect(p.reason).toMatch(/^numbers: the statements disagree on 32 versus 48/);
    expect(p.similarity).toBeGreaterThan(0.5);
    expect(p.similarity).toBeLessThanOrEqual(1);
    expect(Number.isInteger(p.created_at)).toBe(true);
    expect(p.created_at).toBeGreaterThan(1e15);
    for (const id of [older, newer]) {
      const e = await edgesOf(ws, id);
      expect(
        [...e.outgoing, ...e.incoming].filter(
          (x) => x.edge_type === 'contradicts' || x.edge_type === 'revised_from',
        ),
      ).toEqual([]);
    }
    // Asking again lists the same candidate once; prepare changes nothing.
    expect((await pending(ws)).map((c) => c.pending_id)).toEqual([p.pending_id]);
  });

  it('answers an empty array when nothing is pending; accepts the workspace prefix', async () => {
    const ws = await freshWorkspace();
    expect(await pending(ws)).toEqual([]);
    const viaPrefix = await t.req('POST', `/v1/workspaces/${ws.slug}/contradictions/prepare`);
    expect(viaPrefix.status, viaPrefix.text).toBe(200);
    expect(viaPrefix.body).toEqual([]);
  });
});

describe('POST /v1/contradictions/commit', () => {
  it('applies each verdict: contradiction → contradicts both ways, revision → revised_from, dismiss → removed without an edge', async () => {
    const ws = await freshWorkspace();
    const pairs = await pendingPairs(ws, ['chess', 'kiln', 'lighthouse']);
    const chess = pairs.get('chess') as { older: string; newer: string; pending: any };
    const kiln = pairs.get('kiln') as { older: string; newer: string; pending: any };
    const light = pairs.get('lighthouse') as { older: string; newer: string; pending: any };
    const res = await commit(ws, [
      {
        pending_id: chess.pending.pending_id,
        verdict: 'contradiction',
        confidence: 0.9,
        reasoning: 'both cannot be true',
      },
      { pending_id: kiln.pending.pending_id, verdict: 'revision', confidence: 0.8 },
      { pending_id: light.pending.pending_id, verdict: 'dismiss', confidence: 0.95 },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('deprecation')).toBe('true');
    expect(res.body).toEqual({ contradictions_confirmed: 1, revisions_created: 1, dismissed: 1 });

    const c = await edgesOf(ws, chess.newer);
    expect(ofType(c.outgoing, 'contradicts').map((e) => e.target_id)).toEqual([chess.older]);
    expect(ofType(c.incoming, 'contradicts').map((e) => e.source_id)).toEqual([chess.older]);
    expect(ofType(c.outgoing, 'contradicts')[0].confidence).toBeCloseTo(0.9, 5);
    // A confirmed candidate's edge says so and keeps the rule that proposed it.
    expect(ofType(c.outgoing, 'contradicts')[0].reason).toBe(
      `confirmed by a verdict (${chess.pending.reason})`,
    );

    const k = await edgesOf(ws, kiln.newer);
    expect(ofType(k.outgoing, 'revised_from').map((e) => e.target_id)).toEqual([kiln.older]);
    expect(ofType(k.outgoing, 'revised_from')[0].confidence).toBeCloseTo(0.8, 5);
    expect(ofType([...k.outgoing, ...k.incoming], 'contradicts')).toEqual([]);
    expect(ofType((await edgesOf(ws, kiln.older)).outgoing, 'revised_from')).toEqual([]);

    for (const id of [light.older, light.newer]) {
      const e = await edgesOf(ws, id);
      expect(
        [...e.outgoing, ...e.incoming].filter(
          (x) => x.edge_type === 'contradicts' || x.edge_type === 'revised_from',
        ),
      ).toEqual([]);
    }
    // Resolved candidates are gone, and a second commit of them is a 404.
    expect(await pending(ws)).toEqual([]);
    const again = await commit(ws, [
      { pending_id: light.pending.pending_id, verdict: 'dismiss', confidence: 1 },
    ]);
    expect(again.status).toBe(404);
  });

  it('accepts verdicts case-insensitively and an upper-case pending id', async () => {
    const ws = await freshWorkspace();
    const p = (await pendingPairs(ws, ['orchard'])).get('orchard') as {
      older: string;
      newer: string;
      pending: any;
    };
    const res = await commit(ws, [
      { pending_id: p.pending.pending_id.toUpperCase(), verdict: 'Contradiction', confidence: 0.7 },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ contradictions_confirmed: 1, revisions_created: 0, dismissed: 0 });
  });

  it('an unknown pending id fails the whole commit (404) and applies nothing', async () => {
    const ws = await freshWorkspace();
    const pairs = await pendingPairs(ws, ['chess', 'tram']);
    const chess = pairs.get('chess') as { older: string; newer: string; pending: any };
    const tram = pairs.get('tram') as { older: string; newer: string; pending: any };
    const unknown = `${'0'.repeat(31)}1`;
    const alone = await commit(ws, [{ pending_id: unknown, verdict: 'dismiss', confidence: 0.5 }]);
    expect(alone.status, alone.text).toBe(404);
    expect(alone.body.error_code).toBe('not_found');
    expect(alone.body.message).toContain(unknown);
    const mixed = await commit(ws, [
      { pending_id: chess.pending.pending_id, verdict: 'contradiction', confidence: 0.9 },
      { pending_id: unknown, verdict: 'revision', confidence: 0.9 },
      { pending_id: tram.pending.pending_id, verdict: 'dismiss', confidence: 0.9 },
    ]);
    expect(mixed.status, mixed.text).toBe(404);
    expect(mixed.body.message).toContain(unknown);
    expect(mixed.body.message).not.toContain(chess.pending.pending_id);
    // Nothing applied: both candidates still pending, no edges.
    expect((await pending(ws)).map((p) => p.pending_id).sort()).toEqual(
      [chess.pending.pending_id, tram.pending.pending_id].sort(),
    );
    expect(ofType((await edgesOf(ws, chess.newer)).outgoing, 'contradicts')).toEqual([]);
    // The known ones alone go through.
    const ok = await commit(ws, [
      { pending_id: chess.pending.pending_id, verdict: 'contradiction', confidence: 0.9 },
    ]);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.contradictions_confirmed).toBe(1);
  });

  it('an unknown verdict is a 400 and applies nothing', async () => {
    const ws = await freshWorkspace();
    const p = (await pendingPairs(ws, ['kiln'])).get('kiln') as {
      older: string;
      newer: string;
      pending: any;
    };
    for (const verdict of ['maybe', '', 'contradicts']) {
      const res = await commit(ws, [
        { pending_id: p.pending.pending_id, verdict, confidence: 0.9 },
      ]);
      expect(res.status, `verdict '${verdict}': ${res.text}`).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
    expect((await pending(ws)).map((c) => c.pending_id)).toEqual([p.pending.pending_id]);
  });

  it('rejects malformed bodies and ids with 400', async () => {
    const ws = await freshWorkspace();
    for (const body of [
      {},
      { verdicts: {} },
      { verdicts: [{ verdict: 'dismiss', confidence: 1 }] },
      { verdicts: [{ pending_id: 'f'.repeat(32), verdict: 'dismiss' }] },
    ]) {
      const res = await ws.req('POST', '/v1/contradictions/commit', body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
    }
    for (const v of [
      { pending_id: 'xyz', verdict: 'dismiss', confidence: 1 },
      { pending_id: 'f'.repeat(32), verdict: 'dismiss', confidence: 1.5 },
    ]) {
      const res = await commit(ws, [v]);
      expect(res.status, `${JSON.stringify(v)}: ${res.text}`).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
    }
  });

  it('candidates belong to their workspace: another workspace neither sees nor commits them', async () => {
    const a = await freshWorkspace();
    const b = await freshWorkspace();
    const p = (await pendingPairs(a, ['lighthouse'])).get('lighthouse') as {
      older: string;
      newer: string;
      pending: any;
    };
    expect(await pending(b)).toEqual([]);
    const fromB = await commit(b, [
      { pending_id: p.pending.pending_id, verdict: 'contradiction', confidence: 0.9 },
    ]);
    expect(fromB.status, fromB.text).toBe(404);
    const viaPrefix = await t.req('POST', `/v1/workspaces/${b.slug}/contradictions/commit`, {
      body: {
        verdicts: [{ pending_id: p.pending.pending_id, verdict: 'contradiction', confidence: 0.9 }],
      },
    });
    expect(viaPrefix.status, viaPrefix.text).toBe(404);
    expect((await pending(a)).map((c) => c.pending_id)).toEqual([p.pending.pending_id]);
    expect(ofType((await edgesOf(a, p.newer)).outgoing, 'contradicts')).toEqual([]);
  });
});

describe('with FLASHBULB_CONTRADICTIONS_ENABLED=false', () => {
  it('nothing is checked: no edges, no candidates', async () => {
    const off = await startTestApp({}, { FLASHBULB_CONTRADICTIONS_ENABLED: 'false' });
    try {
      const ws = await freshWorkspace(off);
      const older = await remember(ws, 'Tom is allergic to peanuts.');
      const newer = await remember(ws, 'Tom is not allergic to peanuts.');
      await remember(ws, UNCERTAIN_PAIRS.chess[0]);
      await remember(ws, UNCERTAIN_PAIRS.chess[1]);
      // Nothing would be checked any more: the shards' background backlog reads 0 in two reports.
      await untilIdle(async () => (await off.req('GET', '/v1/metrics')).text);
      for (const id of [older, newer]) {
        const e = await edgesOf(ws, id);
        expect([...e.outgoing, ...e.incoming]).toEqual([]);
      }
      expect(await pending(ws)).toEqual([]);
    } finally {
      await off.stop();
    }
  });
});
