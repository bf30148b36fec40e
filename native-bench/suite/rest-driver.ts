/**
 * @module native-bench/suite/rest-driver — the Driver over REST/JSON (keep-alive sockets, one per
 * concurrent client) and Server-Sent Events for subscriptions.
 */
import { expectJson, RestClient } from '../lib/rest-client.ts';
import type {
  Driver,
  MemoryInput,
  PrimeInput,
  RecallInput,
  StrategyInput,
  Subscription,
} from './ops/driver.ts';
import { openSse, type SseEvent } from './sse-client.ts';

export interface Endpoint {
  port: number;
  apiKey: string;
}

function rememberJson(m: MemoryInput): object {
  return {
    content: m.content,
    importance: m.importance,
    context: m.context,
    ...(m.entityId === null ? {} : { entity_id: m.entityId }),
    ...(m.edges.length === 0
      ? {}
      : { edges: m.edges.map((e) => ({ target_id: e.targetId, edge_type: e.type })) }),
  };
}

function strategyJson(s: StrategyInput): object {
  return {
    strategy: s.strategy,
    ...(s.entityId === undefined ? {} : { entity_id: s.entityId }),
    ...(s.seedId === undefined ? {} : { seed_memory_id: s.seedId }),
    ...(s.maxDepth === undefined ? {} : { max_depth: s.maxDepth }),
  };
}

export class RestDriver implements Driver {
  readonly protocol = 'rest';
  readonly #client: RestClient;
  readonly #endpoint: Endpoint;

  constructor(endpoint: Endpoint, opts: { sockets: number }) {
    this.#endpoint = endpoint;
    this.#client = new RestClient({
      host: '127.0.0.1',
      port: endpoint.port,
      apiKey: endpoint.apiKey,
      maxSockets: opts.sockets,
    });
  }

  async remember(m: MemoryInput): Promise<string> {
    return expectJson<{ memory_id: string }>(
      await this.#client.post('/v1/memories', rememberJson(m)),
      201,
      'remember',
    ).memory_id;
  }

  async get(id: string): Promise<void> {
    expectJson<object>(await this.#client.get(`/v1/memories/${id}`), 200, 'get');
  }

  async recall(r: RecallInput): Promise<number> {
    const reply = await this.#client.post('/v1/recall', {
      cue: r.cue,
      top_k: r.topK,
      strategies: r.strategies.map(strategyJson),
    });
    return expectJson<{ results: unknown[] }>(reply, 200, 'recall').results.length;
  }

  async prime(p: PrimeInput): Promise<number> {
    const reply = await this.#client.post('/v1/prime', {
      entity_id: p.entityId,
      similarity_cue: p.cue,
      max_memories: p.maxMemories,
    });
    return expectJson<{ results: unknown[] }>(reply, 200, 'prime').results.length;
  }

  async revise(id: string, content: string): Promise<void> {
    expectJson<object>(
      await this.#client.send('PUT', `/v1/revise/${id}`, JSON.stringify({ content })),
      200,
      'revise',
    );
  }

  async forget(id: string): Promise<number> {
    return expectJson<{ forgotten_count: number }>(
      await this.#client.post('/v1/forget', { memory_ids: [id] }),
      200,
      'forget',
    ).forgotten_count;
  }

  subscribe(opts: { threshold: number }): Promise<Subscription> {
    return openRestSubscription(this.#client, this.#endpoint, opts.threshold);
  }

  close(): void {
    this.#client.close();
  }
}

async function openRestSubscription(
  client: RestClient,
  endpoint: Endpoint,
  threshold: number,
): Promise<Subscription> {
  const listeners: Array<(id: string) => void> = [];
  let opened: (id: number) => void = () => undefined;
  const subscribed = new Promise<number>((resolve) => (opened = resolve));
  const onEvent = (e: SseEvent): void => {
    if (e.event === 'subscribed')
      opened((JSON.parse(e.data) as { subscription_id: number }).subscription_id);
    if (e.event !== 'message') return;
    const id = (JSON.parse(e.data) as { memory: { memory_id: string } }).memory.memory_id;
    for (const l of listeners) l(id);
  };
  const conn = await openSse({
    port: endpoint.port,
    path: '/v1/subscribe',
    apiKey: endpoint.apiKey,
    body: { confidence_threshold: threshold },
    onEvent,
  });
  const subId = await subscribed;
  return {
    feed: async (text) =>
      void expectJson<object>(
        await client.post(`/v1/subscribe/${subId}/feed`, { text }),
        200,
        'feed',
      ),
    onPush: (l) => void listeners.push(l),
    close: async () => {
      await client.send('DELETE', `/v1/subscribe/${subId}`, null);
      conn.close();
    },
  };
}
