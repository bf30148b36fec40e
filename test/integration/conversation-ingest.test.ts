/**
 * Conversation ingest (issue 49, items 3 and 4): `POST /v1/conversations/{id}/messages` writes
 * messages in order with their speakers and event times, answers with the ids in order, chains
 * them `followed_by` (across calls too), is idempotent by message_id (also after a restart), checks
 * every message before writing any, takes thousands of messages in one call, and gives the same
 * ranking as the same turns written one remember at a time with occurred_at. Also the
 * workspace-scoped form, the MCP tool and a back-filled month read by week.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const MINUTE_US = 60_000_000;
const DAY_US = 86_400_000_000;
const START = Date.UTC(2024, 2, 1, 9) * 1000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.stop());

async function ws(slug: string): Promise<string> {
  expect((await t.req('POST', '/v1/workspaces', { body: { slug } })).status).toBe(201);
  return `/v1/workspaces/${slug}`;
}

interface Msg {
  speaker: string;
  content: string;
  occurred_at?: number;
  message_id?: string;
}

function dialogue(n: number, from = 0): Msg[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      speaker: i % 2 === 0 ? 'Ann' : 'Bo',
      content: `message ${i} about ${['kites', 'tea', 'trains', 'rain'][i % 4]}`,
      occurred_at: START + i * MINUTE_US,
      message_id: `m${i}`,
    };
  });
}

async function ingest(
  base: string,
  conversation: string,
  messages: Msg[],
  extra: Record<string, unknown> = {},
): Promise<{ status: number; body: any; text: string }> {
  return t.req('POST', `${base}/conversations/${encodeURIComponent(conversation)}/messages`, {
    body: { messages, ...extra },
  });
}

async function all(base: string, query = ''): Promise<any[]> {
  const res = await t.req('GET', `${base}/memories?limit=1000${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.memories;
}

describe('conversation ingest', () => {
  it('writes the messages in order with speaker, event time and message id, chained followed_by', async () => {
    const base = await ws('ingest-basic');
    const res = await ingest(base, 'support/42', dialogue(5));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ conversation_id: 'support/42', created: 5, existing: 0 });
    const ids: string[] = res.body.memory_ids;
    expect(ids).toHaveLength(5);
    const stored = await all(base);
    expect(stored.map((m) => m.memory_id)).toEqual(ids);
    expect(stored[1]).toMatchObject({
      speaker: 'Bo',
      content: 'message 1 about tea',
      occurred_at: START + MINUTE_US,
      conversation_id: 'support/42',
      message_id: 'm1',
      kind: 'episode',
    });
    for (let i = 1; i < ids.length; i++) {
      const edges = await t.req('GET', `${base}/memories/${ids[i]}/edges`);
      expect(edges.body.outgoing.map((e: any) => [e.edge_type, e.target_id])).toEqual([
        ['followed_by', ids[i - 1]],
      ]);
    }
    expect((await t.req('GET', `${base}/memories/${ids[0]}/edges`)).body.outgoing).toEqual([]);
    // Forgetting turns in the middle chains the ones that stay over the gap.
    expect(
      (await t.req('POST', `${base}/forget`, { body: { memory_ids: [ids[1], ids[2]] } })).body
        .forgotten_count,
    ).toBe(2);
    const closed = await t.req('GET', `${base}/memories/${ids[3]}/edges`);
    expect(closed.body.outgoing.map((e: any) => [e.edge_type, e.target_id])).toEqual([
      ['followed_by', ids[0]],
    ]);
  });

  it('a retried request stores nothing twice (also after a restart), and appending later keeps the chain', async () => {
    const base = await ws('ingest-retry');
    const first = await ingest(base, 'c', dialogue(4));
    expect(first.status).toBe(201);
    const again = await ingest(base, 'c', dialogue(4));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      created: 0,
      existing: 4,
      memory_ids: first.body.memory_ids,
    });
    await t.restart();
    // A retry that overlaps: two messages held, two new.
    const overlap = await ingest(base, 'c', dialogue(4, 2));
    expect(overlap.status).toBe(201);
    expect(overlap.body).toMatchObject({ created: 2, existing: 2 });
    expect(overlap.body.memory_ids.slice(0, 2)).toEqual(first.body.memory_ids.slice(2));
    const stored = await all(base, '&conversation_id=c');
    expect(stored.map((m) => m.message_id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    const edges = await t.req('GET', `${base}/memories/${overlap.body.memory_ids[2]}/edges`);
    expect(edges.body.outgoing.map((e: any) => e.target_id)).toEqual([first.body.memory_ids[3]]);
    // Messages without an id are written each time they are sent.
    const plain = [{ speaker: 'Ann', content: 'no id' }];
    expect((await ingest(base, 'c', plain)).body.created).toBe(1);
    expect((await ingest(base, 'c', plain)).body.created).toBe(1);
  });

  it('checks every message before writing any: the error names the message and field', async () => {
    const base = await ws('ingest-checks');
    const cases: Array<[unknown, RegExp]> = [
      [[...dialogue(2), { speaker: '', content: 'x' }], /messages\[2\]\.speaker/],
      [[{ speaker: 'A', content: ' ' }], /messages\[0\]\.content/],
      [
        [{ speaker: 'A', content: 'x', occurred_at: Date.now() * 1000 + 3_600_000_000 }],
        /messages\[0\]\.occurred_at .* is in the future/,
      ],
      [[{ speaker: 'A', content: 'x', importance: 2 }], /messages\[0\]\.importance/],
      [
        [
          { speaker: 'A', content: 'x', message_id: 'a' },
          { speaker: 'B', content: 'y', message_id: 'a' },
        ],
        /messages\[1\]\.message_id 'a' is also messages\[0\]/,
      ],
      [[], /^messages must have at least 1 item/],
      [[{ content: 'no speaker' }], /speaker/],
    ];
    for (const [messages, message] of cases) {
      const res = await t.req('POST', `${base}/conversations/c/messages`, { body: { messages } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect(await all(base)).toEqual([]);
    const many = Array.from({ length: 10_001 }, (_, i) => ({ speaker: 'A', content: `m${i}` }));
    const tooMany = await t.req('POST', `${base}/conversations/c/messages`, {
      body: { messages: many },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toMatch(/^messages has 10001 items; the limit is 10000/);
  });

  it('thousands of messages in one call are written in order', async () => {
    const base = await ws('ingest-bulk');
    const messages = dialogue(3000);
    const res = await ingest(base, 'long', messages);
    expect(res.status, res.text).toBe(201);
    expect(res.body.created).toBe(3000);
    const ids: string[] = res.body.memory_ids;
    expect([...ids].sort()).toEqual(ids);
    const page = await t.req('GET', `${base}/memories?conversation_id=long&limit=1000&order=desc`);
    expect(page.body.memories[0].message_id).toBe('m2999');
    const edges = await t.req('GET', `${base}/memories/${ids[2999]}/edges`);
    expect(edges.body.outgoing.map((e: any) => e.target_id)).toEqual([ids[2998]]);
  });

  it('the same turns written live, one remember each with occurred_at, rank the same for every cue', async () => {
    const turns = Array.from({ length: 500 }, (_, i) => ({
      speaker: i % 3 === 0 ? 'Caroline' : 'Melanie',
      content: `${['I went hiking', 'the pottery class', 'my dog Max', 'a trip to Paris', 'the charity race'][i % 5]} ${i % 7 === 0 ? 'was great?' : 'on day'} ${Math.floor(i / 10)}`,
      // Sessions of 25 turns, a day apart.
      occurred_at: START + Math.floor(i / 25) * DAY_US + (i % 25) * 20_000_000,
    }));
    const live = await ws('both-live');
    for (const m of turns)
      expect(
        (await t.req('POST', `${live}/memories`, { body: { ...m, conversation_id: 'chat' } }))
          .status,
      ).toBe(201);
    const batch = await ws('both-batch');
    expect((await ingest(batch, 'chat', turns)).body.created).toBe(500);
    const cues = Array.from(
      { length: 20 },
      (_, i) =>
        `${['hiking', 'pottery', 'Max the dog', 'Paris', 'charity race'][i % 5]} ${['Caroline', 'Melanie', 'day 3', 'was it great', ''][Math.floor(i / 4) % 5]}`,
    );
    const ranked = async (base: string, cue: string): Promise<unknown[]> => {
      const res = await t.req('POST', `${base}/recall`, { body: { cue, top_k: 10 } });
      expect(res.status).toBe(200);
      return res.body.results.map((r: any) => [
        r.memory.content,
        r.memory.occurred_at,
        r.score.toFixed(6),
      ]);
    };
    for (const cue of cues) expect(await ranked(batch, cue), cue).toEqual(await ranked(live, cue));
  });

  it('a back-filled month is read by week: temporal recall and a date cue return the turns of the week asked', async () => {
    const base = await ws('ingest-month');
    // March 2024, four turns a day, ingested today; no turn's text names its day.
    const month = Array.from({ length: 31 * 4 }, (_, i) => ({
      speaker: i % 2 ? 'Ann' : 'Bo',
      content: `turn ${i % 4}: the garden`,
      occurred_at: START + Math.floor(i / 4) * DAY_US + (i % 4) * 3_600_000_000,
    }));
    expect((await ingest(base, 'garden', month)).body.created).toBe(124);
    const dayOf = (r: any): number => new Date(r.memory.occurred_at / 1000).getUTCDate();
    const week = { start_us: Date.UTC(2024, 2, 11) * 1000, end_us: Date.UTC(2024, 2, 18) * 1000 };
    const res = await t.req('POST', `${base}/recall`, {
      body: { cue: 'garden', strategies: [{ strategy: 'temporal', time_range: week, top_k: 100 }] },
    });
    const days = res.body.results.map(dayOf);
    expect(days).toHaveLength(28);
    expect(new Set(days)).toEqual(new Set([11, 12, 13, 14, 15, 16, 17]));
    expect(days[0]).toBe(17);
    // Every turn matches the cue's words alike: the day the cue names decides.
    const cue = await t.req('POST', `${base}/recall`, {
      body: { cue: 'what happened in the garden on 12 March 2024?', top_k: 4 },
    });
    expect(cue.body.results.map(dayOf)).toEqual([12, 12, 12, 12]);
  });

  it("the unscoped form writes to the key's workspace, and the MCP tool add_messages does the same", async () => {
    const res = await ingest('/v1', 'unscoped', dialogue(2));
    expect(res.status).toBe(201);
    const rpc = await t.req('POST', '/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'add_messages',
          arguments: { conversation_id: 'unscoped', messages: dialogue(3) },
        },
      },
    });
    expect(rpc.status, rpc.text).toBe(200);
    const result = rpc.body.result.structuredContent;
    expect(result).toMatchObject({ conversation_id: 'unscoped', created: 1, existing: 2 });
    expect(result.memory_ids.slice(0, 2)).toEqual(res.body.memory_ids);
  });
});
