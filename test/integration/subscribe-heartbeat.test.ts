/**
 * An idle SSE subscription stays open (DESIGN.md 8): a comment line every 15 s keeps idle
 * connections alive, and neither the server nor its HTTP layer times the stream out meanwhile.
 * (About 16 s of wall time; it runs alongside the other files.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { subscribeSse, type SseStream } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let stream: SseStream | null = null;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  stream?.destroy();
  await t.stop();
});

describe('idle SSE subscription', () => {
  it('gets a keep-alive comment within ~15 s, stays open, and still delivers pushes afterwards', async () => {
    const slug = `sub-idle-${process.pid}`;
    const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
    expect(created.status, created.text).toBe(201);
    const key = created.body.api_key as string;
    const m = await t.req('POST', '/v1/memories', {
      key,
      body: { content: 'The night shift checks the boiler pressure hourly.' },
    });
    expect(m.status).toBe(201);

    const sub = await subscribeSse(t.base, key, { confidence_threshold: 0.4 });
    stream = sub.stream;
    const size = t.app.svc.subscriptions.size;
    const started = Date.now();
    await until(() => sub.stream.comments.length > 0 || sub.stream.isEnded, {
      what: 'a heartbeat comment (or the stream ending)',
      deadlineMs: 17_000,
      everyMs: 100,
    });
    expect(sub.stream.isEnded).toBe(false);
    expect(sub.stream.comments.length).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(14_000);
    // Comments are not events.
    expect(sub.stream.events.map((e) => e.event)).toEqual(['subscribed']);
    expect(t.app.svc.subscriptions.size).toBe(size);

    const f = await t.req('POST', `/v1/subscribe/${sub.id}/feed`, {
      key,
      body: { text: 'Who checks the boiler pressure on the night shift?' },
    });
    expect(f.status, f.text).toBe(200);
    const [p] = await sub.stream.waitForPushes(1);
    expect(p.memory.memory_id).toBe(m.body.memory_id);
    expect(sub.stream.named('message')[0]?.id).toBe('1');
  }, 30_000);
});
