/**
 * gRPC hebbs.v1.SubscribeService over real HTTP/2 (DESIGN.md 4 Subscribe, 8; HEBBS-WIRE.md
 * "What real clients depend on"): the server-streaming style real clients use (one request,
 * half-close, a handshake carrying only subscription_id, unary Feed / CloseSubscription), the
 * bidirectional style (feed and close inside the stream), cancel, NOT_FOUND for unknown or
 * foreign ids, and Feed working across transports. The client is generated at run time from
 * proto/hebbs.proto with the server's loader options (uint64 → decimal strings, bytes → Buffer).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, failsWith, type GrpcClient } from '../helpers/grpc.ts';
import { subscribeSse } from '../helpers/sse.ts';
import { until, untilAllPushes } from '../helpers/wait.ts';
import { hashCosine } from '../helpers/hash-cosine.ts';

const DIM = 384;

const cos = (a: string, b: string): number => hashCosine(a, b, DIM);

let t: TestApp;
let rpc: GrpcClient;
const calls: grpc.ClientDuplexStream<object, any>[] = [];

function unary(
  method: 'Feed' | 'CloseSubscription',
  req: object,
  key: string,
): Promise<Record<string, never>> {
  return rpc.call('SubscribeService', method, req, { key });
}

/** One Subscribe call, with everything it receives collected. */
class Sub {
  readonly messages: any[] = [];
  status: grpc.StatusObject | null = null;
  error: grpc.ServiceError | null = null;
  readonly done: Promise<void>;
  #wake: Array<() => void> = [];

  constructor(readonly call: grpc.ClientDuplexStream<object, any>) {
    calls.push(call);
    call.on('data', (m: any) => {
      this.messages.push(m);
      this.#notify();
    });
    this.done = new Promise((resolve) => {
      call.on('status', (s: grpc.StatusObject) => {
        this.status = s;
        this.#notify();
        resolve();
      });
    });
    call.on('error', (e: grpc.ServiceError) => {
      this.error = e;
      this.#notify();
    });
  }

  get id(): string {
    return String(this.messages[0]?.subscription_id);
  }

  /** Messages that carry a memory (real pushes). */
  get pushes(): any[] {
    return this.messages.filter((m) => m.memory != null);
  }

  async until(pred: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (this.status && !pred())
        throw new Error(
          `stream finished (${grpc.status[this.status.code]} ${this.status.details}) before ${what}`,
        );
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for ${what}; got ${this.messages.length} messages`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitForPushes(n: number, timeoutMs = 5000): Promise<void> {
    return this.until(() => this.pushes.length >= n, timeoutMs, `${n} pushes`);
  }

  #notify(): void {
    for (const w of this.#wake.splice(0)) w();
  }
}

/** Opens a subscription the way the Python SDK does: one request, then (optionally) half-close. */
async function subscribeGrpc(
  key: string,
  req: object,
  opts: { halfClose?: boolean } = {},
): Promise<Sub> {
  const call = rpc.subscribe({ key });
  const sub = new Sub(call);
  call.write(req);
  if (opts.halfClose ?? true) call.end();
  await sub.until(() => sub.messages.length >= 1, 5000, 'the handshake');
  return sub;
}

let seq = 0;
async function createWorkspace(prefix: string): Promise<{ slug: string; key: string }> {
  const slug = `${prefix}-${process.pid}-${++seq}`;
  const res = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(res.status, res.text).toBe(201);
  return { slug, key: res.body.api_key as string };
}

async function remember(key: string, body: Record<string, unknown>): Promise<any> {
  const res = await t.req('POST', '/v1/memories', { key, body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function waitUntil(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
  await until(pred, { what, deadlineMs: timeoutMs });
}

/** Waits until `sub` holds every push the server produced for it (no late push can follow). */
function allPushes(sub: Sub): Promise<void> {
  return untilAllPushes(
    () => t.app.svc.subscriptions.pushed(Number(sub.id)),
    () => sub.pushes.length,
  );
}

const CONTENTS = [
  'The quarterly budget review meeting is on Tuesday.',
  'Budget review notes for the quarterly planning meeting.',
  'The cat sat on a purple mat near the window.',
  'The purple cat likes sleeping on the mat.',
  'Kangaroos jump over tall fences in the outback.',
];
const THRESHOLD = 0.4;

beforeAll(async () => {
  t = await startTestApp();
  rpc = connectGrpc(t.app.grpcPort, { deadlineMs: 10_000 });
});
afterAll(async () => {
  for (const c of calls) c.cancel();
  rpc?.close();
  await t.stop();
});

describe('gRPC Subscribe, server-streaming style', () => {
  let ws: { slug: string; key: string };
  let mems: any[];

  beforeAll(async () => {
    ws = await createWorkspace('grpc-sub');
    mems = [];
    for (const content of CONTENTS) mems.push(await remember(ws.key, { content }));
  });

  it('handshake first, unary Feed pushes, half-close keeps it open, CloseSubscription ends it', async () => {
    const size = t.app.svc.subscriptions.size;
    const sub = await subscribeGrpc(ws.key, { confidence_threshold: THRESHOLD });
    // The handshake: only subscription_id, no memory.
    const hs = sub.messages[0];
    expect(hs.memory ?? null).toBeNull();
    const id = Number(hs.subscription_id);
    expect(Number.isSafeInteger(id)).toBe(true);
    expect(id).toBeGreaterThan(0);
    expect(String(hs.sequence_number ?? '0')).toBe('0');
    expect(t.app.svc.subscriptions.size).toBe(size + 1);

    const s1 = 'Please prepare for the quarterly budget review meeting.';
    const want1 = mems.filter((m) => cos(s1, m.content) >= THRESHOLD);
    expect(want1.length).toBeGreaterThanOrEqual(2);
    expect(await unary('Feed', { subscription_id: hs.subscription_id, text: s1 }, ws.key)).toEqual(
      {},
    );
    await sub.waitForPushes(want1.length);
    // Half-closing did not close it. The half-close went out on the same connection before the
    // Feed, so by the time the Feed's pushes are here the server has read it.
    expect(sub.status).toBeNull();
    expect(t.app.svc.subscriptions.size).toBe(size + 1);
    const s2 = ' The purple cat sat on the mat today.';
    const want2 = mems.filter((m) => cos(s2.trim(), m.content) >= THRESHOLD && !want1.includes(m));
    expect(want2.length).toBeGreaterThanOrEqual(1);
    await unary('Feed', { subscription_id: hs.subscription_id, text: s2 }, ws.key);
    await sub.waitForPushes(want1.length + want2.length);
    await allPushes(sub);

    const pushes = sub.pushes;
    expect(pushes).toHaveLength(want1.length + want2.length);
    // Only the handshake lacks a memory.
    expect(sub.messages).toHaveLength(pushes.length + 1);
    expect(pushes.map((p) => String(p.sequence_number))).toEqual(
      pushes.map((_, i) => String(i + 1)),
    );
    const byHex = new Map(mems.map((m) => [m.memory_id as string, m]));
    for (const [i, p] of pushes.entries()) {
      expect(String(p.subscription_id)).toBe(hs.subscription_id);
      expect(Buffer.isBuffer(p.memory.memory_id)).toBe(true);
      expect(p.memory.memory_id).toHaveLength(16);
      const m = byHex.get(p.memory.memory_id.toString('hex'));
      expect(m).toBeDefined();
      expect(p.memory.content).toBe(m.content);
      expect(p.memory.kind).toBe('MEMORY_KIND_EPISODE');
      const chunk = i < want1.length ? s1 : s2.trim();
      expect(p.confidence).toBeCloseTo(cos(chunk, m.content), 3);
      expect(p.confidence).toBeGreaterThanOrEqual(THRESHOLD - 1e-6);
      expect(typeof p.score).toBe('number');
      expect(p.score).toBeGreaterThan(0);
      expect(p.strategy).toBe('similarity');
      expect(String(p.chunk_offset)).toBe(i < want1.length ? '0' : String(s1.length + 1));
      expect(Number(p.push_timestamp_us)).toBeGreaterThan(0);
    }
    expect(
      pushes
        .slice(0, want1.length)
        .map((p) => p.memory.memory_id.toString('hex'))
        .sort(),
    ).toEqual(want1.map((m) => m.memory_id).sort());
    expect(
      pushes
        .slice(want1.length)
        .map((p) => p.memory.memory_id.toString('hex'))
        .sort(),
    ).toEqual(want2.map((m) => m.memory_id).sort());

    // CloseSubscription ends the stream with OK.
    expect(
      await unary('CloseSubscription', { subscription_id: hs.subscription_id }, ws.key),
    ).toEqual({});
    await sub.done;
    expect(sub.status?.code).toBe(grpc.status.OK);
    expect(t.app.svc.subscriptions.size).toBe(size);
    await failsWith(
      unary('Feed', { subscription_id: hs.subscription_id, text: s1 }, ws.key),
      grpc.status.NOT_FOUND,
    );
    await failsWith(
      unary('CloseSubscription', { subscription_id: hs.subscription_id }, ws.key),
      grpc.status.NOT_FOUND,
    );
  });

  it('pushes a memory written while subscribed that matches a recent chunk', async () => {
    const sub = await subscribeGrpc(ws.key, { confidence_threshold: THRESHOLD });
    const chunk = 'Seagulls steal chips from tourists at the pier.';
    await unary('Feed', { subscription_id: sub.id, text: chunk }, ws.key);
    await allPushes(sub);
    expect(sub.pushes).toHaveLength(0);
    const m = await remember(ws.key, { content: 'Seagulls steal chips from tourists.' });
    await sub.waitForPushes(1);
    const p = sub.pushes[0];
    expect(p.memory.memory_id.toString('hex')).toBe(m.memory_id);
    expect(String(p.sequence_number)).toBe('1');
    expect(String(p.chunk_offset)).toBe('0');
    sub.call.cancel();
  });

  it('filters by entity_id and kind_filter (enum names)', async () => {
    const own = await createWorkspace('grpc-filter');
    const alice = await remember(own.key, {
      content: 'Alice booked flights to Lisbon for the conference.',
      entity_id: 'alice',
    });
    await remember(own.key, {
      content: 'Bob booked flights to Lisbon for the conference.',
      entity_id: 'bob',
    });
    const toRevise = await remember(own.key, {
      content: 'Carol booked flights to Lisbon for the conference.',
      entity_id: 'carol',
    });
    const rev = await t.req('PUT', `/v1/revise/${toRevise.memory_id}`, {
      key: own.key,
      body: { content: 'Carol rebooked flights to Lisbon for the conference.' },
    });
    expect(rev.status, rev.text).toBe(200);
    const s = 'Who booked flights to Lisbon for the conference?';

    const byEntity = await subscribeGrpc(own.key, {
      confidence_threshold: 0.35,
      entity_id: 'alice',
    });
    await unary('Feed', { subscription_id: byEntity.id, text: s }, own.key);
    await byEntity.waitForPushes(1);
    await allPushes(byEntity);
    expect(byEntity.pushes.map((p) => p.memory.memory_id.toString('hex'))).toEqual([
      alice.memory_id,
    ]);
    expect(byEntity.pushes[0].memory.entity_id).toBe('alice');

    const byKind = await subscribeGrpc(own.key, {
      confidence_threshold: 0.35,
      kind_filter: ['MEMORY_KIND_REVISION'],
    });
    await unary('Feed', { subscription_id: byKind.id, text: s }, own.key);
    await byKind.waitForPushes(1);
    await allPushes(byKind);
    expect(byKind.pushes.map((p) => p.memory.memory_id.toString('hex'))).toEqual([
      toRevise.memory_id,
    ]);
    expect(byKind.pushes[0].memory.kind).toBe('MEMORY_KIND_REVISION');
    byEntity.call.cancel();
    byKind.call.cancel();
  });
});

describe('gRPC Subscribe, bidirectional style', () => {
  it('feeds with `text` (field 8) and closes with `close` (field 9) inside the stream', async () => {
    const ws = await createWorkspace('grpc-bidi');
    const mems: any[] = [];
    for (const content of CONTENTS) mems.push(await remember(ws.key, { content }));
    const size = t.app.svc.subscriptions.size;
    const sub = await subscribeGrpc(
      ws.key,
      { confidence_threshold: THRESHOLD },
      { halfClose: false },
    );
    expect(sub.messages[0].memory ?? null).toBeNull();
    expect(t.app.svc.subscriptions.size).toBe(size + 1);

    const s1 = 'The purple cat sat on the mat today.';
    const want = mems
      .filter((m) => cos(s1, m.content) >= THRESHOLD)
      .map((m) => m.memory_id)
      .sort();
    expect(want.length).toBeGreaterThanOrEqual(1);
    sub.call.write({ text: 'The purple cat ' });
    sub.call.write({ text: 'sat on the mat today.' });
    await sub.waitForPushes(want.length);
    await allPushes(sub);
    expect(sub.pushes.map((p) => p.memory.memory_id.toString('hex')).sort()).toEqual(want);
    for (const p of sub.pushes) expect(String(p.chunk_offset)).toBe('0');
    expect(sub.pushes.map((p) => String(p.sequence_number))).toEqual(
      sub.pushes.map((_, i) => String(i + 1)),
    );

    // Unary Feed works on a stream-opened subscription too.
    const s2 = 'Prepare the quarterly budget review meeting.';
    await unary('Feed', { subscription_id: sub.id, text: ` ${s2}` }, ws.key);
    const more = mems.filter((m) => cos(s2, m.content) >= THRESHOLD && !want.includes(m.memory_id));
    expect(more.length).toBeGreaterThanOrEqual(1);
    await sub.waitForPushes(want.length + more.length);
    for (const p of sub.pushes.slice(want.length))
      expect(String(p.chunk_offset)).toBe(String(s1.length + 1));

    sub.call.write({ close: true });
    await sub.done;
    expect(sub.status?.code).toBe(grpc.status.OK);
    expect(t.app.svc.subscriptions.size).toBe(size);
    await failsWith(
      unary('Feed', { subscription_id: sub.id, text: s1 }, ws.key),
      grpc.status.NOT_FOUND,
    );
  });

  it('the first message may carry text, which is fed right after opening', async () => {
    const ws = await createWorkspace('grpc-first');
    const m = await remember(ws.key, {
      content: 'Kangaroos jump over tall fences in the outback.',
    });
    const sub = await subscribeGrpc(
      ws.key,
      { confidence_threshold: THRESHOLD, text: 'Do kangaroos jump over tall fences?' },
      { halfClose: false },
    );
    expect(sub.messages[0].memory ?? null).toBeNull();
    await sub.waitForPushes(1);
    expect(sub.pushes[0].memory.memory_id.toString('hex')).toBe(m.memory_id);
    expect(String(sub.pushes[0].sequence_number)).toBe('1');
    sub.call.end();
    sub.call.cancel();
  });

  it('cancelling the call closes the subscription', async () => {
    const ws = await createWorkspace('grpc-cancel');
    const size = t.app.svc.subscriptions.size;
    const sub = await subscribeGrpc(ws.key, {}, { halfClose: false });
    expect(t.app.svc.subscriptions.size).toBe(size + 1);
    sub.call.cancel();
    await waitUntil(
      () => t.app.svc.subscriptions.size === size,
      3000,
      'the registry to drop the subscription',
    );
    await failsWith(
      unary('Feed', { subscription_id: sub.id, text: 'anything at all here.' }, ws.key),
      grpc.status.NOT_FOUND,
    );

    // The same after a half-close (the server-streaming client going away).
    const sub2 = await subscribeGrpc(ws.key, {});
    expect(t.app.svc.subscriptions.size).toBe(size + 1);
    sub2.call.cancel();
    await waitUntil(
      () => t.app.svc.subscriptions.size === size,
      3000,
      'the registry to drop the half-closed subscription',
    );
  });
});

describe('gRPC Subscribe errors', () => {
  it('an invalid first request ends the stream with INVALID_ARGUMENT and opens nothing', async () => {
    const ws = await createWorkspace('grpc-bad');
    const size = t.app.svc.subscriptions.size;
    const call = rpc.subscribe({ key: ws.key });
    const sub = new Sub(call);
    call.write({ confidence_threshold: 1.5 });
    call.end();
    await sub.done;
    expect(grpc.status[sub.status?.code ?? -1]).toBe('INVALID_ARGUMENT');
    expect(sub.messages).toHaveLength(0);
    expect(t.app.svc.subscriptions.size).toBe(size);
  });

  it('the 101st open subscription in a workspace is RESOURCE_EXHAUSTED', async () => {
    const ws = await createWorkspace('grpc-limit');
    const subs = await Promise.all(Array.from({ length: 100 }, () => subscribeGrpc(ws.key, {})));
    try {
      expect(new Set(subs.map((s) => s.id)).size).toBe(100);
      const call = rpc.subscribe({ key: ws.key });
      const extra = new Sub(call);
      call.write({});
      call.end();
      await extra.done;
      expect(grpc.status[extra.status?.code ?? -1]).toBe('RESOURCE_EXHAUSTED');
      expect(extra.messages).toHaveLength(0);
    } finally {
      for (const s of subs) s.call.cancel();
    }
  });
});

describe('gRPC Feed / CloseSubscription errors and transports', () => {
  it('unknown ids, and another workspace’s subscription, are NOT_FOUND', async () => {
    const a = await createWorkspace('grpc-iso-a');
    const b = await createWorkspace('grpc-iso-b');
    await remember(a.key, { content: 'The vault combination changes every Monday.' });
    await failsWith(
      unary('Feed', { subscription_id: '123456789', text: 'hello there my friend.' }, a.key),
      grpc.status.NOT_FOUND,
    );
    await failsWith(
      unary('CloseSubscription', { subscription_id: '123456789' }, a.key),
      grpc.status.NOT_FOUND,
    );

    const sub = await subscribeGrpc(a.key, { confidence_threshold: THRESHOLD });
    const s = 'The vault combination changes every Monday morning.';
    await failsWith(
      unary('Feed', { subscription_id: sub.id, text: s }, b.key),
      grpc.status.NOT_FOUND,
    );
    await failsWith(
      unary('CloseSubscription', { subscription_id: sub.id }, b.key),
      grpc.status.NOT_FOUND,
    );
    // An admin key naming the wrong workspace: NOT_FOUND too.
    await failsWith(
      unary('Feed', { subscription_id: sub.id, text: s, tenant_id: b.slug }, t.adminKey),
      grpc.status.NOT_FOUND,
    );
    await allPushes(sub);
    expect(t.app.svc.subscriptions.pushed(Number(sub.id))).toBe(0);
    expect(sub.pushes).toHaveLength(0);
    expect(sub.status).toBeNull();
    // The owner can.
    await unary('Feed', { subscription_id: sub.id, text: s }, a.key);
    await sub.waitForPushes(1);
    await unary('CloseSubscription', { subscription_id: sub.id }, a.key);
    await sub.done;
  });

  it('Feed works for REST subscriptions, and REST feed for gRPC subscriptions', async () => {
    const ws = await createWorkspace('grpc-cross');
    const m = await remember(ws.key, { content: 'The lighthouse keeper polished the brass lamp.' });
    const s = 'The lighthouse keeper polished the lamp.';

    const sse = await subscribeSse(t.base, ws.key, { confidence_threshold: THRESHOLD });
    try {
      await unary('Feed', { subscription_id: String(sse.id), text: s }, ws.key);
      const [p] = await sse.stream.waitForPushes(1);
      expect(p.memory.memory_id).toBe(m.memory_id);
      await unary('CloseSubscription', { subscription_id: String(sse.id) }, ws.key);
      await sse.stream.waitFor('closed');
      await sse.stream.ended;
    } finally {
      sse.stream.destroy();
    }

    const sub = await subscribeGrpc(ws.key, { confidence_threshold: THRESHOLD });
    const res = await t.req('POST', `/v1/subscribe/${sub.id}/feed`, {
      key: ws.key,
      body: { text: s },
    });
    expect(res.status, res.text).toBe(200);
    await sub.waitForPushes(1);
    expect(sub.pushes[0].memory.memory_id.toString('hex')).toBe(m.memory_id);
    expect((await t.req('DELETE', `/v1/subscribe/${sub.id}`, { key: ws.key })).status).toBe(200);
    await sub.done;
    expect(sub.status?.code).toBe(grpc.status.OK);
  });
});
