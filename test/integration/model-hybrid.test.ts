/**
 * Hybrid similarity with the real model (the default, bge-small-en-v1.5): near-miss names, numbers
 * and codes that the dense ranking can confuse (Okonkwo / Okafor, 48213 / 48231) are found first by hybrid,
 * where the lexical index matches the exact token. If hybrid ranking regresses, this fails; the
 * paraphrase suite in model-retrieval.test.ts guards the other side (few shared words).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const MODEL_DIR = DEFAULTS.FLASHBULB_MODEL_DIR;

/** The last memory of each case answers the cue; the others are near misses. */
const CASES: ReadonlyArray<{ cue: string; memories: string[] }> = [
  {
    cue: 'What did Okonkwo prescribe?',
    memories: [
      'Dr. Okafor prescribed antibiotics',
      'Dr. Okoro prescribed an inhaler',
      'Dr. Okonjo prescribed bed rest',
      'Dr. Onwuka prescribed eye drops',
      'Dr. Okonkwo prescribed iron tablets',
    ],
  },
  {
    cue: 'ticket 48213',
    memories: [
      'the support ticket about the printer was closed',
      'what happened with the ticket queue this week',
      'a ticket for the concert costs 40 dollars',
      'ticket 48231 was a duplicate',
      'Ticket 48213: customer reports a login loop after the password reset',
    ],
  },
  {
    cue: 'what is the wifi password at the Lindqvist house?',
    memories: [
      'the wifi password at the office is on the fridge',
      'the Lindgren house wifi is slow',
      'the password for the Lindholm cabin is written on the router',
      'wifi at the library needs a login',
      'Lindqvist house: network Fika, password cardamom42',
    ],
  },
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_EMBEDDER: 'model', FLASHBULB_MODEL_DIR: MODEL_DIR });
});
afterAll(async () => {
  await t?.stop();
});

describe('hybrid similarity with the real model', () => {
  it('finds the exact name, number or code first where the dense ranking alone picks a near miss', async () => {
    let denseMisses = 0;
    for (const [i, c] of CASES.entries()) {
      const slug = `mh${i}`;
      expect((await t.req('POST', '/v1/workspaces', { body: { slug } })).status).toBe(201);
      for (const content of c.memories)
        expect(
          (await t.req('POST', `/v1/workspaces/${slug}/memories`, { body: { content } })).status,
        ).toBe(201);
      const top = async (mode: string): Promise<string> => {
        const res = await t.req('POST', `/v1/workspaces/${slug}/recall`, {
          body: { cue: c.cue, strategies: ['similarity'], similarity_mode: mode, top_k: 3 },
        });
        expect(res.status, res.text).toBe(200);
        return res.body.results[0].memory.content as string;
      };
      expect(await top('hybrid'), c.cue).toBe(c.memories.at(-1));
      if ((await top('dense')) !== c.memories.at(-1)) denseMisses += 1;
    }
    // Measured: the dense ranking puts a near miss first in one of the three with bge-small-en-v1.5
    // (in all three with all-MiniLM-L6-v2), so hybrid is what finds every one.
    expect(denseMisses).toBeGreaterThanOrEqual(1);
  });
});
