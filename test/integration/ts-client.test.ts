/**
 * @flashbulb/client (clients/typescript) against a live server: generated methods, workspace
 * scoping, typed errors, retries on 429 / 503 honouring Retry-After, subscribe() as an async
 * iterator with feed() and close(), upload and text answers, and where it connects: the options,
 * else FLASHBULB_URL / FLASHBULB_API_KEY / FLASHBULB_WORKSPACE, else http://localhost:6381, with
 * errors that say which and how to change it. The README's examples: client-examples.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_URL,
  FlashbulbClient,
  FlashbulbConnectionError,
  FlashbulbError,
  type SubscribeMessageEvent,
} from '../../clients/typescript/src/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/** Runs `f` with these environment variables set (undefined: unset), then puts them back. */
async function withEnv(
  vars: Record<string, string | undefined>,
  f: () => Promise<void>,
): Promise<void> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const put = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  put(vars);
  try {
    await f();
  } finally {
    put(before);
  }
}

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
    expect(await client.get(m.memory_id)).toMatchObject({
      memory_id: m.memory_id,
      content: 'Bob likes sailing on Sundays',
      entity_id: 'bob',
    });
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
    await expect(admin.recall({ cue: '', strategies: ['similarity'] })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_input',
      message: 'cue must not be empty',
    });
    const anonymous = new FlashbulbClient({ baseUrl: t.base });
    await expect(anonymous.whoami()).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
  });

  it('retries 429 after Retry-After, and reports it when retries are off', async () => {
    const ws = await admin.workspacesCreate({ slug: 'client-rate' });
    const noRetry = new FlashbulbClient({
      baseUrl: t.base,
      apiKey: ws.api_key,
      retry: { retries: 0 },
    });
    const errors: unknown[] = [];
    for (let i = 0; i < 4; i++)
      await noRetry.remember({ content: `burst ${i}` }).catch((e: unknown) => errors.push(e));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatchObject({
      status: 429,
      code: 'rate_limited',
      retryAfterS: expect.any(Number),
    });
    const patient = new FlashbulbClient({
      baseUrl: t.base,
      apiKey: ws.api_key,
      retry: { retries: 5 },
    });
    const stored = await Promise.all(
      [0, 1, 2, 3].map((i) => patient.remember({ content: `patient ${i}` })),
    );
    expect(stored).toHaveLength(4);
  });

  it('retries 503 answers and gives up after the configured retries', async () => {
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls += 1;
      if (calls <= 2)
        return new Response('{"error_code":"unavailable","message":"draining"}', {
          status: 503,
          headers: { 'retry-after': '0' },
        });
      return fetch(input, init);
    };
    const client = new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey, fetch: flaky });
    expect((await client.whoami()).role).toBe('admin');
    expect(calls).toBe(3);
    calls = 0;
    const impatient = new FlashbulbClient({
      baseUrl: t.base,
      apiKey: t.adminKey,
      fetch: flaky,
      retry: { retries: 1 },
    });
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
    expect(pushes[0]).toMatchObject({
      subscription_id: sub.id,
      memory: { memory_id: m.memory_id },
      strategy: 'similarity',
    });
    expect(sub.closedReason).toBe('closed');
  });

  it('uploads documents', async () => {
    const out = await admin.upload([
      { name: 'notes/trip.md', content: '# Trip\n\nWe fly to Lisbon in May.' },
    ]);
    expect(out).toMatchObject({
      uploaded: 1,
      files: [{ file_path: 'notes/trip.md', status: 'created' }],
    });
  });

  it('reads FLASHBULB_URL, FLASHBULB_API_KEY and FLASHBULB_WORKSPACE when not given them', async () => {
    await admin.workspacesCreate({ slug: 'client-env' });
    const m = await admin
      .withWorkspace('client-env')
      .remember({ content: 'found through the environment' });
    await withEnv(
      {
        FLASHBULB_URL: `${t.base}/`,
        FLASHBULB_API_KEY: t.adminKey,
        FLASHBULB_WORKSPACE: 'client-env',
      },
      async () => {
        const fb = new FlashbulbClient();
        expect((await fb.whoami()).role).toBe('admin');
        expect((await fb.get(m.memory_id)).content).toBe('found through the environment');
        const other = new FlashbulbClient({
          baseUrl: t.base,
          apiKey: t.adminKey,
          workspace: 'default',
        });
        await expect(other.get(m.memory_id)).rejects.toMatchObject({ status: 404 }); // options win over the variables
      },
    );
  });

  it('without a URL or FLASHBULB_URL talks to http://localhost:6381, and says so when nothing answers there', async () => {
    const seen: string[] = [];
    const refuse: typeof fetch = async (input) => {
      seen.push(String(input));
      throw new TypeError('fetch failed', {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:6381'),
      });
    };
    await withEnv(
      { FLASHBULB_URL: undefined, FLASHBULB_API_KEY: undefined, FLASHBULB_WORKSPACE: undefined },
      async () => {
        const err = await new FlashbulbClient({ fetch: refuse })
          .healthLive()
          .catch((e: unknown) => e);
        expect(seen).toEqual([`${DEFAULT_URL}/v1/health/live`]);
        expect(DEFAULT_URL).toBe('http://localhost:6381');
        expect(err).toBeInstanceOf(FlashbulbConnectionError);
        expect(err).toBeInstanceOf(FlashbulbError);
        expect(err).toMatchObject({ status: 0, code: 'connection_error' });
        expect((err as Error).message).toContain(
          'cannot reach Flashbulb at http://localhost:6381, the default',
        );
        expect((err as Error).message).toContain('FLASHBULB_URL');
        expect((err as Error).message).toContain('ECONNREFUSED');
      },
    );
  });

  it('names where an unreachable URL came from, and refuses one without a scheme', async () => {
    await withEnv({ FLASHBULB_URL: 'http://127.0.0.1:9' }, async () => {
      await expect(new FlashbulbClient().healthLive()).rejects.toThrow(
        /cannot reach Flashbulb at http:\/\/127\.0\.0\.1:9 \(from FLASHBULB_URL\)/,
      );
    });
    await withEnv({ FLASHBULB_URL: 'localhost:6381' }, async () => {
      expect(() => new FlashbulbClient()).toThrow(
        'FLASHBULB_URL must be an http:// or https:// URL such as http://localhost:6381, not "localhost:6381"',
      );
    });
    expect(() => new FlashbulbClient({ baseUrl: 'localhost:6381' })).toThrow(/^baseUrl must be/);
  });

  it('a 401 says how to give a key, or where the refused key came from', async () => {
    await withEnv({ FLASHBULB_API_KEY: undefined }, async () => {
      await expect(new FlashbulbClient({ baseUrl: t.base }).whoami()).rejects.toThrow(
        'no API key was given: pass apiKey or set FLASHBULB_API_KEY',
      );
    });
    await withEnv({ FLASHBULB_API_KEY: 'fb_live_not_a_key' }, async () => {
      await expect(new FlashbulbClient({ baseUrl: t.base }).whoami()).rejects.toThrow(
        /the key came from FLASHBULB_API_KEY$/,
      );
    });
  });

  it('ensureWorkspace creates a workspace once and scopes the client to it', async () => {
    const first = await admin.ensureWorkspace('client-ensure');
    const m = await first.remember({ content: 'in the ensured workspace' });
    const again = await admin.ensureWorkspace('client-ensure');
    expect((await again.get(m.memory_id)).content).toBe('in the ensured workspace');
    expect(
      (await admin.workspacesList()).workspaces.filter((w) => w.slug === 'client-ensure'),
    ).toHaveLength(1);
  });
});
