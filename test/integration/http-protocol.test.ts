/**
 * Issue 12, defects 5, 6, 9 and 10, over raw sockets: HTTP/1.0 is answered (and the connection
 * closed unless keep-alive is asked for), pipelined requests are all answered in order, HEAD
 * answers like GET without a body, and malformed requests get a 400 naming the problem and a
 * closed connection at once (not the idle timeout).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.stop());

interface Exchange {
  /** Everything the server sent. */
  text: string;
  /** Whether the server closed the connection (false: we stopped waiting once `until` held). */
  closed: boolean;
}

/**
 * Writes `data` on a fresh connection and reads until the server closes it or `until` holds for
 * what was read; a server that does neither leaves the test to its own timeout.
 */
function exchange(data: string, until: (text: string) => boolean = () => false): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(t.app.httpPort, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
      if (until(text)) {
        socket.destroy();
        resolve({ text, closed: false });
      }
    });
    socket.on('close', () => resolve({ text, closed: true }));
    socket.on('error', reject);
    socket.write(data);
  });
}

/** The responses in a byte stream, each as status, headers and body (by Content-Length). */
function responses(
  text: string,
): Array<{ status: number; headers: Map<string, string>; body: string }> {
  const out: Array<{ status: number; headers: Map<string, string>; body: string }> = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = new Map(
      lines.map((l) => [
        l.slice(0, l.indexOf(':')).toLowerCase(),
        l.slice(l.indexOf(':') + 1).trim(),
      ]),
    );
    const length = Number(headers.get('content-length') ?? '0');
    out.push({
      status: Number(statusLine?.split(' ')[1]),
      headers,
      body: rest.slice(end + 4, end + 4 + length),
    });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

const completeResponses =
  (n: number) =>
  (text: string): boolean =>
    responses(text).filter((r) => r.body.length === Number(r.headers.get('content-length') ?? 0))
      .length >= n;

function auth(): string {
  return `Authorization: Bearer ${t.adminKey}\r\n`;
}

function post(content: string, version = 'HTTP/1.1'): string {
  const body = JSON.stringify({ content });
  return `POST /v1/memories ${version}\r\nHost: test\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

async function stored(content: string): Promise<number> {
  const res = await t.req('GET', '/v1/memories?limit=1000');
  return (res.body.memories as Array<{ content: string }>).filter((m) => m.content === content)
    .length;
}

describe('HTTP/1.0 (defect 5)', () => {
  it('a GET is answered and the connection closed, with or without Host', async () => {
    for (const host of ['', 'Host: test\r\n']) {
      const res = await exchange(`GET /v1/auth/whoami HTTP/1.0\r\n${host}${auth()}\r\n`);
      expect(res.closed).toBe(true);
      const [reply] = responses(res.text);
      expect(reply?.status).toBe(200);
      expect(JSON.parse(reply?.body ?? '')).toMatchObject({ role: 'admin' });
    }
  });

  it('a POST is stored and acknowledged', async () => {
    const content = `http10 ${process.pid}`;
    const res = await exchange(post(content, 'HTTP/1.0'));
    expect(res.closed).toBe(true);
    const [reply] = responses(res.text);
    expect(reply?.status).toBe(201);
    expect(JSON.parse(reply?.body ?? '').content).toBe(content);
    expect(await stored(content)).toBe(1);
  });

  it('keeps the connection open when keep-alive is asked for', async () => {
    const req = `GET /v1/health/live HTTP/1.0\r\nConnection: keep-alive\r\n${auth()}\r\n`;
    const res = await exchange(req + req, completeResponses(2));
    expect(res.closed).toBe(false);
    expect(responses(res.text).map((r) => r.status)).toEqual([200, 200]);
  });
});

describe('HTTP/1.1 pipelining (defect 6)', () => {
  it('two POSTs written back to back are both stored and both acknowledged, in order', async () => {
    const a = `pipelined-a ${process.pid}`;
    const b = `pipelined-b ${process.pid}`;
    const res = await exchange(post(a) + post(b), completeResponses(2));
    const replies = responses(res.text);
    expect(replies.map((r) => r.status)).toEqual([201, 201]);
    expect(replies.map((r) => JSON.parse(r.body).content)).toEqual([a, b]);
    expect(await stored(a)).toBe(1);
    expect(await stored(b)).toBe(1);
  });

  it('a slow shard request followed by a fast one is answered in request order', async () => {
    const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: test\r\n${auth()}\r\n`;
    const res = await exchange(
      get('/v1/memories?limit=5') + get('/v1/health/live') + get('/v1/auth/whoami'),
      completeResponses(3),
    );
    const replies = responses(res.text);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(replies[0]?.body ?? '')).toHaveProperty('memories');
    expect(JSON.parse(replies[1]?.body ?? '')).toEqual({ status: 'alive' });
    expect(JSON.parse(replies[2]?.body ?? '')).toHaveProperty('role', 'admin');
  });
});

describe('HEAD (defect 9)', () => {
  it('answers like GET, with its Content-Length and no body', async () => {
    for (const path of ['/v1/auth/whoami', '/v1/memories?limit=3', '/v1/health/ready']) {
      const get = await exchange(
        `GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n${auth()}\r\n`,
      );
      const head = await exchange(
        `HEAD ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n${auth()}\r\n`,
      );
      const [g] = responses(get.text);
      expect(head.text.startsWith(`HTTP/1.1 ${g?.status}`)).toBe(true);
      const headEnd = head.text.indexOf('\r\n\r\n');
      expect(head.text.slice(headEnd + 4)).toBe('');
      const headLength = /content-length: (\d+)/i.exec(head.text)?.[1];
      expect(Number(headLength)).toBe(Buffer.byteLength(g?.body ?? '', 'latin1'));
    }
  });

  it('HEAD on a POST-only route is a 405 naming the allowed method', async () => {
    const res = await exchange(
      `HEAD /v1/recall HTTP/1.1\r\nHost: test\r\nConnection: close\r\n${auth()}\r\n`,
    );
    expect(res.text).toMatch(/^HTTP\/1\.1 405/);
    expect(res.text).toMatch(/allow: POST/i);
  });
});

describe('malformed requests (defect 10)', () => {
  const cases: Record<string, string> = {
    'an unknown HTTP version': 'GET /v1/health/live HTTP/9.9\r\nHost: test\r\n\r\n',
    'LF-only line ends': 'GET /v1/health/live HTTP/1.1\nHost: test\n\n',
    'a header without a colon': 'GET /v1/health/live HTTP/1.1\r\nHost test\r\n\r\n',
    'a space in the path': 'GET /v1/health/ live HTTP/1.1\r\nHost: test\r\n\r\n',
    'bytes that are not HTTP': '\u0000\u0001\u0002 hello\r\n\r\n',
    'a Content-Length that is not a number':
      'POST /v1/memories HTTP/1.1\r\nHost: test\r\nContent-Length: ten\r\n\r\n',
  };
  for (const [what, data] of Object.entries(cases)) {
    it(`${what}: a 400 naming the problem, then the connection closes`, async () => {
      const res = await exchange(data);
      expect(res.closed).toBe(true);
      const [reply] = responses(res.text);
      expect(reply?.status).toBe(400);
      expect(reply?.headers.get('connection')).toBe('close');
      const body = JSON.parse(reply?.body ?? '');
      expect(body.error_code).toBe('invalid_input');
      expect(body.message).toMatch(/^malformed HTTP request: .+/);
    });
  }

  it('the server goes on serving after them', async () => {
    expect((await t.req('GET', '/v1/health/live')).status).toBe(200);
  });
});
