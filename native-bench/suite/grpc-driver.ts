/**
 * @module native-bench/suite/grpc-driver — the Driver over gRPC hebbs.v1: MemoryService unary
 * calls, and SubscribeService.Subscribe (pushes) with unary Feed for subscriptions.
 */
import type {
  ContextValue,
  Driver,
  MemoryInput,
  PrimeInput,
  RecallInput,
  StrategyInput,
  Subscription,
} from './ops/driver.ts';
import { GrpcClient } from './grpc-client.ts';

interface MemoryMsg {
  memory_id: Buffer;
}

interface PushMsg {
  subscription_id: string;
  memory: MemoryMsg | null;
}

type StructValue =
  | { stringValue: string }
  | { numberValue: number }
  | { boolValue: boolean }
  | { listValue: { values: StructValue[] } };

function structValue(v: ContextValue): StructValue {
  if (Array.isArray(v)) return { listValue: { values: v.map(structValue) } };
  if (typeof v === 'string') return { stringValue: v };
  return typeof v === 'number' ? { numberValue: v } : { boolValue: v };
}

function struct(obj: Record<string, ContextValue>): object {
  return { fields: Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, structValue(v)])) };
}

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
const edgeEnum = (t: string): string => `EDGE_TYPE_${t.toUpperCase()}`;

function rememberMsg(m: MemoryInput): object {
  return {
    content: m.content,
    importance: m.importance,
    context: struct(m.context),
    ...(m.entityId === null ? {} : { entity_id: m.entityId }),
    edges: m.edges.map((e) => ({ target_id: bytes(e.targetId), edge_type: edgeEnum(e.type) })),
  };
}

function strategyMsg(s: StrategyInput): object {
  return {
    strategy_type: s.strategy.toUpperCase(),
    ...(s.entityId === undefined ? {} : { entity_id: s.entityId }),
    ...(s.seedId === undefined ? {} : { seed_memory_id: bytes(s.seedId) }),
    ...(s.maxDepth === undefined ? {} : { max_depth: s.maxDepth }),
  };
}

export class GrpcDriver implements Driver {
  readonly protocol = 'grpc';
  readonly #client: GrpcClient;

  constructor(endpoint: { port: number; apiKey: string; host?: string }) {
    this.#client = new GrpcClient(endpoint);
  }

  async remember(m: MemoryInput): Promise<string> {
    const res = await this.#client.unary<{ memory: MemoryMsg }>(
      'MemoryService',
      'Remember',
      rememberMsg(m),
    );
    return res.memory.memory_id.toString('hex');
  }

  async get(id: string): Promise<void> {
    await this.#client.unary<{ memory: MemoryMsg }>('MemoryService', 'Get', {
      memory_id: bytes(id),
    });
  }

  async recall(r: RecallInput): Promise<number> {
    const res = await this.#client.unary<{ results: unknown[] }>('MemoryService', 'Recall', {
      cue: r.cue,
      top_k: r.topK,
      strategies: r.strategies.map(strategyMsg),
    });
    return res.results.length;
  }

  async prime(p: PrimeInput): Promise<number> {
    const res = await this.#client.unary<{ results: unknown[] }>('MemoryService', 'Prime', {
      entity_id: p.entityId,
      similarity_cue: p.cue,
      max_memories: p.maxMemories,
    });
    return res.results.length;
  }

  async revise(id: string, content: string): Promise<void> {
    await this.#client.unary<{ memory: MemoryMsg }>('MemoryService', 'Revise', {
      memory_id: bytes(id),
      content,
      context_mode: 'CONTEXT_MODE_MERGE',
    });
  }

  async forget(id: string): Promise<number> {
    const res = await this.#client.unary<{ forgotten_count: string }>('MemoryService', 'Forget', {
      memory_ids: [bytes(id)],
    });
    return Number(res.forgotten_count);
  }

  subscribe(opts: { threshold: number }): Promise<Subscription> {
    return openGrpcSubscription(this.#client, opts.threshold);
  }

  close(): void {
    this.#client.close();
  }
}

/** Opens the stream, waits for the handshake (only subscription_id), then feeds by unary Feed. */
function openGrpcSubscription(client: GrpcClient, threshold: number): Promise<Subscription> {
  const call = client.subscribeStream();
  const listeners: Array<(id: string) => void> = [];
  return new Promise((resolve, reject) => {
    let subId: string | null = null;
    call.on('error', (err: Error) => (subId === null ? reject(err) : undefined));
    call.on('data', (msg: PushMsg) => {
      if (subId === null) {
        subId = msg.subscription_id;
        resolve(subscriptionOf(client, { call, subId, listeners }));
      } else if (msg.memory) for (const l of listeners) l(msg.memory.memory_id.toString('hex'));
    });
    call.write({ confidence_threshold: threshold });
  });
}

function subscriptionOf(
  client: GrpcClient,
  s: {
    call: ReturnType<GrpcClient['subscribeStream']>;
    subId: string;
    listeners: Array<(id: string) => void>;
  },
): Subscription {
  return {
    feed: async (text) =>
      void (await client.unary<object>('SubscribeService', 'Feed', {
        subscription_id: s.subId,
        text,
      })),
    onPush: (l) => void s.listeners.push(l),
    close: async () => {
      await client
        .unary<object>('SubscribeService', 'CloseSubscription', { subscription_id: s.subId })
        .catch(() => undefined);
      s.call.cancel();
    },
  };
}
