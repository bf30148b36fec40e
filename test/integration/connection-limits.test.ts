/**
 * Limits a stranger cannot exhaust (issue 23, item 1). Before the fix the REST listener read a
 * whole body before authenticating, held a stalled body for 60–90 s and had no connection cap, so
 * one client with partial requests shut every tenant out. Strangers here connect from other
 * loopback addresses (127.0.0.2…) so that the per-address cap tells them from the tenant.
 */
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadHebbs } from '../../src/grpc/server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

/** How long a prompt answer may take on a loaded machine; the stalls tested last 30 s or more. */
const PROMPT_MS = 5000;

interface Raw {
  socket: net.Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves once the server has closed the connection (with what it sent), or null after `ms`. */
  closed(ms: number): Promise<string | null>;
}

const open: net.Socket[] = [];

function connect(port: number, localAddress: string, first: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    open.push(socket);
    let text = '';
    let ended = false;
    const waiters: Array<() => void> = [];
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      ended = true;
      for (const w of waiters.splice(0)) w();
    });
    socket.once('connect', () => {
      socket.write(first);
      resolve({
        socket,
        received: () => text,
        closed: (ms) =>
          new Promise((done) => {
            if (ended) return done(text);
            const timer = setTimeout(() => done(null), ms);
            waiters.push(() => {
              clearTimeout(timer);
              done(text);
            });
          }),
      });
    });
    socket.once('error', reject);
  });
}

/** How long a prompt answer may take on a loaded machine, polled every 50 ms. */
const PROMPTLY = { deadlineMs: PROMPT_MS, everyMs: 50 } as const;

const PARTIAL_HEAD = 'GET /v1/health/live HTTP/1.1\r\nHost: x\r\n';
const partialBody = (key: string | null): string =>
  `POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}\r\n{"content":"`;

async function metric(t: TestApp, line: RegExp): Promise<number> {
  const text = (await t.req('GET', '/v1/metrics')).text;
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.split(' ').pop());
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp(
    {},
    {
      FLASHBULB_PUBLIC_HEALTH: 'true',
      FLASHBULB_MAX_CONNECTIONS: '64',
      FLASHBULB_MAX_CONNECTIONS_PER_CLIENT: '16',
      FLASHBULB_HEALTH_CONNECTIONS: '4',
      // Long, so that only the new checks can explain a prompt answer.
      FLASHBULB_HEADERS_TIMEOUT_MS: '30000',
      FLASHBULB_REQUEST_TIMEOUT_S: '60',
      FLASHBULB_BODY_TIMEOUT_MS: '30000',
    },
  );
});
afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  // Every stranger's connection is counted out before the next test (the test's own client keeps a few).
  await until(
    async () => (await metric(t, /^flashbulb_connections_open\{protocol="rest"\}/)) <= 4,
    { what: "the strangers' connections counted out", deadlineMs: 15_000, everyMs: 50 },
  );
});
afterAll(async () => t.stop());

describe('authentication before the body', () => {
  it('answers 401 from the headers and closes, without waiting for the body', async () => {
    const raw = await connect(t.app.httpPort, '127.0.0.1', partialBody(null));
    const reply = await raw.closed(PROMPT_MS);
    expect(reply, 'no answer before the body arrived').not.toBeNull();
    expect(reply).toMatch(/^HTTP\/1\.1 401 /);
    expect(reply).toMatch(/connection: close/i);
    expect(reply).toContain('"error_code":"unauthenticated"');
    expect(
      await metric(t, /^flashbulb_requests_rejected_before_body_total/),
    ).toBeGreaterThanOrEqual(1);
  });

  it('a wrong key is refused the same way; a valid key still gets its body read', async () => {
    const wrong = await connect(t.app.httpPort, '127.0.0.1', partialBody('fb_not_a_key'));
    expect(await wrong.closed(PROMPT_MS)).toMatch(/^HTTP\/1\.1 401 /);
    const good = await connect(t.app.httpPort, '127.0.0.1', partialBody(t.adminKey));
    expect(await good.closed(300)).toBeNull(); // waiting for the rest of its body
    const rest = `${'x'.repeat(1000 - '{"content":"'.length - 2)}"}`;
    good.socket.write(rest);
    await until(async () => /^HTTP\/1\.1 201 /.test(good.received()), {
      ...PROMPTLY,
      what: "the good client's 201",
    });
  });
});

describe('what a head decides before the body', () => {
  const expecting = (key: string | null): string =>
    `POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\nExpect: 100-continue\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}\r\n`;

  it('Expect: 100-continue gets its go-ahead only with a valid key; without one, the 401 is the answer', async () => {
    const stranger = await connect(t.app.httpPort, '127.0.0.1', expecting(null));
    const refused = await stranger.closed(PROMPT_MS);
    expect(refused).toMatch(/^HTTP\/1\.1 401 /);
    expect(refused).not.toContain('100 Continue');

    const tenant = await connect(t.app.httpPort, '127.0.0.1', expecting(t.adminKey));
    await until(async () => tenant.received().startsWith('HTTP/1.1 100 Continue\r\n'), {
      ...PROMPTLY,
      what: "the tenant's 100 Continue",
    });
    tenant.socket.write('{"content":"hello!"}');
    await until(async () => /\r\n\r\nHTTP\/1\.1 201 /.test(tenant.received()), {
      ...PROMPTLY,
      what: "the tenant's 201 after 100 Continue",
    });
  });

  it('a compressed body is refused as 415 naming its encoding, not read as malformed JSON', async () => {
    const res = await t.req('POST', '/v1/memories', {
      raw: 'not read',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      error_code: 'unsupported_media_type',
      message: "Content-Encoding 'gzip' is not supported: send the request body uncompressed",
    });
    expect(res.headers.get('connection')).toBe('close');
    const plain = await t.req('POST', '/v1/memories', {
      body: { content: 'sent as is' },
      headers: { 'content-encoding': 'identity' },
    });
    expect(plain.status).toBe(201);
  });
});

describe('a body that stalls', () => {
  it('a GET carrying a body that never completes gets 408 once the body has been idle for the body timeout', async () => {
    const quick = await startTestApp(
      {},
      { FLASHBULB_BODY_TIMEOUT_MS: '300', FLASHBULB_REQUEST_TIMEOUT_S: '120' },
    );
    try {
      const before = await metric(quick, /^flashbulb_connections_timed_out_total\{phase="body"\}/);
      const raw = await connect(
        quick.app.httpPort,
        '127.0.0.1',
        `GET /v1/memories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${quick.adminKey}\r\nContent-Length: 100\r\n\r\nabc`,
      );
      const reply = await raw.closed(PROMPT_MS);
      expect(reply, 'held open past the body timeout').not.toBeNull();
      expect(reply).toMatch(/^HTTP\/1\.1 408 /);
      expect(await metric(quick, /^flashbulb_connections_timed_out_total\{phase="body"\}/)).toBe(
        before + 1,
      );
    } finally {
      for (const s of open.splice(0)) s.destroy();
      await quick.stop();
    }
  });
});

describe('silent connections', () => {
  it('a connection that sends nothing is closed after the headers timeout, on both ports', async () => {
    const quick = await startTestApp({}, { FLASHBULB_HEADERS_TIMEOUT_MS: '300' });
    try {
      const rest = await connect(quick.app.httpPort, '127.0.0.1', '');
      const grpcSocket = await connect(quick.app.grpcPort, '127.0.0.1', '');
      expect(await rest.closed(PROMPT_MS), 'REST connection held open').not.toBeNull();
      expect(await grpcSocket.closed(PROMPT_MS), 'gRPC connection held open').not.toBeNull();
      expect(
        await metric(quick, /^flashbulb_connections_timed_out_total\{phase="grpc_preface"\}/),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      for (const s of open.splice(0)) s.destroy();
      await quick.stop();
    }
  });
});

describe('connection caps', () => {
  it('one address holding many stalled connections and partial bodies cannot shut out a tenant or the health checks', async () => {
    const strangers = await Promise.all([
      ...Array.from({ length: 60 }, () => connect(t.app.httpPort, '127.0.0.2', PARTIAL_HEAD)),
      ...Array.from({ length: 60 }, () => connect(t.app.httpPort, '127.0.0.2', partialBody(null))),
    ]);
    // Partial bodies without a key are answered 401 and closed; past 16, heads are refused.
    const replies = await Promise.all(strangers.map((s) => s.closed(PROMPT_MS)));
    const stillOpen = replies.filter((r) => r === null).length;
    expect(stillOpen).toBeLessThanOrEqual(16);
    expect(replies.filter((r) => r?.startsWith('HTTP/1.1 503 ')).length).toBeGreaterThan(0);
    expect(replies.find((r) => r?.startsWith('HTTP/1.1 503 '))).toContain('too many connections');
    expect(
      await metric(
        t,
        /^flashbulb_connections_refused_total\{protocol="rest",reason="per_client"\}/,
      ),
    ).toBeGreaterThan(0);

    const served = await t.req('POST', '/v1/memories', {
      body: { content: 'a tenant is still served' },
    });
    expect(served.status).toBe(201);
    expect((await t.req('GET', '/v1/health/live', { key: null })).status).toBe(200);
  });

  it('strangers from many addresses cannot fill the connection cap: they hold the unauthenticated share, a tenant and the health checks get in', async () => {
    const strangers: Raw[] = [];
    for (const host of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']) {
      strangers.push(
        ...(await Promise.all(
          Array.from({ length: 16 }, () => connect(t.app.httpPort, host, PARTIAL_HEAD)),
        )),
      );
    }
    // 64 strangers against a cap of 64: before, they held every place and a tenant got 503. Now
    // unauthenticated connections hold at most a quarter of it (16): each newcomer closed the
    // oldest stranger of the client holding most.
    await until(
      async () =>
        strangers.filter((s) => !s.socket.destroyed && s.socket.readyState === 'open').length <= 16,
      { ...PROMPTLY, what: 'at most 16 strangers left open' },
    );
    const tenant = await connect(
      t.app.httpPort,
      '127.0.0.1',
      `GET /v1/auth/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.adminKey}\r\n\r\n`,
    );
    await until(async () => /^HTTP\/1\.1 200 /.test(tenant.received()), {
      ...PROMPTLY,
      what: "the tenant's 200",
    });
    expect((await t.req('GET', '/v1/health/live', { key: null })).status).toBe(200);
    expect(
      await metric(
        t,
        /^flashbulb_connections_refused_total\{protocol="rest",reason="unauthenticated"\}/,
      ),
    ).toBeGreaterThan(0);
    for (const s of strangers) s.socket.destroy();
  });

  it('the same caps hold on the gRPC port: past the per-address cap a connection is closed, and a tenant is still served', async () => {
    const grpcPort = t.app.grpcPort;
    const held = await Promise.all(
      Array.from({ length: 16 }, () => connect(grpcPort, '127.0.0.2', '')),
    );
    const refused = await connect(grpcPort, '127.0.0.2', '');
    expect(
      await refused.closed(PROMPT_MS),
      'the 17th connection from one address stayed open',
    ).not.toBeNull();
    expect(await held[0]?.closed(200)).toBeNull();
    const Health = loadHebbs()['HealthService'] as grpc.ServiceClientConstructor;
    const client = new Health(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    const check = (
      client as unknown as Record<
        string,
        (req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void) => void
      >
    )['Check'];
    const code = await new Promise<number>((resolve) =>
      check?.call(client, {}, { deadline: Date.now() + PROMPT_MS }, (err) =>
        resolve(err ? err.code : 0),
      ),
    );
    client.close();
    expect(code).toBe(0);
    expect(
      await metric(
        t,
        /^flashbulb_connections_refused_total\{protocol="grpc",reason="per_client"\}/,
      ),
    ).toBeGreaterThan(0);
  });
});
