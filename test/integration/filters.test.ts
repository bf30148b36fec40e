/**
 * Metadata filters over the wire: recall (every strategy), prime, list (?filter=), SSE subscribe
 * and gRPC Recall; clear 400s for bad filters. The semantics are checked against a brute-force
 * reference in test/unit/filter-property.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, struct } from '../helpers/grpc.ts';
import { subscribeSse } from '../helpers/sse.ts';

let t: TestApp;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp();
  const rows: Array<[string, string, Record<string, unknown>, number]> = [
    [
      'chatTea',
      'Alice drinks green tea every morning',
      { source: 'chat', tags: ['drink', 'morning'] },
      0.9,
    ],
    ['mailTea', 'Alice ordered green tea by email', { source: 'email', tags: ['drink'] }, 0.3],
    [
      'chatCoffee',
      'Alice switched to coffee on night shifts',
      { source: 'chat', shift: { kind: 'night' } },
      0.6,
    ],
    ['docTea', 'A document about green tea harvests', { source: 'doc' }, 0.5],
  ];
  for (const [name, content, context, importance] of rows) {
    const res = await t.inject('POST', '/v1/memories', {
      body: { content, context, importance, entity_id: 'alice' },
    });
    ids[name] = res.body.memory_id;
  }
  await t.inject('POST', '/v1/memories', {
    body: {
      content: 'Tea makes Alice calm',
      context: { source: 'chat' },
      edges: [{ target_id: ids['mailTea'], edge_type: 'caused_by' }],
    },
  });
});
afterAll(async () => {
  await t.stop();
});

const recallIds = async (body: object): Promise<string[]> => {
  const res = await t.inject('POST', '/v1/recall', {
    body: { cue: 'green tea', top_k: 10, ...body },
  });
  expect(res.status, res.text).toBe(200);
  return (res.body.results as any[]).map((r) => r.memory.memory_id);
};

describe('filters over REST', () => {
  it('recall: equality, $in, ranges and existence, combined with $and / $or, in similarity and temporal', async () => {
    expect(
      (
        await recallIds({
          strategies: ['similarity'],
          filter: { 'context.source': 'chat', entity_id: 'alice' },
        })
      ).sort(),
    ).toEqual([ids['chatTea'], ids['chatCoffee']].sort());
    expect(
      await recallIds({
        strategies: ['temporal'],
        filter: { importance: { $gte: 0.5, $lt: 0.9 }, entity_id: 'alice' },
      }),
    ).toEqual([ids['docTea'], ids['chatCoffee']]);
    expect(
      (
        await recallIds({
          strategies: ['similarity'],
          filter: { $or: [{ 'context.tags': 'morning' }, { 'context.source': { $in: ['doc'] } }] },
        })
      ).sort(),
    ).toEqual([ids['chatTea'], ids['docTea']].sort());
    expect(
      await recallIds({
        strategies: ['temporal'],
        filter: { 'context.shift.kind': { $exists: true } },
      }),
    ).toEqual([ids['chatCoffee']]);
    const created = (await t.inject('GET', `/v1/memories/${ids['mailTea']}`)).body
      .created_at as number;
    expect(
      await recallIds({
        strategies: ['temporal'],
        filter: { created_at: { $lte: created }, 'context.source': { $ne: 'email' } },
      }),
    ).toEqual([ids['chatTea']]);
  });

  it('recall: top_k comes back whenever that many memories match, however few match overall', async () => {
    for (let i = 0; i < 30; i++)
      await t.inject('POST', '/v1/memories', {
        body: {
          content: `green tea note ${i}`,
          context: { batch: i % 10 === 0 ? 'rare' : 'common' },
        },
      });
    const got = await recallIds({
      strategies: ['similarity'],
      top_k: 3,
      filter: { 'context.batch': 'rare' },
    });
    expect(got).toHaveLength(3);
  });

  it('causal: the walk passes through memories the filter rejects, and returns only matches', async () => {
    const seed = (await t.inject('GET', '/v1/memories?limit=1000')).body.memories.find(
      (m: any) => m.content === 'Tea makes Alice calm',
    ).memory_id;
    expect(
      await recallIds({
        strategies: [{ strategy: 'causal', seed_memory_id: seed }],
        filter: { 'context.source': 'email' },
      }),
    ).toEqual([ids['mailTea']]);
    expect(
      await recallIds({
        strategies: [{ strategy: 'causal', seed_memory_id: seed }],
        filter: { 'context.source': 'doc' },
      }),
    ).toEqual([]);
  });

  it('prime and list apply the filter', async () => {
    const primed = await t.inject('POST', '/v1/prime', {
      body: {
        entity_id: 'alice',
        similarity_cue: 'tea',
        filter: { 'context.source': { $nin: ['chat'] } },
      },
    });
    expect((primed.body.results as any[]).map((r) => r.memory.memory_id).sort()).toEqual(
      [ids['mailTea'], ids['docTea']].sort(),
    );
    const q = encodeURIComponent(
      JSON.stringify({ $or: [{ importance: { $gt: 0.8 } }, { 'context.source': 'doc' }] }),
    );
    const listed = await t.inject('GET', `/v1/memories?filter=${q}&limit=1`);
    expect(listed.body.memories.map((m: any) => m.memory_id)).toEqual([ids['chatTea']]);
    const next = await t.inject(
      'GET',
      `/v1/memories?filter=${q}&limit=1&cursor=${listed.body.next_cursor}`,
    );
    expect(next.body).toEqual({
      memories: [expect.objectContaining({ memory_id: ids['docTea'] })],
      next_cursor: null,
    });
  });

  it('bad filters are 400s that name the place', async () => {
    const cases: Array<[string, string, object, RegExp]> = [
      [
        'POST',
        '/v1/recall',
        { cue: 'x', strategies: ['similarity'], filter: { source: 'chat' } },
        /filter\.source: unknown field 'source'/,
      ],
      [
        'POST',
        '/v1/recall',
        { cue: 'x', strategies: ['similarity'], filter: { importance: { $between: [1, 2] } } },
        /filter\.importance\.\$between: unknown operator/,
      ],
      ['POST', '/v1/prime', { filter: { $or: {} } }, /filter\.\$or must be a non-empty array/],
      [
        'POST',
        '/v1/recall',
        { cue: 'x', strategies: ['similarity'], filter: 'chat' },
        /filter must be object/,
      ],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await t.inject(method, path, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    const list = await t.inject('GET', `/v1/memories?filter=${encodeURIComponent('{"kind":')}`);
    expect(list.status).toBe(400);
    expect(list.body.message).toMatch(/filter is not valid JSON/);
  });
});

describe('filters on subscriptions and over gRPC', () => {
  it('SSE subscribe pushes only memories that pass the filter, for fed text and for new writes', async () => {
    const { stream, id } = await subscribeSse(t.base, t.adminKey, {
      confidence_threshold: 0.3,
      filter: { 'context.source': 'chat' },
    });
    try {
      await t.inject('POST', `/v1/subscribe/${id}/feed`, {
        body: { text: 'Alice drinks green tea every morning. ' },
      });
      const [first] = await stream.waitForPushes(1);
      expect(first.memory.context.source).toBe('chat');
      await t.inject('POST', '/v1/memories', {
        body: { content: 'Alice drinks green tea every morning too', context: { source: 'email' } },
      });
      const chat = await t.inject('POST', '/v1/memories', {
        body: {
          content: 'Alice drinks green tea every morning again',
          context: { source: 'chat' },
        },
      });
      await stream.until(
        (events) => events.some((e) => (e.json as any)?.memory?.memory_id === chat.body.memory_id),
        5000,
        'the push of the chat memory',
      );
      const pushed = stream.events
        .filter((e) => e.event === 'message')
        .map((e) => (e.json as any).memory);
      expect(pushed.every((m: any) => m.context.source === 'chat')).toBe(true);
    } finally {
      stream.destroy();
    }
  });

  it('gRPC Recall and Prime take the filter as a Struct (Flashbulb addition)', async () => {
    const rpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey } });
    try {
      const out: any = await rpc.call('MemoryService', 'Recall', {
        cue: 'green tea',
        strategies: [{ strategy_type: 'SIMILARITY', top_k: 10 }],
        filter: struct({ 'context.source': 'doc' }),
      });
      expect(out.results.map((r: any) => r.memory.content)).toEqual([
        'A document about green tea harvests',
      ]);
      const primed: any = await rpc.call('MemoryService', 'Prime', {
        entity_id: 'alice',
        similarity_cue: 'tea',
        filter: struct({ importance: { $lt: 0.4 } }),
      });
      expect(primed.results.map((r: any) => r.memory.content)).toEqual([
        'Alice ordered green tea by email',
      ]);
    } finally {
      rpc.close();
    }
  });
});
