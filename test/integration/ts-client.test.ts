/**
 * @flashbulb/client (clients/typescript) against a live server: generated methods, workspace
 * scoping, typed errors, retries on 429 / 503 honouring Retry-After, subscribe() as an async
 * iterator with feed() and close(), upload and text answers — and the README's example as printed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlashbulbClient, FlashbulbError, type SubscribeMessageEvent } from '../../clients/typescript/src/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let admin: FlashbulbClient;

beforeAll(async () => {
  t = await startTestApp({ rateLimitWrites: 2 });
  admin = new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey });
});
afterAll(async () => t.stop());

describe('@flashbulb/client', () => {
  it('remembers, reads, lists and recalls through the generated methods', async () => {
    const ws = await admin.workspacesCreate({ slug: 'client-a' });
    const client = new FlashbulbClient({ baseUrl: t.base, apiKey: ws.api_key });
    expect((await client.whoami()).workspace.slug).toBe('client-a');
    const m = await client.remember({ content: 'Bob likes sailing on Sundays', entity_id: 'bob' });
    expect(await client.get(m.memory_id)).toMatchObject({ memory_id: m.memory_id, content: 'Bob likes sailing on Sundays', entity_id: 'bob' });
    const page = await client.list({ entity_id: 'bob', limit: 10 });
    expect(page.memories.map((x) => x.memory_id)).toEqual([m.memory_id]);
    const hits = await client.recall({ cue: 'sailing', strategies: ['similarity'] });
    expect(hits.results[0]?.memory.memory_id).toBe(m.memory_id);
    expect(await client.batchGet({ memory_ids: [m.memory_id] })).toHaveLength(1);
    expect(await client.entities()).toEqual(['bob']);
    expect(typeof (await admin.metrics())).toBe('string');
  });

  it('scopes to a workspace with withWorkspace (admin keys)', async () => {
    await admin.workspacesCreate({ slug: 'client-b' });
    const inB = admin.withWorkspace('client-b');
    const m = await inB.remember({ content: 'lives in workspace b' });
    expect((await inB.list()).memories.map((x) => x.memory_id)).toEqual([m.memory_id]);
    expect((await admin.list()).memories.map((x) => x.memory_id)).not.toContain(m.memory_id);
  });

  it('throws FlashbulbError with the status and error_code', async () => {
    const err = await admin.get('0'.repeat(32)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlashbulbError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    await expect(admin.recall({ cue: '' , strategies: ['similarity'] })).rejects.toMatchObject({ status: 400, code: 'invalid_input', message: 'cue must not be empty' });
    const anonymous = new FlashbulbClient({ baseUrl: t.base });
    await expect(anonymous.whoami()).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });

  it('retries 429 after Retry-After, and reports it when retries are off', async () => {
    const ws = await admin.workspacesCreate({ slug: 'client-rate' });
    const noRetry = new FlashbulbClient({ baseUrl: t.base, apiKey: ws.api_key, retry: { retries: 0 } });
    const errors: unknown[] = [];
    for (let i = 0; i < 4; i++) await noRetry.remember({ content: `burst ${i}` }).catch((e: unknown) => errors.push(e));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatchObject({ status: 429, code: 'rate_limited', retryAfterS: expect.any(Number) });
    const patient = new FlashbulbClient({ baseUrl: t.base, apiKey: ws.api_key, retry: { retries: 5 } });
    const stored = await Promise.all([0, 1, 2, 3].map((i) => patient.remember({ content: `patient ${i}` })));
    expect(stored).toHaveLength(4);
  });

  it('retries 503 answers and gives up after the configured retries', async () => {
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls += 1;
      if (calls <= 2) return new Response('{"error_code":"unavailable","message":"draining"}', { status: 503, headers: { 'retry-after': '0' } });
      return fetch(input, init);
    };
    const client = new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey, fetch: flaky });
    expect((await client.whoami()).role).toBe('admin');
    expect(calls).toBe(3);
    calls = 0;
    const impatient = new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey, fetch: flaky, retry: { retries: 1 } });
    await expect(impatient.whoami()).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    expect(calls).toBe(2);
  });

  it('subscribe(): pushes as an async iterator, feed() and close()', async () => {
    const ws = await admin.workspacesCreate({ slug: 'client-sub' });
    const client = new FlashbulbClient({ baseUrl: t.base, apiKey: ws.api_key });
    const m = await client.remember({ content: 'the garden needs watering every evening' });
    const sub = await client.subscribe({ confidence_threshold: 0.3 });
    expect(sub.id).toBeGreaterThan(0);
    await sub.feed('the garden needs watering every evening.');
    const pushes: SubscribeMessageEvent[] = [];
    for await (const push of sub) {
      pushes.push(push);
      await sub.close();
    }
    expect(pushes[0]).toMatchObject({ subscription_id: sub.id, memory: { memory_id: m.memory_id }, strategy: 'similarity' });
    expect(sub.closedReason).toBe('closed');
  });

  it('uploads documents', async () => {
    const out = await admin.upload([{ name: 'notes/trip.md', content: '# Trip\n\nWe fly to Lisbon in May.' }]);
    expect(out).toMatchObject({ uploaded: 1, files: [{ file_path: 'notes/trip.md', status: 'created' }] });
  });

  it("runs the README's example as printed", async () => {
    const readme = readFileSync(new URL('../../clients/typescript/README.md', import.meta.url), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(example.split('\n').filter((l) => l.trim() !== '')).toHaveLength(5);
    const logged: unknown[] = [];
    const body = example
      .replace("import { FlashbulbClient } from '@flashbulb/client';", '')
      .replaceAll('process.env.FLASHBULB_URL', JSON.stringify(t.base))
      .replaceAll('process.env.FLASHBULB_API_KEY', JSON.stringify(t.adminKey))
      .replaceAll('console.log', 'log');
    const run = new Function('FlashbulbClient', 'log', `return (async () => {${body}})();`) as (c: typeof FlashbulbClient, log: (v: unknown) => void) => Promise<void>;
    await run(FlashbulbClient, (v) => logged.push(v));
    expect(logged[0]).toEqual(expect.stringContaining('Lisbon'));
  });
});
