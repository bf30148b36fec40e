/**
 * `FlashbulbStore` (@flashbulb/client/langgraph) against a live server: operation by operation
 * beside LangGraph's own `InMemoryStore` (the reference behaviour of `BaseStore`), then inside a
 * small real LangGraph.js graph (no language model: one node writes, one searches).
 */
import {
  Annotation,
  END,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from '@langchain/langgraph';
import { InMemoryStore, type BaseStore, type Item } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FlashbulbClient } from '../../clients/typescript/src/index.ts';
import {
  decodeNamespace,
  encodeNamespace,
  FlashbulbStore,
} from '../../clients/typescript/src/langgraph.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let admin: FlashbulbClient;
let client: FlashbulbClient;
let n = 0;

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_REFLECT_ENABLED: 'false' });
  admin = new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey });
});
afterAll(async () => t.stop());
beforeEach(async () => {
  const slug = `lg-${++n}`;
  await admin.workspacesCreate({ slug });
  client = admin.withWorkspace(slug);
});

type Pair = [BaseStore, BaseStore];
const plain = (i: Item | null) => (i === null ? null : [i.namespace, i.key, i.value]);

async function both<T>(stores: Pair, f: (s: BaseStore) => Promise<T>): Promise<[T, T]> {
  return [await f(stores[0]), await f(stores[1])];
}

describe('FlashbulbStore (LangGraph.js)', () => {
  it('encodes namespaces reversibly', () => {
    for (const ns of [['a'], ['users', 'alice', 'facts'], ['with/slash', '100%', '']])
      expect(decodeNamespace(encodeNamespace(ns))).toEqual(ns);
  });

  it('puts, gets, updates and deletes like the InMemoryStore', async () => {
    const stores: Pair = [new InMemoryStore(), new FlashbulbStore(client)];
    const ns = ['users', 'alice'];
    await both(stores, (s) => s.put(ns, 'prefs', { drink: 'tea', n: 1 }));
    let [ref, fb] = await both(stores, (s) => s.get(ns, 'prefs'));
    expect(plain(fb)).toEqual(plain(ref));
    await both(stores, (s) => s.put(ns, 'prefs', { drink: 'coffee', n: 2 }));
    [ref, fb] = await both(stores, (s) => s.get(ns, 'prefs'));
    expect(plain(fb)).toEqual([ns, 'prefs', { drink: 'coffee', n: 2 }]);
    expect(plain(fb)).toEqual(plain(ref));
    expect((await client.list({ include_superseded: true })).memories).toHaveLength(2);
    await both(stores, (s) => s.delete(ns, 'prefs'));
    expect(await both(stores, (s) => s.get(ns, 'prefs'))).toEqual([null, null]);
  });

  it('searches with filters and pages like the InMemoryStore', async () => {
    const stores: Pair = [new InMemoryStore(), new FlashbulbStore(client)];
    for (let i = 0; i < 7; i++)
      await both(stores, (s) =>
        s.put(['docs', 'a'], `d${i}`, { kind: i % 2 === 0 ? 'even' : 'odd', n: i }),
      );
    await both(stores, (s) => s.put(['docs', 'b'], 'x', { kind: 'even', n: 100 }));
    for (const opts of [
      { limit: 3 },
      { limit: 3, offset: 3 },
      { filter: { kind: 'odd' } },
      { filter: { n: { $gte: 4 } } },
      { filter: { kind: 'even', n: { $lt: 5 } } },
    ]) {
      const [ref, fb] = await both(stores, (s) => s.search(['docs', 'a'], opts));
      expect(fb.map(plain), JSON.stringify(opts)).toEqual(ref.map(plain));
    }
  });

  it('lists namespaces like the InMemoryStore', async () => {
    const stores: Pair = [new InMemoryStore(), new FlashbulbStore(client)];
    for (const ns of [
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
      ['a', 'x'],
      ['z', 'b'],
    ])
      await both(stores, (s) => s.put(ns, 'k', { v: 1 }));
    for (const opts of [
      {},
      { prefix: ['a'] },
      { suffix: ['b'] },
      { prefix: ['a', '*', 'c'] },
      { maxDepth: 2 },
      { limit: 2, offset: 1 },
    ]) {
      const [ref, fb] = await both(stores, (s) => s.listNamespaces(opts));
      expect(fb, JSON.stringify(opts)).toEqual(ref);
    }
  });

  it('searches by meaning with hybrid recall', async () => {
    const store = new FlashbulbStore(client);
    await store.put(['u', 'alice'], 'tea', { text: 'Alice drinks green tea every morning' }, [
      'text',
    ]);
    await store.put(['u', 'alice'], 'bike', { text: 'Alice rides her bike to work' }, ['text']);
    await store.put(['u', 'bob'], 'tea', { text: 'Bob hates green tea' }, ['text']);
    const hits = await store.search(['u', 'alice'], { query: 'green tea', limit: 2 });
    expect(hits[0]).toMatchObject({ key: 'tea', namespace: ['u', 'alice'] });
    expect(hits.every((h) => h.namespace[1] === 'alice')).toBe(true);
    expect(hits[0]?.score).toBeGreaterThan(0);
  });

  it('passes minRelevance to recall: a query nothing matches finds nothing, a good one still finds its item', async () => {
    const open = new FlashbulbStore(client);
    await open.put(['u'], 'tea', { text: 'Alice drinks green tea every morning' }, ['text']);
    const good =
      (await open.search(['u'], { query: 'Alice drinks green tea every morning' }))[0]?.score ?? 0;
    const noise = await open.search(['u'], { query: 'zzzz qqqq' });
    expect(noise.length, 'without a floor, hybrid recall returns the item for any query').toBe(1);
    const worst = noise[0]?.score ?? 0;
    expect(worst).toBeLessThan(good);
    const floored = new FlashbulbStore(client, { minRelevance: (worst + good) / 2 });
    expect(await floored.search(['u'], { query: 'zzzz qqqq' })).toEqual([]);
    expect(
      (await floored.search(['u'], { query: 'Alice drinks green tea every morning' })).map(
        (h) => h.key,
      ),
    ).toEqual(['tea']);
  });

  it('serves a LangGraph.js graph that writes and searches', async () => {
    const State = Annotation.Root({ fact: Annotation<string>(), found: Annotation<string[]>() });
    const graph = new StateGraph(State)
      .addNode('write', async (s: typeof State.State, config: LangGraphRunnableConfig) => {
        await config.store?.put(['users', 'alice'], 'drink', { text: s.fact }, ['text']);
        return {};
      })
      .addNode('search', async (_s: typeof State.State, config: LangGraphRunnableConfig) => {
        const hits =
          (await config.store?.search(['users'], { query: 'what does Alice drink?' })) ?? [];
        return { found: hits.map((h) => String(h.value['text'])) };
      })
      .addEdge(START, 'write')
      .addEdge('write', 'search')
      .addEdge('search', END)
      .compile({ store: new FlashbulbStore(client) });
    const out = await graph.invoke({ fact: 'Alice drinks green tea' });
    expect(out.found).toEqual(['Alice drinks green tea']);
  });
});
