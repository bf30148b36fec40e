/**
 * Revocation ends access at once (issue 48, item 2): a key that opened an SSE or gRPC subscription
 * and is then revoked (through the server, or by the CLI in auth.json while the server runs) stops
 * reading: SSE gets `event: closed` with reason `revoked` and the stream ends, gRPC ends with
 * UNAUTHENTICATED, and a memory written afterwards reaches neither. Before, the streams went on
 * receiving every new memory of the workspace for as long as they were held. The cluster case is
 * in cluster-auth.test.ts.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthStore } from '../../src/auth/store.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, type GrpcClient } from '../helpers/grpc.ts';
import { subscribeSse } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let rpc: GrpcClient;
let seq = 0;

async function workspace(): Promise<{ slug: string; key: string; keyId: string }> {
  const slug = `revoke-${++seq}`;
  const res = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(res.status, res.text).toBe(201);
  return { slug, key: res.body.api_key as string, keyId: res.body.key_id as string };
}

async function remember(slug: string, content: string): Promise<void> {
  const res = await t.req('POST', `/v1/workspaces/${slug}/memories`, { body: { content } });
  expect(res.status, res.text).toBe(201);
}

/** Feeds the subscription text, so new memories like it are pushed. */
async function feed(key: string, id: number, text: string): Promise<void> {
  const res = await t.req('POST', `/v1/subscribe/${id}/feed`, { key, body: { text } });
  expect(res.status, res.text).toBe(200);
}

/** A gRPC Subscribe call with what it received and how it ended. */
function grpcSubscribe(key: string): {
  messages: unknown[];
  status: () => grpc.StatusObject | null;
  call: grpc.ClientDuplexStream<object, unknown>;
} {
  const call = rpc.subscribe({ key });
  const messages: unknown[] = [];
  let status: grpc.StatusObject | null = null;
  call.on('data', (m: unknown) => messages.push(m));
  call.on('status', (s: grpc.StatusObject) => (status = s));
  call.on('error', () => undefined);
  call.write({ confidence_threshold: 0.01 });
  call.end();
  return { messages, status: () => status, call };
}

beforeAll(async () => {
  t = await startTestApp();
  rpc = connectGrpc(t.app.grpcPort, { deadlineMs: 10_000 });
});
afterAll(async () => {
  rpc?.close();
  await t.stop();
});

describe('revoking a key ends the streams it opened', () => {
  it('SSE: event closed with reason revoked, then nothing more', async () => {
    const ws = await workspace();
    const { stream, id } = await subscribeSse(t.base, ws.key, { confidence_threshold: 0.01 });
    await feed(ws.key, id, 'tea with Alice.');
    await remember(ws.slug, 'tea with Alice before the revocation');
    await stream.waitForPushes(1);
    expect((await t.req('DELETE', `/v1/keys/${ws.keyId}`)).status).toBe(200);
    await stream.until((events) => events.some((e) => e.event === 'closed'), 5000, 'event: closed');
    expect(stream.named('closed')[0]?.json).toEqual({ reason: 'revoked' });
    await stream.ended;
    const pushes = stream.pushes.length;
    await remember(ws.slug, 'tea with Alice after the revocation');
    expect(stream.pushes.length).toBe(pushes);
    expect(t.app.svc.subscriptions.size).toBe(0);
  });

  it('gRPC: the Subscribe call ends with UNAUTHENTICATED', async () => {
    const ws = await workspace();
    const sub = grpcSubscribe(ws.key);
    await until(() => sub.messages.length >= 1, { what: 'the handshake' });
    expect((await t.req('DELETE', `/v1/keys/${ws.keyId}`)).status).toBe(200);
    const status = await until(() => sub.status(), { what: 'the call to end', deadlineMs: 5000 });
    expect(grpc.status[status.code]).toBe('UNAUTHENTICATED');
    expect(status.details).toMatch(/revoked/);
  });

  it('a key revoked by the CLI in auth.json while the server runs', async () => {
    const ws = await workspace();
    const { stream } = await subscribeSse(t.base, ws.key, {});
    const sub = grpcSubscribe(ws.key);
    await until(() => sub.messages.length >= 1, { what: 'the handshake' });
    new AuthStore(t.dataDir).revokeKey(ws.keyId);
    await stream.until((events) => events.some((e) => e.event === 'closed'), 5000, 'event: closed');
    expect(stream.named('closed')[0]?.json).toEqual({ reason: 'revoked' });
    const status = await until(() => sub.status(), {
      what: 'the gRPC call to end',
      deadlineMs: 5000,
    });
    expect(grpc.status[status.code]).toBe('UNAUTHENTICATED');
  });

  it('leaves the streams of other keys open', async () => {
    const ws = await workspace();
    const other = await t.req('POST', '/v1/keys', {
      body: { workspace: ws.slug, role: 'workspace' },
    });
    expect(other.status, other.text).toBe(201);
    const kept = await subscribeSse(t.base, other.body.api_key as string, {
      confidence_threshold: 0.01,
    });
    await feed(other.body.api_key as string, kept.id, 'a memory for the key.');
    const ended = await subscribeSse(t.base, ws.key, { confidence_threshold: 0.01 });
    expect((await t.req('DELETE', `/v1/keys/${ws.keyId}`)).status).toBe(200);
    await ended.stream.until(
      (events) => events.some((e) => e.event === 'closed'),
      5000,
      'event: closed',
    );
    await remember(ws.slug, 'a memory for the key that was kept');
    await kept.stream.waitForPushes(1);
    expect(kept.stream.named('closed')).toEqual([]);
    kept.stream.destroy();
  });
});
