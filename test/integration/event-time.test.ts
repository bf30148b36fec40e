/**
 * Event time, speakers and conversations on a write (issue 49, items 1 and 2), over REST and gRPC:
 * `occurred_at` is carried and read by temporal recall, time ranges, recency, date cues, prime's
 * recent half and reflection's window, while `created_at` stays the write time; a time far in the
 * future is refused, a little ahead is written as now; `speaker` and `conversation_id` filter
 * list and recall; a conversation's turns are chained `followed_by` in event order, a turn
 * back-filled between two spliced in; export and import keep the fields; gRPC's IngestMessages
 * writes a conversation as REST ingest does.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, failsWith, hex, struct, type GrpcClient } from '../helpers/grpc.ts';

const DAY_US = 86_400_000_000;
const MAY_8_2023 = Date.UTC(2023, 4, 8, 13, 56) * 1000;
const nowUs = (): number => Date.now() * 1000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.stop());

async function ws(slug: string): Promise<string> {
  expect((await t.req('POST', '/v1/workspaces', { body: { slug } })).status).toBe(201);
  return `/v1/workspaces/${slug}`;
}

async function remember(base: string, body: Record<string, unknown>): Promise<any> {
  const res = await t.req('POST', `${base}/memories`, { body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('occurred_at', () => {
  it('is carried beside created_at, which stays the write time; absent, it is the write time', async () => {
    const base = await ws('event-fields');
    const before = nowUs();
    const old = await remember(base, {
      content: 'we adopted a cat',
      occurred_at: MAY_8_2023,
      speaker: 'Caroline',
      conversation_id: 'chat-1',
    });
    expect(old).toMatchObject({
      occurred_at: MAY_8_2023,
      speaker: 'Caroline',
      conversation_id: 'chat-1',
      message_id: null,
    });
    expect(old.created_at).toBeGreaterThanOrEqual(before);
    const iso = await remember(base, {
      content: 'the same, as ISO 8601',
      occurred_at: '2023-05-08T15:56:00+02:00',
    });
    expect(iso).toMatchObject({
      occurred_at: MAY_8_2023,
      occurred_at_iso: '2023-05-08T13:56:00.000000Z',
    });
    const plain = await remember(base, { content: 'a plain note' });
    expect(plain).toMatchObject({ speaker: null, conversation_id: null, message_id: null });
    expect(plain.occurred_at).toBe(plain.created_at);
    // List order (and cursors) stay by id, that is by write time: the old event is listed first because it was written first.
    const list = await t.req('GET', `${base}/memories`);
    expect(list.body.memories.map((m: any) => m.content)).toEqual([
      'we adopted a cat',
      'the same, as ISO 8601',
      'a plain note',
    ]);
  });

  it('more than 5 minutes ahead is refused naming the field; less is written as now', async () => {
    const base = await ws('event-future');
    const far = await t.req('POST', `${base}/memories`, {
      body: { content: 'from the future', occurred_at: nowUs() + 10 * 60_000_000 },
    });
    expect(far.status).toBe(400);
    expect(far.body.message).toMatch(/occurred_at .* is in the future/);
    const near = await remember(base, {
      content: 'a clock a little fast',
      occurred_at: nowUs() + 60_000_000,
    });
    expect(near.occurred_at).toBe(near.created_at);
    for (const occurred_at of [-5, '2023-05-08T13:56:00', 'yesterday']) {
      const bad = await t.req('POST', `${base}/memories`, { body: { content: 'x', occurred_at } });
      expect(bad.status, String(occurred_at)).toBe(400);
      expect(bad.body.message).toMatch(/occurred_at/);
    }
  });

  it('orders temporal recall and bounds its time_range', async () => {
    const base = await ws('event-temporal');
    // Written newest event first: creation order is the reverse of event order.
    for (const [content, day] of [
      ['third', 3],
      ['first', 1],
      ['second', 2],
    ] as const)
      await remember(base, { content, occurred_at: MAY_8_2023 + day * DAY_US });
    const all = await t.req('POST', `${base}/recall`, {
      body: { cue: 'x', strategies: ['temporal'] },
    });
    expect(all.body.results.map((r: any) => r.memory.content)).toEqual([
      'third',
      'second',
      'first',
    ]);
    expect(all.body.results[0].strategy_details[0].timestamp).toBe(MAY_8_2023 + 3 * DAY_US);
    const range = await t.req('POST', `${base}/recall`, {
      body: {
        cue: 'x',
        strategies: [
          {
            strategy: 'temporal',
            time_range: { start_us: MAY_8_2023 + DAY_US, end_us: MAY_8_2023 + 2 * DAY_US + 1 },
          },
        ],
      },
    });
    expect(range.body.results.map((r: any) => r.memory.content)).toEqual(['second', 'first']);
    const filtered = await t.req('POST', `${base}/recall`, {
      body: {
        cue: 'x',
        strategies: ['temporal'],
        filter: { occurred_at: { $lt: MAY_8_2023 + 2 * DAY_US } },
      },
    });
    expect(filtered.body.results.map((r: any) => r.memory.content)).toEqual(['first']);
  });

  it('an old event written today is not recent: recency reads event time', async () => {
    const base = await ws('event-recency');
    await remember(base, {
      content: 'the quarterly report was filed',
      occurred_at: nowUs() - 60 * DAY_US,
    });
    await remember(base, {
      content: 'the quarterly report was filed',
      occurred_at: nowUs() - 1_000_000,
    });
    const res = await t.req('POST', `${base}/recall`, {
      body: { cue: 'quarterly report filed', strategies: ['similarity'] },
    });
    const [first, second] = res.body.results;
    expect(first.memory.occurred_at).toBeGreaterThan(second.memory.occurred_at);
    // Same relevance, importance and accesses: the 0.2 recency weight is the whole difference.
    expect(first.score - second.score).toBeCloseTo(0.2, 2);
  });

  it('a date cue ("in May 2023") reads event time', async () => {
    const base = await ws('event-date-cue');
    await remember(base, {
      content: 'went hiking with Ana',
      occurred_at: Date.UTC(2024, 0, 20) * 1000,
    });
    await remember(base, { content: 'went hiking with Ana', occurred_at: MAY_8_2023 });
    const res = await t.req('POST', `${base}/recall`, {
      body: {
        cue: 'hiking with Ana in May 2023',
        strategies: ['similarity'],
        scoring_weights: { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 },
      },
    });
    expect(res.body.results[0].memory.occurred_at).toBe(MAY_8_2023);
    expect(res.body.results[0].relevance).toBeGreaterThan(res.body.results[1].relevance);
  });

  it("prime's recent half and reflection's window read event time", async () => {
    const base = await ws('event-prime');
    await remember(base, { content: 'an event of last year', occurred_at: nowUs() - 300 * DAY_US });
    await remember(base, { content: 'an event of this morning' });
    const prime = await t.req('POST', `${base}/prime`, {
      body: { max_memories: 10, recency_window_us: 7 * DAY_US },
    });
    expect(prime.body.results.map((r: any) => r.memory.content)).toEqual([
      'an event of this morning',
    ]);
    const reflect = await t.req('POST', `${base}/reflect`, {
      body: { since_us: nowUs() - DAY_US },
    });
    expect(reflect.status, reflect.text).toBe(200);
    expect(reflect.body.memories_processed).toBe(1);
  });
});

describe('speaker and conversation_id', () => {
  it('filter list and recall, by their own fields or the filter grammar', async () => {
    const base = await ws('turn-filters');
    await remember(base, { content: 'I love pottery', speaker: 'Melanie', conversation_id: 'c1' });
    await remember(base, {
      content: 'pottery is relaxing',
      speaker: 'Caroline',
      conversation_id: 'c1',
    });
    await remember(base, {
      content: 'pottery class on Monday',
      speaker: 'Melanie',
      conversation_id: 'c2',
    });
    const bySpeaker = await t.req('GET', `${base}/memories?speaker=Melanie`);
    expect(bySpeaker.body.memories.map((m: any) => m.content)).toEqual([
      'I love pottery',
      'pottery class on Monday',
    ]);
    const byConversation = await t.req('GET', `${base}/memories?conversation_id=c1&limit=1`);
    expect(byConversation.body.memories.map((m: any) => m.content)).toEqual(['I love pottery']);
    const next = await t.req(
      'GET',
      `${base}/memories?conversation_id=c1&cursor=${byConversation.body.next_cursor}`,
    );
    expect(next.body.memories.map((m: any) => m.content)).toEqual(['pottery is relaxing']);
    expect(next.body.next_cursor).toBeNull();
    const both = await t.req('POST', `${base}/recall`, {
      body: {
        cue: 'pottery',
        strategies: ['similarity'],
        speaker: 'Melanie',
        conversation_id: 'c2',
      },
    });
    expect(both.body.results.map((r: any) => r.memory.content)).toEqual([
      'pottery class on Monday',
    ]);
    const grammar = await t.req('POST', `${base}/recall`, {
      body: { cue: 'pottery', strategies: ['similarity'], filter: { speaker: { $ne: 'Melanie' } } },
    });
    expect(grammar.body.results.map((r: any) => r.memory.content)).toEqual(['pottery is relaxing']);
    expect((await t.req('GET', `${base}/memories?speaker=`)).status).toBe(400);
  });

  it("a conversation's turns are chained followed_by in event order; a back-filled turn is spliced in", async () => {
    const base = await ws('turn-chain');
    const first = await remember(base, {
      content: 'hi',
      speaker: 'A',
      conversation_id: 'c',
      occurred_at: MAY_8_2023,
    });
    const third = await remember(base, {
      content: 'fine, thanks',
      speaker: 'A',
      conversation_id: 'c',
      occurred_at: MAY_8_2023 + 40_000_000,
    });
    const edges = async (m: any): Promise<string[]> => {
      const res = await t.req('GET', `${base}/memories/${m.memory_id}/edges`);
      return res.body.outgoing.map((e: any) => `${e.edge_type}>${e.target_id}`);
    };
    expect(await edges(third)).toEqual([`followed_by>${first.memory_id}`]);
    const second = await remember(base, {
      content: 'how are you?',
      speaker: 'B',
      conversation_id: 'c',
      occurred_at: MAY_8_2023 + 20_000_000,
    });
    expect(await edges(second)).toEqual([`followed_by>${first.memory_id}`]);
    expect(await edges(third)).toEqual([`followed_by>${second.memory_id}`]);
    // Another conversation and a memory of none are not linked.
    const other = await remember(base, {
      content: 'elsewhere',
      conversation_id: 'd',
      occurred_at: MAY_8_2023 + 30_000_000,
    });
    const none = await remember(base, {
      content: 'no conversation',
      occurred_at: MAY_8_2023 + 30_000_000,
    });
    expect(await edges(other)).toEqual([]);
    expect(await edges(none)).toEqual([]);
  });

  it('export and import keep occurred_at, speaker, conversation_id and the chain', async () => {
    const from = await ws('turn-export');
    await remember(from, {
      content: 'question?',
      speaker: 'A',
      conversation_id: 'c',
      occurred_at: MAY_8_2023,
    });
    await remember(from, {
      content: 'answer',
      speaker: 'B',
      conversation_id: 'c',
      occurred_at: MAY_8_2023 + 1,
    });
    const dump = await t.req('GET', `${from}/export`);
    expect(dump.status).toBe(200);
    const to = await ws('turn-import');
    const imported = await t.req('POST', `${to}/import`, {
      raw: dump.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.body).toMatchObject({ imported: 2, error_count: 0 });
    const a = (await t.req('GET', `${from}/memories`)).body.memories;
    const b = (await t.req('GET', `${to}/memories`)).body.memories;
    const fields = (m: any): unknown => [
      m.memory_id,
      m.occurred_at,
      m.speaker,
      m.conversation_id,
      m.created_at,
    ];
    expect(b.map(fields)).toEqual(a.map(fields));
    const edges = await t.req('GET', `${to}/memories/${b[1].memory_id}/edges`);
    expect(edges.body.outgoing.map((e: any) => [e.edge_type, e.target_id])).toEqual([
      ['followed_by', b[0].memory_id],
    ]);
  });
});

describe('gRPC', () => {
  let rpc: GrpcClient;
  beforeAll(() => {
    rpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey } });
  });
  afterAll(() => rpc.close());

  it('Remember takes occurred_at, speaker and conversation_id (fields 10–12); Memory carries them (17–19)', async () => {
    const { memory } = await rpc.call('MemoryService', 'Remember', {
      content: 'over gRPC',
      occurred_at: String(MAY_8_2023),
      speaker: 'Caroline',
      conversation_id: 'g1',
      tenant_id: 'default',
    });
    expect(memory).toMatchObject({
      occurred_at: String(MAY_8_2023),
      speaker: 'Caroline',
      conversation_id: 'g1',
    });
    expect(memory.message_id).toBeUndefined();
    const plain = (
      await rpc.call('MemoryService', 'Remember', {
        content: 'plain over gRPC',
        tenant_id: 'default',
      })
    ).memory;
    expect(plain.occurred_at).toBe(plain.created_at);
    expect(plain.speaker).toBeUndefined();
  });

  it('IngestMessages (a Flashbulb addition) writes a conversation as REST ingest does: in order, chained, idempotent by message_id', async () => {
    const messages = [
      {
        speaker: 'Caroline',
        content: 'I adopted a cat over gRPC',
        occurred_at: String(MAY_8_2023),
        message_id: 'g-1',
        context: struct({ channel: 'sms' }),
      },
      {
        speaker: 'Melanie',
        content: 'What is its name?',
        occurred_at: String(MAY_8_2023 + 20_000_000),
        message_id: 'g-2',
        importance: 0.75,
      },
    ];
    const first = await rpc.call('MemoryService', 'IngestMessages', {
      conversation_id: 'g-chat',
      messages,
      tenant_id: 'default',
    });
    expect(first).toMatchObject({ created: 2, existing: 0 });
    const ids = first.memory_ids.map(hex);
    expect(ids).toHaveLength(2);
    const stored = await t.req('GET', '/v1/memories?conversation_id=g-chat');
    expect(
      stored.body.memories.map((m: any) => [
        m.memory_id,
        m.speaker,
        m.occurred_at,
        m.message_id,
        m.importance,
        m.context,
      ]),
    ).toEqual([
      [ids[0], 'Caroline', MAY_8_2023, 'g-1', 0.5, { channel: 'sms' }],
      [ids[1], 'Melanie', MAY_8_2023 + 20_000_000, 'g-2', 0.75, {}],
    ]);
    const edges = await t.req('GET', `/v1/memories/${ids[1]}/edges`);
    expect(edges.body.outgoing.map((e: any) => [e.edge_type, e.target_id])).toEqual([
      ['followed_by', ids[0]],
    ]);
    // A retry writes nothing twice and answers with the same ids.
    const again = await rpc.call('MemoryService', 'IngestMessages', {
      conversation_id: 'g-chat',
      messages,
      tenant_id: 'default',
    });
    expect({ ...again, memory_ids: again.memory_ids.map(hex) }).toEqual({
      memory_ids: ids,
      created: 0,
      existing: 2,
    });
    // A bad message is INVALID_ARGUMENT naming it, and nothing of the call is written.
    const bad = await failsWith(
      rpc.call('MemoryService', 'IngestMessages', {
        conversation_id: 'g-chat',
        messages: [
          { speaker: 'A', content: 'fine' },
          { speaker: '', content: 'no speaker' },
        ],
        tenant_id: 'default',
      }),
      grpc.status.INVALID_ARGUMENT,
    );
    expect(bad.details).toMatch(/messages\[1\]\.speaker/);
    expect((await t.req('GET', '/v1/memories?conversation_id=g-chat')).body.memories).toHaveLength(
      2,
    );
  });
});
