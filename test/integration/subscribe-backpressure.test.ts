/**
 * A subscriber that stops reading must not grow server memory without bound (DESIGN.md 8): once
 * the socket's buffers are full, pushes wait in a per-subscription queue of at most QUEUE_MAX
 * (256); past that the oldest are dropped and counted in flashbulb_subscription_dropped_total.
 * When the reader resumes it gets what was kept, newest included, in sequence order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_MAX } from '../../src/subscribe/registry.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { subscribeSse, type SseStream } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let stream: SseStream | null = null;

beforeAll(async () => {
  // Durability, contradiction checks and reflection are not under test here. 'os' durability and
  // no contradiction checks (which scan every large, near-identical new memory against its
  // neighbours) keep the writes quick, which matters: uWS closes a response whose writes make no
  // progress for 10 s. Without background reflection no insight memories join the pushes, so the
  // sequence numbers are exactly the writes.
  t = await startTestApp(
    {},
    {
      FLASHBULB_DURABILITY: 'os',
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
    },
  );
});
afterAll(async () => {
  stream?.destroy();
  await t.stop();
});

async function droppedTotal(): Promise<number> {
  const res = await t.req('GET', '/v1/metrics');
  expect(res.status).toBe(200);
  const line = res.text
    .split('\n')
    .find((l) => /^flashbulb_subscription_dropped_total(\{[^}]*\})? /.test(l));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('slow SSE reader', () => {
  it('keeps at most QUEUE_MAX pushes queued, drops the oldest and counts them', async () => {
    expect(QUEUE_MAX).toBe(256);
    const slug = `sub-slow-${process.pid}`;
    const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
    expect(created.status, created.text).toBe(201);
    const key = created.body.api_key as string;
    // An unrelated memory, so the workspace is not empty when fed.
    expect(
      (
        await t.req('POST', '/v1/memories', {
          key,
          body: { content: 'Seagulls steal chips from tourists at the pier.' },
        })
      ).status,
    ).toBe(201);

    const sub = await subscribeSse(t.base, key, { confidence_threshold: 0.5 });
    stream = sub.stream;
    const { id } = sub;
    // A matching recent chunk, so every new write below is pushed.
    const f = await t.req('POST', `/v1/subscribe/${id}/feed`, {
      key,
      body: { text: 'quarterly budget review meeting notes.' },
    });
    expect(f.status, f.text).toBe(200);
    stream.pause();
    const droppedBefore = await droppedTotal();

    // Big pushes (the padding has no words, so the hash embedder ignores it; every memory shares
    // five words with the chunk and matches it) fill the kernel buffers quickly.
    const N = 600;
    const pad = '-'.repeat(60_000);
    let maxQueued = 0;
    let next = 0;
    const writer = async (): Promise<void> => {
      while (next < N) {
        const i = next++;
        const res = await t.req('POST', '/v1/memories', {
          key,
          body: { content: `quarterly budget review meeting notes item${i} tag${i * 7} ${pad}` },
        });
        expect(res.status, res.text).toBe(201);
        maxQueued = Math.max(maxQueued, t.app.svc.subscriptions.queued(id));
      }
    };
    // Writes are answered while the reader stalls (none waits on the stream): each writer's
    // replies are checked above, and none is refused.
    await Promise.all(Array.from({ length: 8 }, writer));
    // Every write's push was produced before its reply (the registry counts it first): wait for
    // that count rather than for a while, in case a reply ever overtakes its push.
    await until(() => t.app.svc.subscriptions.pushed(id) === N, {
      what: `all ${N} pushes produced`,
      deadlineMs: 5000,
    });
    maxQueued = Math.max(maxQueued, t.app.svc.subscriptions.queued(id));
    const queued = t.app.svc.subscriptions.queued(id);
    expect(maxQueued).toBeLessThanOrEqual(QUEUE_MAX);
    // The reader really was slow: the queue filled up.
    expect(queued).toBe(QUEUE_MAX);
    const droppedWhileStalled = (await droppedTotal()) - droppedBefore;
    expect(droppedWhileStalled).toBeGreaterThan(0);
    expect(droppedWhileStalled).toBeLessThan(N);
    expect(stream.isEnded).toBe(false);

    // Resuming: the reader gets what was kept, in order, ending with the newest push (seq N).
    stream.resume();
    await stream.until((evs) => evs.some((e) => e.id === String(N)), 20_000, `push ${N}`);
    const seqs = stream.pushes.map((p) => p.sequence_number as number);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
    expect(seqs.at(-1)).toBe(N);
    const dropped = (await droppedTotal()) - droppedBefore;
    expect(dropped).toBe(droppedWhileStalled);
    // Exactly the dropped ones are missing.
    expect(seqs.length).toBe(N - dropped);
    // The last QUEUE_MAX pushes were all kept (oldest were dropped).
    expect(seqs.slice(-QUEUE_MAX)).toEqual(
      Array.from({ length: QUEUE_MAX }, (_, i) => N - QUEUE_MAX + 1 + i),
    );
    expect(t.app.svc.subscriptions.queued(id)).toBe(0);

    // And the subscription still works normally afterwards.
    const last = await t.req('POST', '/v1/memories', {
      key,
      body: { content: 'quarterly budget review meeting notes final' },
    });
    expect(last.status).toBe(201);
    await stream.until((evs) => evs.some((e) => e.id === String(N + 1)), 5000, `push ${N + 1}`);
    expect(stream.pushes.at(-1).memory.memory_id).toBe(last.body.memory_id);

    const size = t.app.svc.subscriptions.size;
    stream.destroy();
    await until(() => t.app.svc.subscriptions.size === size - 1, {
      what: 'the closed stream to leave the registry',
      deadlineMs: 2000,
    });
    expect(t.app.svc.subscriptions.size).toBe(size - 1);
  });
});
