/**
 * Subscriptions over REST/SSE on real sockets (DESIGN.md 8; spec 3, 4.4, 6): the `subscribed`
 * handshake, pushes for exactly the memories at or above the threshold (each once), `id:` =
 * sequence number, chunk offsets across feeds, the idle flush, pushes for memories written while
 * subscribed, the entity / kind / time-scope filters, close by DELETE and by disconnect,
 * workspace isolation and the 100-per-workspace limit.
 *
 * The hash embedder is in use (texts sharing words are similar), so the expected set of pushes
 * is computed here with the same embedder: relevance = cosine of the chunk and the content.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openSse, subscribeSse, type SseStream } from '../helpers/sse.ts';
import { until, untilAllPushes } from '../helpers/wait.ts';
import { hashCosine } from '../helpers/hash-cosine.ts';

const DIM = 384;

const cos = (a: string, b: string): number => hashCosine(a, b, DIM);

let seq = 0;
const uniqueSlug = (prefix: string): string => `${prefix}-${process.pid}-${++seq}`;

async function createWorkspace(t: TestApp, prefix: string): Promise<{ slug: string; key: string }> {
  const slug = uniqueSlug(prefix);
  const res = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(res.status, res.text).toBe(201);
  return { slug, key: res.body.api_key as string };
}

async function remember(t: TestApp, key: string, body: Record<string, unknown>): Promise<any> {
  const res = await t.req('POST', '/v1/memories', { key, body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Feeds text; `base` is '/v1' or a workspace-scoped '/v1/workspaces/<slug>'. */
async function feed(
  t: TestApp,
  key: string,
  id: number,
  text: string,
  base = '/v1',
): Promise<void> {
  const res = await t.req('POST', `${base}/subscribe/${id}/feed`, { key, body: { text } });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({});
}

/** Memories whose relevance to `chunk` reaches `threshold`, by content. */
function expectedFor(
  chunk: string,
  memories: ReadonlyArray<{ memory_id: string; content: string }>,
  threshold: number,
): string[] {
  return memories
    .filter((m) => cos(chunk, m.content) >= threshold)
    .map((m) => m.memory_id)
    .sort();
}

/** Waits until `stream` holds every push the server produced for subscription `id` (no late push can follow). */
function allPushes(stream: SseStream, id: number): Promise<void> {
  return untilAllPushes(
    () => t.app.svc.subscriptions.pushed(id),
    () => stream.pushes.length,
  );
}

async function waitUntil(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
  await until(pred, { what, deadlineMs: timeoutMs });
}

let t: TestApp;
const open: SseStream[] = [];

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  for (const s of open) s.destroy();
  await t.stop();
});

async function subscribe(
  key: string,
  body: unknown = {},
): Promise<{ stream: SseStream; id: number }> {
  const s = await subscribeSse(t.base, key, body);
  open.push(s.stream);
  return s;
}

describe('SSE subscribe: handshake, matching, sequence numbers, offsets', () => {
  const THRESHOLD = 0.4;
  let ws: { slug: string; key: string };
  let mems: any[];

  beforeAll(async () => {
    ws = await createWorkspace(t, 'sub-core');
    const contents = [
      'The quarterly budget review meeting is on Tuesday.',
      'Budget review notes for the quarterly planning meeting.',
      'Quarterly budget numbers were sent to finance.',
      'The cat sat on a purple mat near the window.',
      'The purple cat likes sleeping on the mat.',
      'Kangaroos jump over tall fences in the outback.',
      'Seagulls steal chips from tourists at the pier.',
    ];
    mems = [];
    for (const content of contents) mems.push(await remember(t, ws.key, { content }));
  });

  it('opens with a `subscribed` event carrying a safe-integer id, then pushes exactly the matches, each once', async () => {
    const res = await openSse(t.base, '/v1/subscribe', {
      key: ws.key,
      body: { confidence_threshold: THRESHOLD },
    });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    open.push(res);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const [first] = await res.waitFor('subscribed');
    expect(res.events[0]?.event).toBe('subscribed');
    const id = first?.json?.subscription_id as number;
    expect(Number.isSafeInteger(id)).toBe(true);
    expect(id).toBeGreaterThan(0);
    expect(id).toBeLessThan(2 ** 53);
    expect(t.app.svc.subscriptions.size).toBeGreaterThanOrEqual(1);

    // 1. A sentence about the budget meeting.
    const s1 = 'Please prepare for the quarterly budget review meeting.';
    const want1 = expectedFor(s1, mems, THRESHOLD);
    // The fixture must separate: some match, some do not.
    expect(want1.length).toBeGreaterThanOrEqual(2);
    expect(want1.length).toBeLessThan(mems.length);
    const before = Date.now() * 1000;
    await feed(t, ws.key, id, s1);
    const p1 = await res.waitForPushes(want1.length);
    await allPushes(res, id);
    expect(res.pushes).toHaveLength(want1.length);
    expect(p1.map((p) => p.memory.memory_id).sort()).toEqual(want1);
    for (const [i, p] of p1.entries()) {
      const m = mems.find((x) => x.memory_id === p.memory.memory_id);
      expect(p).toMatchObject({
        subscription_id: id,
        strategy: 'similarity',
        chunk_offset: 0,
        sequence_number: i + 1,
      });
      expect(p.memory).toMatchObject({
        memory_id: m.memory_id,
        content: m.content,
        kind: 'episode',
      });
      expect(p.confidence).toBeCloseTo(cos(s1, m.content), 3);
      expect(p.confidence).toBeGreaterThanOrEqual(THRESHOLD);
      expect(typeof p.score).toBe('number');
      expect(Number.isFinite(p.score)).toBe(true);
      expect(p.push_timestamp_us).toBeGreaterThanOrEqual(before);
      expect(p.push_timestamp_us).toBeLessThanOrEqual(Date.now() * 1000 + 1000);
    }
    // Within one chunk, best first.
    for (let i = 1; i < p1.length; i++)
      expect(p1[i].confidence).toBeLessThanOrEqual(p1[i - 1].confidence);
    // `id:` is the sequence number, 1, 2, 3…
    expect(res.named('message').map((e) => e.id)).toEqual(p1.map((_, i) => String(i + 1)));

    // 2. The same text again pushes nothing new.
    await feed(t, ws.key, id, s1);
    // 3. A second sentence in a second call: its chunk offset counts everything fed so far
    //    (two copies of s1, then one leading space that is not part of the chunk).
    const s3 = ' The purple cat sat on the mat today.';
    const want3 = expectedFor(s3.trim(), mems, THRESHOLD).filter((m) => !want1.includes(m));
    expect(want3.length).toBeGreaterThanOrEqual(1);
    await feed(t, ws.key, id, s3);
    const all = await res.waitForPushes(want1.length + want3.length);
    await allPushes(res, id);
    expect(res.pushes).toHaveLength(want1.length + want3.length);
    const p3 = all.slice(want1.length);
    // Nothing arrived between the two batches: the re-fed sentence pushed nothing.
    expect(p3.map((p) => p.memory.memory_id).sort()).toEqual(want3);
    for (const p of p3) expect(p.chunk_offset).toBe(2 * s1.length + 1);
    expect(res.named('message').map((e) => e.id)).toEqual(all.map((_, i) => String(i + 1)));
    expect(all.map((p) => p.sequence_number)).toEqual(all.map((_, i) => i + 1));
    // Each memory at most once.
    expect(new Set(all.map((p) => p.memory.memory_id)).size).toBe(all.length);
    // No push for a memory below the threshold of every chunk fed.
    for (const p of all)
      expect(
        Math.max(cos(s1, p.memory.content), cos(s3.trim(), p.memory.content)),
      ).toBeGreaterThanOrEqual(THRESHOLD);
  });

  it('uses 0.5 as the default threshold', async () => {
    const { stream, id } = await subscribe(ws.key, {});
    const s = 'Quarterly budget review meeting notes for finance.';
    const want = expectedFor(s, mems, 0.5);
    const between = mems.filter((m) => cos(s, m.content) >= 0.3 && cos(s, m.content) < 0.5);
    expect(want.length).toBeGreaterThanOrEqual(1);
    expect(between.length).toBeGreaterThanOrEqual(1);
    await feed(t, ws.key, id, s);
    await stream.waitForPushes(want.length);
    await allPushes(stream, id);
    expect(stream.pushes.map((p) => p.memory.memory_id).sort()).toEqual(want);
  });

  it('flushes text without a sentence end after the idle timeout (~300 ms)', async () => {
    const { stream, id } = await subscribe(ws.key, { confidence_threshold: THRESHOLD });
    const text = 'quarterly budget review meeting';
    const want = expectedFor(text, mems, THRESHOLD);
    expect(want.length).toBeGreaterThanOrEqual(1);
    const fedAt = Date.now();
    await feed(t, ws.key, id, text);
    await stream.waitForPushes(want.length, 3000);
    const elapsed = Date.now() - fedAt;
    // Nothing was pushed in the first 100 ms (nor, below, before the idle timeout).
    expect(stream.named('message').filter((e) => e.at - fedAt < 100)).toHaveLength(0);
    expect(stream.named('message')[0]!.at - fedAt).toBeGreaterThanOrEqual(250);
    // At least the idle timeout; no upper bound (a loaded machine may be slow): waitForPushes
    // above fails, naming what it waited for, if the flush never comes.
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(stream.pushes.map((p) => p.memory.memory_id).sort()).toEqual(want);
    for (const p of stream.pushes) expect(p.chunk_offset).toBe(0);
  });

  it('the idle flush offset follows the text fed before it', async () => {
    const { stream, id } = await subscribe(ws.key, { confidence_threshold: THRESHOLD });
    const a = 'Seagulls steal chips from tourists at the pier. ';
    const b = '  purple cat mat';
    await feed(t, ws.key, id, a);
    await stream.waitForPushes(expectedFor(a.trim(), mems, THRESHOLD).length);
    const n = stream.pushes.length;
    expect(n).toBeGreaterThanOrEqual(1);
    for (const p of stream.pushes) expect(p.chunk_offset).toBe(0);
    await feed(t, ws.key, id, b);
    const want = expectedFor('purple cat mat', mems, THRESHOLD).filter(
      (m) => !stream.pushes.some((p) => p.memory.memory_id === m),
    );
    expect(want.length).toBeGreaterThanOrEqual(1);
    await stream.waitForPushes(n + want.length, 3000);
    for (const p of stream.pushes.slice(n)) expect(p.chunk_offset).toBe(a.length + 2);
  });

  it('pushes a memory written while subscribed when it matches the recent chunks, and not one that does not', async () => {
    const own = await createWorkspace(t, 'sub-writes');
    await remember(t, own.key, { content: 'Seagulls steal chips from tourists at the pier.' });
    const { stream, id } = await subscribe(own.key, { confidence_threshold: THRESHOLD });
    const pre = 'Hello and welcome everyone. ';
    const chunk = 'The orchestra rehearses the symphony on Friday evening.';
    await feed(t, own.key, id, pre + chunk);
    await allPushes(stream, id);
    expect(stream.pushes).toHaveLength(0);

    const miss = 'Kangaroos jump over tall fences in the outback.';
    const hit = 'Symphony orchestra rehearses on Friday evening at the hall.';
    expect(cos(chunk, miss)).toBeLessThan(THRESHOLD);
    expect(cos(pre, hit)).toBeLessThan(THRESHOLD);
    expect(cos(chunk, hit)).toBeGreaterThanOrEqual(THRESHOLD);
    await remember(t, own.key, { content: miss });
    const m = await remember(t, own.key, { content: hit });
    const [p] = await stream.waitForPushes(1);
    await allPushes(stream, id);
    expect(stream.pushes).toHaveLength(1);
    expect(p).toMatchObject({
      subscription_id: id,
      sequence_number: 1,
      strategy: 'similarity',
      chunk_offset: pre.length,
    });
    expect(p.memory).toMatchObject({ memory_id: m.memory_id, content: hit });
    expect(p.confidence).toBeCloseTo(cos(chunk, hit), 3);
    expect(stream.named('message')[0]?.id).toBe('1');

    // Already pushed: feeding the chunk again does not push it a second time.
    await feed(t, own.key, id, chunk);
    const hit2 = await remember(t, own.key, {
      content: 'The orchestra plays the symphony on Friday.',
    });
    await stream.waitForPushes(2);
    await allPushes(stream, id);
    expect(stream.pushes.map((x) => x.memory.memory_id)).toEqual([m.memory_id, hit2.memory_id]);
    expect(stream.pushes[1].sequence_number).toBe(2);
    expect(stream.named('message').map((e) => e.id)).toEqual(['1', '2']);
  });

  it('a subscription on a workspace with no memories yet can be fed, and pushes matching writes', async () => {
    // A new workspace has no memories: feeding must still succeed (nothing to push), the chunk
    // must be kept as a recent chunk, and the subscription must keep working afterwards.
    const own = await createWorkspace(t, 'sub-empty');
    const { stream, id } = await subscribe(own.key, { confidence_threshold: THRESHOLD });
    const chunk = 'The orchestra rehearses the symphony on Friday evening.';
    await feed(t, own.key, id, chunk);
    const hit = await remember(t, own.key, {
      content: 'Symphony orchestra rehearses on Friday evening at the hall.',
    });
    const [p] = await stream.waitForPushes(1);
    expect(p).toMatchObject({ subscription_id: id, sequence_number: 1, chunk_offset: 0 });
    expect(p.memory.memory_id).toBe(hit.memory_id);
    // Later feeds keep working.
    const other = await remember(t, own.key, {
      content: 'Seagulls steal chips from tourists at the pier.',
    });
    await feed(t, own.key, id, ' Why do seagulls steal chips from tourists?');
    await stream.waitForPushes(2);
    expect(stream.pushes[1]).toMatchObject({ sequence_number: 2, chunk_offset: chunk.length + 1 });
    expect(stream.pushes[1].memory.memory_id).toBe(other.memory_id);
  });
});

describe('SSE subscribe: many matches', () => {
  it('pushes every memory at or above the threshold, however many there are, and re-feeding reaches none twice', async () => {
    // More matches than the shard's per-chunk search size (32): all must be pushed, and memories
    // already pushed must not hide the rest from later chunks. (The default cap of 5 pushes per
    // chunk is lifted here; test/integration/subscribe-max-pushes.test.ts covers the cap.)
    const ws = await createWorkspace(t, 'sub-many');
    const N = 40;
    const mems: any[] = [];
    for (let i = 0; i < N; i++)
      mems.push(
        await remember(t, ws.key, { content: `quarterly budget review meeting notes item${i}` }),
      );
    await remember(t, ws.key, { content: 'Seagulls steal chips from tourists at the pier.' });
    const s = 'quarterly budget review meeting notes.';
    for (const m of mems) expect(cos(s, m.content)).toBeGreaterThanOrEqual(0.5);
    const { stream, id } = await subscribe(ws.key, {
      confidence_threshold: 0.5,
      max_pushes_per_chunk: 1000,
    });
    await feed(t, ws.key, id, s);
    await feed(t, ws.key, id, ` ${s}`);
    await stream.until(
      (evs) => evs.filter((e) => e.event === 'message').length >= N,
      3000,
      `${N} pushes`,
    );
    await allPushes(stream, id);
    expect(stream.pushes.map((p) => p.memory.memory_id).sort()).toEqual(
      mems.map((m) => m.memory_id).sort(),
    );
    expect(stream.pushes.map((p) => p.sequence_number)).toEqual(mems.map((_, i) => i + 1));
  });
});

describe('SSE subscribe: filters', () => {
  const THRESHOLD = 0.35;

  it('entity_id: only that entity’s memories, for fed chunks and for new writes', async () => {
    const ws = await createWorkspace(t, 'sub-entity');
    const alice = await remember(t, ws.key, {
      content: 'Alice booked flights to Lisbon for the conference.',
      entity_id: 'alice',
    });
    const bob = await remember(t, ws.key, {
      content: 'Bob booked flights to Lisbon for the conference.',
      entity_id: 'bob',
    });
    const none = await remember(t, ws.key, {
      content: 'Someone booked flights to Lisbon for the conference.',
    });
    const { stream, id } = await subscribe(ws.key, {
      confidence_threshold: THRESHOLD,
      entity_id: 'alice',
    });
    const s = 'Who booked flights to Lisbon for the conference?';
    for (const m of [alice, bob, none]) expect(cos(s, m.content)).toBeGreaterThanOrEqual(THRESHOLD);
    await feed(t, ws.key, id, s);
    await stream.waitForPushes(1);
    await allPushes(stream, id);
    expect(stream.pushes.map((p) => p.memory.memory_id)).toEqual([alice.memory_id]);
    expect(stream.pushes[0].memory.entity_id).toBe('alice');

    await remember(t, ws.key, { content: 'Bob also booked flights to Lisbon.', entity_id: 'bob' });
    const alice2 = await remember(t, ws.key, {
      content: 'Alice also booked flights to Lisbon.',
      entity_id: 'alice',
    });
    await stream.waitForPushes(2);
    await allPushes(stream, id);
    expect(stream.pushes.map((p) => p.memory.memory_id)).toEqual([
      alice.memory_id,
      alice2.memory_id,
    ]);
  });

  it('kind_filter: the default pushes episodes and revisions, never documents or propositions, nor superseded versions', async () => {
    const ws = await createWorkspace(t, 'sub-kinds');
    const text =
      'The quarterly budget review meeting is on Tuesday. Finance will present the quarterly budget numbers at the meeting.';
    const form = new FormData();
    form.append('files', new Blob([text], { type: 'text/plain' }), 'notes/budget.txt');
    const up = await fetch(`${t.base}/v1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.key}` },
      body: form,
    });
    expect(up.status, await up.clone().text()).toBeLessThan(300);
    const episode = await remember(t, ws.key, {
      content: 'The quarterly budget review meeting got moved.',
    });
    const toRevise = await remember(t, ws.key, {
      content: 'Draft agenda for the quarterly budget review meeting.',
    });
    const rev = await t.req('PUT', `/v1/revise/${toRevise.memory_id}`, {
      key: ws.key,
      body: { content: 'Final agenda for the quarterly budget review meeting.' },
    });
    expect(rev.status, rev.text).toBe(200);
    expect(rev.body.kind).toBe('revision');

    const list = await t.req('GET', '/v1/memories?limit=1000', { key: ws.key });
    expect(list.status).toBe(200);
    const all: any[] = list.body.memories;
    const docs = all.filter((m) => m.kind === 'document' || m.kind === 'proposition');
    expect(docs.some((m) => m.kind === 'document')).toBe(true);
    expect(docs.some((m) => m.kind === 'proposition')).toBe(true);

    const s = 'When is the quarterly budget review meeting?';
    const relevant = all.filter((m) => cos(s, m.content) >= THRESHOLD);
    expect(
      relevant.filter((m) => m.kind === 'document' || m.kind === 'proposition').length,
    ).toBeGreaterThanOrEqual(1);

    const def = await subscribe(ws.key, { confidence_threshold: THRESHOLD });
    const wantDefault = relevant
      .filter((m) => ['episode', 'insight', 'revision'].includes(m.kind))
      .map((m) => m.memory_id)
      .sort();
    expect(wantDefault).toEqual([episode.memory_id, toRevise.memory_id].sort());
    await feed(t, ws.key, def.id, s);
    await def.stream.waitForPushes(wantDefault.length);
    await allPushes(def.stream, def.id);
    expect(def.stream.pushes.map((p) => p.memory.memory_id).sort()).toEqual(wantDefault);
    const revPush = def.stream.pushes.find((p) => p.memory.memory_id === toRevise.memory_id);
    expect(revPush.memory).toMatchObject({
      kind: 'revision',
      content: 'Final agenda for the quarterly budget review meeting.',
    });
    for (const p of def.stream.pushes) expect(p.memory.superseded_by ?? null).toBeNull();

    const only = await subscribe(ws.key, {
      confidence_threshold: THRESHOLD,
      kind_filter: ['document', 'proposition'],
    });
    const wantDocs = relevant
      .filter((m) => m.kind === 'document' || m.kind === 'proposition')
      .map((m) => m.memory_id)
      .sort();
    await feed(t, ws.key, only.id, s);
    await only.stream.waitForPushes(wantDocs.length);
    await allPushes(only.stream, only.id);
    expect(only.stream.pushes.map((p) => p.memory.memory_id).sort()).toEqual(wantDocs);

    const revOnly = await subscribe(ws.key, {
      confidence_threshold: THRESHOLD,
      kind_filter: ['revision'],
    });
    await feed(t, ws.key, revOnly.id, s);
    await revOnly.stream.waitForPushes(1);
    await allPushes(revOnly.stream, revOnly.id);
    expect(revOnly.stream.pushes.map((p) => p.memory.memory_id)).toEqual([toRevise.memory_id]);
  });

  it('kind_filter with an unknown kind is a 400', async () => {
    const ws = await createWorkspace(t, 'sub-badkind');
    const res = await openSse(t.base, '/v1/subscribe', {
      key: ws.key,
      body: { kind_filter: ['dream'] },
    });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.status).toBe(400);
  });

  it('time_scope_us: only memories created within that many µs before now', async () => {
    const ws = await createWorkspace(t, 'sub-scope');
    // The old memory is imported with a creation time a minute back, instead of waiting for one.
    const old = {
      memory_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
      content: 'The lighthouse keeper polished the brass lamp.',
    };
    const line = JSON.stringify({ memory: { ...old, created_at: Date.now() * 1000 - 60_000_000 } });
    const imported = await t.req('POST', `/v1/workspaces/${ws.slug}/import`, {
      raw: `${line}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.imported).toBe(1);
    const fresh = await remember(t, ws.key, {
      content: 'The lighthouse keeper polished the lamp again.',
    });
    const { stream, id } = await subscribe(ws.key, {
      confidence_threshold: THRESHOLD,
      time_scope_us: 30_000_000,
    });
    const s = 'The lighthouse keeper polished the lamp.';
    expect(cos(s, old.content)).toBeGreaterThanOrEqual(THRESHOLD);
    expect(cos(s, fresh.content)).toBeGreaterThanOrEqual(THRESHOLD);
    await feed(t, ws.key, id, s);
    await stream.waitForPushes(1);
    await allPushes(stream, id);
    expect(stream.pushes.map((p) => p.memory.memory_id)).toEqual([fresh.memory_id]);

    // Without a time scope both match.
    const all = await subscribe(ws.key, { confidence_threshold: THRESHOLD });
    await feed(t, ws.key, all.id, s);
    await all.stream.waitForPushes(2);
    expect(all.stream.pushes.map((p) => p.memory.memory_id).sort()).toEqual(
      [old.memory_id, fresh.memory_id].sort(),
    );
  });
});

describe('SSE subscribe: closing', () => {
  it('DELETE sends `event: closed`, ends the stream, and later feeds and closes are 404', async () => {
    const ws = await createWorkspace(t, 'sub-close');
    const { stream, id } = await subscribe(ws.key, {});
    const size = t.app.svc.subscriptions.size;
    const del = await t.req('DELETE', `/v1/subscribe/${id}`, { key: ws.key });
    expect(del.status, del.text).toBe(200);
    expect(del.body).toEqual({});
    await stream.waitFor('closed');
    await stream.ended;
    expect(stream.events.map((e) => e.event)).toEqual(['subscribed', 'closed']);
    expect(t.app.svc.subscriptions.size).toBe(size - 1);
    const f = await t.req('POST', `/v1/subscribe/${id}/feed`, {
      key: ws.key,
      body: { text: 'anything at all here.' },
    });
    expect(f.status).toBe(404);
    expect(f.body.error_code).toBe('not_found');
    expect((await t.req('DELETE', `/v1/subscribe/${id}`, { key: ws.key })).status).toBe(404);
  });

  it('a client disconnect closes the subscription', async () => {
    const ws = await createWorkspace(t, 'sub-gone');
    const { stream, id } = await subscribe(ws.key, {});
    const size = t.app.svc.subscriptions.size;
    stream.destroy();
    await waitUntil(
      () => t.app.svc.subscriptions.size === size - 1,
      3000,
      'the registry to drop the subscription',
    );
    const f = await t.req('POST', `/v1/subscribe/${id}/feed`, {
      key: ws.key,
      body: { text: 'anything at all here.' },
    });
    expect(f.status).toBe(404);
  });

  it('feeding or closing an unknown or malformed id', async () => {
    const ws = await createWorkspace(t, 'sub-unknown');
    expect(
      (
        await t.req('POST', '/v1/subscribe/12345/feed', {
          key: ws.key,
          body: { text: 'hello there friend.' },
        })
      ).status,
    ).toBe(404);
    expect((await t.req('DELETE', '/v1/subscribe/12345', { key: ws.key })).status).toBe(404);
    expect(
      (await t.req('POST', '/v1/subscribe/abc/feed', { key: ws.key, body: { text: 'x' } })).status,
    ).toBe(400);
    const { id } = await subscribe(ws.key, {});
    expect(
      (await t.req('POST', `/v1/subscribe/${id}/feed`, { key: ws.key, body: {} })).status,
    ).toBe(400);
  });
});

describe('SSE subscribe: workspaces and limits', () => {
  it('another workspace’s key cannot feed or close a subscription (404), and the owner still can', async () => {
    const a = await createWorkspace(t, 'sub-iso-a');
    const b = await createWorkspace(t, 'sub-iso-b');
    const m = await remember(t, a.key, { content: 'The vault combination changes every Monday.' });
    const { stream, id } = await subscribe(a.key, { confidence_threshold: 0.4 });
    const s = 'The vault combination changes every Monday morning.';

    const fb = await t.req('POST', `/v1/subscribe/${id}/feed`, { key: b.key, body: { text: s } });
    expect(fb.status).toBe(404);
    expect(fb.body.error_code).toBe('not_found');
    expect((await t.req('DELETE', `/v1/subscribe/${id}`, { key: b.key })).status).toBe(404);
    // An admin key naming the wrong workspace is also a 404.
    expect(
      (await t.req('POST', `/v1/workspaces/${b.slug}/subscribe/${id}/feed`, { body: { text: s } }))
        .status,
    ).toBe(404);
    expect((await t.req('DELETE', `/v1/workspaces/${b.slug}/subscribe/${id}`)).status).toBe(404);
    await allPushes(stream, id);
    expect(t.app.svc.subscriptions.pushed(id)).toBe(0);
    expect(stream.pushes).toHaveLength(0);
    expect(stream.isEnded).toBe(false);

    // The owner's workspace, by key or by an admin key naming it, still works.
    await feed(t, t.adminKey, id, s, `/v1/workspaces/${a.slug}`);
    await stream.waitForPushes(1);
    expect(stream.pushes[0].memory.memory_id).toBe(m.memory_id);
    const del = await t.req('DELETE', `/v1/subscribe/${id}`, { key: a.key });
    expect(del.status).toBe(200);
    await stream.ended;
  });

  it('an admin key may open a subscription under /v1/workspaces/<slug>/; it belongs to that workspace', async () => {
    const a = await createWorkspace(t, 'sub-scoped-a');
    const b = await createWorkspace(t, 'sub-scoped-b');
    const m = await remember(t, a.key, {
      content: 'The greenhouse tomatoes need watering every morning.',
    });
    const opened = await openSse(t.base, `/v1/workspaces/${a.slug}/subscribe`, {
      key: t.adminKey,
      body: { confidence_threshold: 0.4 },
    });
    expect(opened.ok).toBe(true);
    if (!opened.ok) return;
    open.push(opened);
    const [first] = await opened.waitFor('subscribed');
    const id = first?.json?.subscription_id as number;
    const s = 'Water the greenhouse tomatoes every morning.';
    expect(
      (await t.req('POST', `/v1/subscribe/${id}/feed`, { key: b.key, body: { text: s } })).status,
    ).toBe(404);
    await feed(t, a.key, id, s);
    const [p] = await opened.waitForPushes(1);
    expect(p.memory.memory_id).toBe(m.memory_id);
    expect((await t.req('DELETE', `/v1/workspaces/${a.slug}/subscribe/${id}`)).status).toBe(200);
    await opened.ended;
    expect(opened.named('closed')).toHaveLength(1);
  });

  it('the 101st open subscription in a workspace is a 429; other workspaces are unaffected', async () => {
    const ws = await createWorkspace(t, 'sub-limit');
    const other = await createWorkspace(t, 'sub-limit-other');
    const subs = await Promise.all(
      Array.from({ length: 100 }, () => subscribeSse(t.base, ws.key, {})),
    );
    try {
      expect(new Set(subs.map((s) => s.id)).size).toBe(100);
      const extra = await openSse(t.base, '/v1/subscribe', { key: ws.key, body: {} });
      expect(extra.ok).toBe(false);
      if (extra.ok) return;
      expect(extra.status).toBe(429);
      expect(extra.body.error_code).toBe('rate_limited');

      const elsewhere = await subscribeSse(t.base, other.key, {});
      elsewhere.stream.destroy();

      // Closing one frees a slot.
      const first = subs[0] as (typeof subs)[number];
      expect((await t.req('DELETE', `/v1/subscribe/${first.id}`, { key: ws.key })).status).toBe(
        200,
      );
      await first.stream.ended;
      const again = await subscribeSse(t.base, ws.key, {});
      subs.push(again);
    } finally {
      for (const s of subs) s.stream.destroy();
    }
  });
});
