/**
 * Hybrid similarity (issue 18) over real sockets: the lexical index finds exact names, numbers and
 * rare words where the dense ranking alone misses them (hash embedder here; the real model in
 * model-hybrid.test.ts); `similarity_mode` selects dense (cosine order, as before) or lexical;
 * forgotten and revised text leaves the lexical index; a cue that names a date prefers memories
 * that name it (creation times: test/unit/hybrid-similarity.test.ts); and after kill -9 the
 * recovered index answers exactly as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashEmbedder } from '../../src/embedding/hash-embedder.ts';
import { ensureBuilt, http, killQuietly, startServer, type ChildServer } from '../helpers/child.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let n = 0;
const ONLY_RELEVANCE = { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 };

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

async function workspace(): Promise<string> {
  const slug = `hy${++n}`;
  expect((await t.req('POST', '/v1/workspaces', { body: { slug } })).status).toBe(201);
  return slug;
}

async function put(
  ws: string,
  content: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await t.req('POST', `/v1/workspaces/${ws}/memories`, { body: { content, ...extra } });
  expect(res.status, res.text).toBe(201);
  return res.body.memory_id as string;
}

async function recall(ws: string, body: Record<string, unknown>): Promise<any[]> {
  const res = await t.req('POST', `/v1/workspaces/${ws}/recall`, {
    body: { strategies: ['similarity'], ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.results;
}

const contents = (results: any[]): string[] => results.map((r) => r.memory.content);

/**
 * Each case: a cue, the one memory that answers it (it shares only a name, a number or a rare
 * word with the cue), and distractors that share the cue's everyday wording.
 */
const CASES: ReadonlyArray<{ cue: string; target: string; distractors: string[] }> = [
  {
    cue: 'what did Anneliese cook?',
    target: 'Anneliese made a lentil stew',
    distractors: [
      'what did the kids cook',
      'cook dinner at seven',
      'the cook left early',
      'what should we cook',
    ],
  },
  {
    cue: 'when is the call with Okonkwo?',
    target: 'Okonkwo moved our meeting to friday',
    distractors: [
      'call the plumber about the leak',
      'is the call recorded',
      'the call dropped twice',
      'when the call ends, send notes',
    ],
  },
  {
    cue: 'code for locker 4417?',
    target: 'locker 4417 opens with 9-3-1-7',
    distractors: [
      'the code for the gate',
      'locker room is closed',
      'code review at noon',
      'the door code changed',
    ],
  },
  {
    cue: 'where did I put the theodolite?',
    target: 'the theodolite is in the shed',
    distractors: [
      'where did I put my keys',
      'I put the mug in the sink',
      'where is the car parked',
      'did I put it away',
    ],
  },
];

describe('hybrid similarity finds exact names, numbers and rare words (hash embedder)', () => {
  it('the target is first in hybrid and in lexical mode, where the dense ranking alone misses it', async () => {
    let denseMisses = 0;
    for (const c of CASES) {
      const ws = await workspace();
      for (const d of c.distractors) await put(ws, d);
      await put(ws, c.target);
      const hybrid = await recall(ws, { cue: c.cue, top_k: 3 });
      expect(contents(hybrid)[0], c.cue).toBe(c.target);
      expect(
        contents(await recall(ws, { cue: c.cue, top_k: 3, similarity_mode: 'lexical' }))[0],
        c.cue,
      ).toBe(c.target);
      // Relevance alone: the recalls above reinforced the target (a recall accesses its first result).
      const dense = await recall(ws, {
        cue: c.cue,
        top_k: 3,
        similarity_mode: 'dense',
        scoring_weights: ONLY_RELEVANCE,
      });
      if (contents(dense)[0] !== c.target) denseMisses += 1;
    }
    // The distractors share the cue's everyday words, which the hash embedder weighs as much as the
    // rare one: the dense ranking alone puts a distractor first in all but the locker case.
    expect(denseMisses).toBeGreaterThanOrEqual(CASES.length - 1);
  });

  it('similarity details carry relevance, cosine and lexical; relevance and score are in [0, 1]', async () => {
    const ws = await workspace();
    await put(ws, 'Anneliese booked the ferry');
    await put(ws, 'the ferry was late');
    const [top] = await recall(ws, {
      cue: 'Anneliese booked the ferry',
      scoring_weights: ONLY_RELEVANCE,
    });
    const d = top.strategy_details[0];
    expect(Object.keys(d).sort()).toEqual([
      'cosine',
      'distance',
      'lexical',
      'relevance',
      'strategy',
    ]);
    expect(d.cosine).toBeCloseTo(1, 5);
    expect(d.lexical).toBeCloseTo(1, 9);
    // A memory that repeats the cue: match 1, lifted by its neighbour's match (the neighbourhood
    // weighs 0.4 of 1.4), so between 1/1.4 and 1.
    expect(top.relevance).toBeGreaterThanOrEqual(1 / 1.4 - 1e-9);
    expect(top.relevance).toBeLessThan(1);
    expect(top.score).toBeCloseTo(top.relevance, 9);
    expect(d.distance).toBeCloseTo(1 - d.relevance, 9);
    // Written on its own (no neighbour), a memory that repeats the cue has relevance 1.
    const alone = await workspace();
    await put(alone, 'Anneliese booked the ferry');
    const [only] = await recall(alone, {
      cue: 'Anneliese booked the ferry',
      scoring_weights: ONLY_RELEVANCE,
    });
    expect(only.relevance).toBeCloseTo(1, 5);
  });
});

describe('similarity_mode', () => {
  it('dense orders by cosine, exactly as before the lexical index (brute force with the same embedder)', async () => {
    const ws = await workspace();
    const texts = [
      'red apples in a basket',
      'a basket of green pears',
      'apples and pears at the market',
      'the market opens at nine',
      'nine red balloons',
    ];
    for (const x of texts) await put(ws, x);
    const cue = 'red apples at the market';
    const hash = createHashEmbedder(384);
    const vec = async (s: string): Promise<Float32Array> => hash.embed([s]);
    const q = await vec(cue);
    const cos = async (s: string): Promise<number> => {
      const v = await vec(s);
      let dot = 0;
      for (let i = 0; i < v.length; i++) dot += (v[i] ?? 0) * (q[i] ?? 0);
      return Math.max(0, Math.min(1, dot));
    };
    const expected = (await Promise.all(texts.map(async (x) => [x, await cos(x)] as const))).sort(
      (a, b) => b[1] - a[1],
    );
    const got = await recall(ws, {
      cue,
      similarity_mode: 'dense',
      top_k: 5,
      scoring_weights: ONLY_RELEVANCE,
    });
    expect(contents(got)).toEqual(expected.map(([x]) => x));
    got.forEach((r, i) => {
      expect(r.relevance).toBeCloseTo(expected[i]?.[1] ?? -1, 5);
    });
  });

  it('lexical finds nothing for a cue with no word in common; hybrid still answers by meaning', async () => {
    const ws = await workspace();
    await put(ws, 'the kettle whistles');
    expect(await recall(ws, { cue: 'zygomorphic', similarity_mode: 'lexical' })).toEqual([]);
    expect(await recall(ws, { cue: 'zygomorphic' })).toHaveLength(1);
  });

  it('an unknown mode is a 400 that names the allowed values', async () => {
    const ws = await workspace();
    const res = await t.req('POST', `/v1/workspaces/${ws}/recall`, {
      body: { cue: 'x', strategies: ['similarity'], similarity_mode: 'fuzzy' },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/similarity_mode/);
    expect(res.body.message).toMatch(/hybrid/);
  });
});

describe('the lexical index follows every write', () => {
  it('forgotten text is not found lexically; revised text is found by its new words only', async () => {
    const ws = await workspace();
    const secret = await put(ws, 'the vault passphrase is swordfish-7731');
    const other = await put(ws, 'the vault is in the basement');
    expect(
      contents(await recall(ws, { cue: 'swordfish 7731', similarity_mode: 'lexical' })),
    ).toEqual(['the vault passphrase is swordfish-7731']);
    expect(
      (await t.req('POST', `/v1/workspaces/${ws}/forget`, { body: { memory_ids: [secret] } }))
        .status,
    ).toBe(200);
    expect(await recall(ws, { cue: 'swordfish 7731', similarity_mode: 'lexical' })).toEqual([]);
    const revised = await t.req('PUT', `/v1/workspaces/${ws}/revise/${other}`, {
      body: { content: 'the safe moved to the attic' },
    });
    expect(revised.status, revised.text).toBe(200);
    expect(await recall(ws, { cue: 'basement', similarity_mode: 'lexical' })).toEqual([]);
    expect(contents(await recall(ws, { cue: 'attic', similarity_mode: 'lexical' }))).toEqual([
      'the safe moved to the attic',
    ]);
  });

  it('entity_id scopes the lexical candidates too', async () => {
    const ws = await workspace();
    await put(ws, 'Marguerite likes sailing', { entity_id: 'a' });
    await put(ws, 'Marguerite likes climbing', { entity_id: 'b' });
    expect(
      contents(await recall(ws, { cue: 'Marguerite', entity_id: 'b', similarity_mode: 'lexical' })),
    ).toEqual(['Marguerite likes climbing']);
    expect(contents(await recall(ws, { cue: 'Marguerite', entity_id: 'b' }))).toEqual([
      'Marguerite likes climbing',
    ]);
  });

  it('deleting a workspace drops its index: a new workspace of the same name finds nothing', async () => {
    const ws = await workspace();
    await put(ws, 'a memory about pelicans');
    expect((await t.req('DELETE', `/v1/workspaces/${ws}`)).status).toBeLessThan(300);
    expect((await t.req('POST', '/v1/workspaces', { body: { slug: ws } })).status).toBe(201);
    expect(await recall(ws, { cue: 'pelicans', similarity_mode: 'lexical' })).toEqual([]);
  });
});

describe('time-aware cues', () => {
  it('a cue that names a date prefers the memories written about that date', async () => {
    const ws = await workspace();
    await put(ws, '[3 May 2023] we planted tomatoes in the garden');
    await put(ws, '[9 August 2023] we planted tomatoes in the garden again');
    await put(ws, '[2 October 2023] we planted tulips in the garden');
    const may = await recall(ws, { cue: 'what did we plant in the garden in May 2023?', top_k: 3 });
    expect(contents(may)[0]).toBe('[3 May 2023] we planted tomatoes in the garden');
    const august = await recall(ws, {
      cue: 'what did we plant in the garden on August 9, 2023?',
      top_k: 3,
    });
    expect(contents(august)[0]).toBe('[9 August 2023] we planted tomatoes in the garden again');
  });
});

describe('recovery', () => {
  let dataDir: string;
  let child: ChildServer | undefined;
  beforeAll(() => {
    ensureBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-lexical-'));
  });
  afterAll(async () => {
    await killQuietly(child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('after kill -9 the recovered lexical index answers every query exactly as before', async () => {
    // Background reflection would write insights on its own schedule (between the two asks).
    const env = { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' };
    child = await startServer({ dataDir, env });
    const words = [
      'harbour',
      'lantern',
      'orchard',
      'violin',
      'glacier',
      'saffron',
      'meteor',
      'quarry',
    ];
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const text = `note ${i}: ${words[i % 8]} and ${words[(i * 3) % 8]} near the ${words[(i * 5 + 1) % 8]}`;
      const res = await http(child.base, 'POST', '/v1/memories', {
        content: text,
        entity_id: i % 2 === 0 ? 'even' : 'odd',
      });
      expect(res.status).toBe(201);
      ids.push(res.body.memory_id);
    }
    expect(
      (await http(child.base, 'POST', '/v1/forget', { memory_ids: ids.slice(0, 5) })).status,
    ).toBe(200);
    expect(
      (
        await http(child.base, 'PUT', `/v1/revise/${ids[10]}`, {
          content: 'note 10: a comet over the quarry',
        })
      ).status,
    ).toBe(200);
    const queries = [...words, 'comet', 'note 10', 'harbour lantern', 'saffron meteor quarry'];
    const ask = async (): Promise<string[][]> =>
      Promise.all(
        queries.map(async (cue) => {
          const res = await http(child!.base, 'POST', '/v1/recall', {
            cue,
            strategies: ['similarity'],
            similarity_mode: 'lexical',
            top_k: 20,
            scoring_weights: ONLY_RELEVANCE,
          });
          expect(res.status).toBe(200);
          return res.body.results.map(
            (r: any) => `${r.memory.memory_id}:${r.relevance.toFixed(9)}`,
          );
        }),
      );
    const before = await ask();
    expect(before.flat().length).toBeGreaterThan(50);
    child.proc.kill('SIGKILL');
    await child.exited;
    child = await startServer({ dataDir, env });
    expect(await ask()).toEqual(before);
  });
});
