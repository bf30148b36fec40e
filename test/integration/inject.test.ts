/**
 * The in-process request helper (helpers/inject.ts) answers as the socket does for what a route's
 * contract covers: the same requests through TestApp.req (a real socket) and TestApp.inject give
 * the same status, content type and body (ids and times aside), errors included; a stream route
 * is refused by the helper (it needs a socket).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_AUTH_ENABLED: 'true' });
});
afterAll(() => t.stop());

/** A reply with what differs from one call to the next taken out: ids, times, and what a recall reinforces. */
function comparable(r: { status: number; headers: Headers; body: unknown }): unknown {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v))
      if (!/(_id|_at|_iso|_us|^id|request_id|took_ms|access_count|score)$/.test(k))
        out[k] = strip(x);
    return out;
  };
  return { status: r.status, type: r.headers.get('content-type'), body: strip(r.body) };
}

describe('inject: in-process requests', () => {
  it('answers as the socket does: writes, reads, recall, and each kind of error', async () => {
    const calls: Array<
      [
        string,
        string,
        { body?: unknown; key?: string | null; raw?: string; headers?: Record<string, string> },
      ]
    > = [
      [
        'POST',
        '/v1/memories',
        { body: { content: 'The lighthouse keeper logs the tide at dawn.', importance: 0.7 } },
      ],
      ['POST', '/v1/recall', { body: { cue: 'lighthouse tide', top_k: 3 } }],
      ['GET', '/v1/memories?limit=1', {}],
      ['POST', '/v1/memories', { body: { content: '' } }],
      [
        'POST',
        '/v1/memories',
        { raw: '{"content": ', headers: { 'content-type': 'application/json' } },
      ],
      ['GET', `/v1/memories/${'ab'.repeat(16)}`, {}],
      ['GET', '/v1/no-such-route', {}],
      ['GET', '/v1/memories', { key: null }],
      ['GET', '/v1/memories', { key: 'fb_not_a_key' }],
    ];
    for (const [method, path, opts] of calls) {
      const viaSocket = await t.req(method, path, opts);
      const inProcess = await t.inject(method, path, opts);
      expect(comparable(inProcess), `${method} ${path}`).toEqual(comparable(viaSocket));
    }
  });

  it('refuses a stream route: streams need a socket', async () => {
    await expect(t.inject('POST', '/v1/subscribe', { body: {} })).rejects.toThrow(
      /answered a stream/,
    );
  });
});
