/**
 * `max_pushes_per_chunk` (issue 17; a Flashbulb addition on REST and gRPC): a fed chunk, or a
 * batch of new writes, pushes at most that many memories (default 5), the most relevant first.
 * Memories left out stay unpushed, so the next chunk that reaches them pushes them. Values outside
 * 1..1000 are refused with the field named. Hash embedder: relevance is the cosine computed here.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, type GrpcClient } from '../helpers/grpc.ts';
import { openSse, subscribeSse, type SseStream } from '../helpers/sse.ts';
import { until, untilAllPushes } from '../helpers/wait.ts';
import { hashCosine } from '../helpers/hash-cosine.ts';

const DIM = 384;
const THRESHOLD = 0.3;
const FED = 'harbor crates cranes ships dock workers cargo tide';

const cos = (a: string, b: string): number => hashCosine(a, b, DIM);

/** Twelve memories that share more or fewer words with FED, so their relevance differs. */
const WORDS = FED.split(' ');
const CONTENTS = Array.from(
  { length: 12 },
  (_, i) =>
    `${WORDS.slice(0, 2 + (i % 7)).join(' ')} note ${['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'][i]}`,
);

let t: TestApp;
let rpc: GrpcClient;
let key = '';
const streams: SseStream[] = [];
const calls: grpc.ClientDuplexStream<object, any>[] = [];
let ranked: Array<{ id: string; content: string; sim: number }> = [];

async function feed(id: number | string, text: string): Promise<void> {
  const res = await t.req('POST', `/v1/subscribe/${id}/feed`, { key, body: { text } });
  expect(res.status, res.text).toBe(200);
}

/** Waits until `received` holds every push the server produced for subscription `id` (no late push can follow). */
function allPushes(id: number | string, received: () => number): Promise<void> {
  return untilAllPushes(() => t.app.svc.subscriptions.pushed(Number(id)), received);
}

async function sse(body: Record<string, unknown>): Promise<{ stream: SseStream; id: number }> {
  const s = await subscribeSse(t.base, key, { confidence_threshold: THRESHOLD, ...body });
  streams.push(s.stream);
  return s;
}

beforeAll(async () => {
  t = await startTestApp();
  rpc = connectGrpc(t.app.grpcPort, { deadlineMs: 10_000 });
  const created = await t.req('POST', '/v1/workspaces', {
    body: { slug: `maxpush-${process.pid}` },
  });
  expect(created.status, created.text).toBe(201);
  key = created.body.api_key as string;
  for (const content of CONTENTS) {
    const res = await t.req('POST', '/v1/memories', { key, body: { content } });
    expect(res.status, res.text).toBe(201);
    ranked.push({ id: res.body.memory_id as string, content, sim: cos(FED, content) });
  }
  ranked = ranked.filter((m) => m.sim >= THRESHOLD).sort((a, b) => b.sim - a.sim);
  // The fixture must give more matches than the default cap.
  expect(ranked.length).toBeGreaterThan(8);
});
afterAll(async () => {
  for (const s of streams) s.destroy();
  for (const c of calls) c.cancel();
  rpc.close();
  await t.stop();
});

describe('max_pushes_per_chunk over REST/SSE', () => {
  it('pushes the 5 most relevant by default, best first; the next chunk pushes the next 5', async () => {
    const { stream, id } = await sse({});
    await feed(id, `${FED}.`);
    const first = await stream.waitForPushes(5);
    await allPushes(id, () => stream.pushes.length);
    expect(stream.pushes).toHaveLength(5);
    expect(first.map((p) => p.memory.memory_id)).toEqual(ranked.slice(0, 5).map((m) => m.id));
    for (let i = 1; i < first.length; i++)
      expect(first[i].confidence).toBeLessThanOrEqual(first[i - 1].confidence);

    await feed(id, `${FED}.`);
    const both = await stream.waitForPushes(10);
    await allPushes(id, () => stream.pushes.length);
    expect(stream.pushes).toHaveLength(10);
    expect(both.slice(5).map((p) => p.memory.memory_id)).toEqual(
      ranked.slice(5, 10).map((m) => m.id),
    );
  });

  it('honours a per-subscription value', async () => {
    const { stream, id } = await sse({ max_pushes_per_chunk: 2 });
    await feed(id, `${FED}.`);
    await stream.waitForPushes(2);
    await allPushes(id, () => stream.pushes.length);
    expect(stream.pushes.map((p) => p.memory.memory_id)).toEqual(
      ranked.slice(0, 2).map((m) => m.id),
    );

    const { stream: all, id: allId } = await sse({ max_pushes_per_chunk: 1000 });
    await feed(allId, `${FED}.`);
    await all.waitForPushes(ranked.length);
    await allPushes(allId, () => all.pushes.length);
    expect(all.pushes.map((p) => p.memory.memory_id)).toEqual(ranked.map((m) => m.id));
  });

  it('caps the pushes of one batch of new writes (an upload), best first', async () => {
    const chunk = 'zebra quokka walrus lemur ocelot.';
    const { stream, id } = await sse({ max_pushes_per_chunk: 3, kind_filter: ['proposition'] });
    await feed(id, chunk);
    await allPushes(id, () => stream.pushes.length);
    expect(stream.pushes).toHaveLength(0);
    const text =
      'Zebra quokka walrus lemur ocelot tapir. Zebra quokka walrus lemur ocelot graze. Zebra quokka walrus lemur sleep. Zebra quokka walrus swim today. Zebra quokka walrus lemur ocelot run.';
    const form = new FormData();
    form.append('files', new Blob([text], { type: 'text/plain' }), 'notes/zoo.txt');
    const up = await fetch(`${t.base}/v1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(up.status, await up.clone().text()).toBeLessThan(300);
    const list = await t.req('GET', '/v1/memories?limit=1000', { key });
    const want = (list.body.memories as any[])
      .filter((m) => m.kind === 'proposition')
      .map((m) => ({ id: m.memory_id as string, sim: cos(chunk, m.content as string) }))
      .filter((m) => m.sim >= THRESHOLD)
      .sort((a, b) => b.sim - a.sim);
    expect(want.length).toBeGreaterThan(3);
    await stream.waitForPushes(3);
    await allPushes(id, () => stream.pushes.length);
    expect(stream.pushes.map((p) => p.memory.memory_id).sort()).toEqual(
      want
        .slice(0, 3)
        .map((m) => m.id)
        .sort(),
    );
  });

  it.each([0, -1, 1.5, 1001])(
    'refuses max_pushes_per_chunk %s, naming the field',
    async (value) => {
      const res = await openSse(t.base, '/v1/subscribe', {
        key,
        body: { max_pushes_per_chunk: value },
      });
      expect(res.ok).toBe(false);
      if (res.ok) return;
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/max_pushes_per_chunk/);
    },
  );
});

describe('max_pushes_per_chunk over gRPC (SubscribeRequest field 11)', () => {
  async function subscribe(
    req: object,
  ): Promise<{ messages: any[]; id: string; error: () => grpc.ServiceError | null }> {
    const call = rpc.subscribe({ key });
    calls.push(call);
    const messages: any[] = [];
    let error: grpc.ServiceError | null = null;
    call.on('data', (m: any) => messages.push(m));
    call.on('error', (e: grpc.ServiceError) => {
      error = e;
    });
    call.write({ confidence_threshold: THRESHOLD, ...req });
    call.end();
    await until(() => messages.length > 0 || error !== null, {
      what: 'the handshake or an error',
      deadlineMs: 5000,
      everyMs: 10,
    }).catch(() => undefined);
    return { messages, id: String(messages[0]?.subscription_id), error: () => error };
  }

  const pushesOf = (messages: any[]): any[] => messages.filter((m) => m.memory != null);

  async function pushesAfterFeed(req: object, n: number): Promise<any[]> {
    const sub = await subscribe(req);
    await rpc.call(
      'SubscribeService',
      'Feed',
      { subscription_id: sub.id, text: `${FED}.` },
      { key },
    );
    await until(() => pushesOf(sub.messages).length >= n, {
      what: `${n} pushes`,
      deadlineMs: 5000,
      everyMs: 10,
    }).catch(() => undefined);
    await allPushes(sub.id, () => pushesOf(sub.messages).length);
    return pushesOf(sub.messages);
  }

  it('defaults to 5 when the field is absent, and takes the value when set', async () => {
    const byDefault = await pushesAfterFeed({}, 5);
    expect(byDefault.map((p) => Buffer.from(p.memory.memory_id).toString('hex'))).toEqual(
      ranked.slice(0, 5).map((m) => m.id),
    );
    const three = await pushesAfterFeed({ max_pushes_per_chunk: 3 }, 3);
    expect(three.map((p) => Buffer.from(p.memory.memory_id).toString('hex'))).toEqual(
      ranked.slice(0, 3).map((m) => m.id),
    );
  });

  it('refuses 0 with INVALID_ARGUMENT', async () => {
    const sub = await subscribe({ max_pushes_per_chunk: 0 });
    expect(sub.error()?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(sub.error()?.details).toMatch(/max_pushes_per_chunk/);
  });
});
