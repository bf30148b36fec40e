/**
 * REST over real sockets: the error contract (DESIGN.md 3.1, 3.2, 14). Every rejected request gets
 * the JSON error body `{error_code, message}` with the mapped status, the message names the field,
 * and nothing stored changes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let key: string;
let seq = 0;

type Res = Awaited<ReturnType<TestApp['req']>>;

function req(
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<Res> {
  return t.req(method, path, { ...opts, key });
}

/** Everything stored in the workspace (versions included), as comparable text. */
async function stored(): Promise<string> {
  const res = await req('GET', '/v1/memories?include_superseded=true&limit=1000');
  expect(res.status).toBe(200);
  return JSON.stringify(
    res.body.memories.map((m: any) => [
      m.memory_id,
      m.content,
      m.logical_clock,
      m.importance,
      m.context,
      m.entity_id,
      m.kind,
    ]),
  );
}

function expectErrorBody(res: Res, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error_code: code, message: expect.any(String) });
  expect(res.body.message.length).toBeGreaterThan(0);
}

let before: string;
let existing: any;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.stop());

beforeEach(async () => {
  // A fresh workspace per test, holding one memory, so "nothing changed" is checked exactly.
  const slug = `err-${process.pid}-${++seq}`;
  const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status).toBe(201);
  key = created.body.api_key;
  const m = await req('POST', '/v1/memories', {
    body: { content: 'already here', context: { a: 1 }, entity_id: 'e' },
  });
  expect(m.status).toBe(201);
  existing = m.body;
  before = await stored();
});

async function expectUnchanged(): Promise<void> {
  expect(await stored()).toBe(before);
}

describe('malformed bodies', () => {
  it('malformed JSON is a 400 with the JSON error body', async () => {
    for (const raw of [
      '{"content":',
      '{content: "x"}',
      "{'content': 'x'}",
      '{"content":"x",}',
      'not json at all',
    ]) {
      const res = await req('POST', '/v1/memories', {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expectErrorBody(res, 400, 'invalid_input');
    }
    await expectUnchanged();
  });

  it('malformed JSON on every body route is a 400', async () => {
    const routes: Array<[string, string]> = [
      ['POST', '/v1/memories'],
      ['POST', '/v1/memories/batch'],
      ['PUT', `/v1/revise/${existing.memory_id}`],
      ['POST', '/v1/forget'],
    ];
    for (const [method, path] of routes) {
      const res = await req(method, path, {
        raw: '{"oops"',
        headers: { 'content-type': 'application/json' },
      });
      expectErrorBody(res, 400, 'invalid_input');
    }
    await expectUnchanged();
  });

  it.each([['[1,2]'], ['"a string"'], ['null'], ['42'], ['true']])(
    'a non-object body %s is a 400',
    async (raw) => {
      const res = await req('POST', '/v1/memories', {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expectErrorBody(res, 400, 'invalid_input');
      const forget = await req('POST', '/v1/forget', {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expectErrorBody(forget, 400, 'invalid_input');
      await expectUnchanged();
    },
  );

  it('an empty body is a 400', async () => {
    const res = await req('POST', '/v1/memories', {
      raw: '',
      headers: { 'content-type': 'application/json' },
    });
    expectErrorBody(res, 400, 'invalid_input');
    await expectUnchanged();
  });

  it('a missing required field is a 400 naming it', async () => {
    for (const body of [{}, { importance: 0.5 }, { context: { a: 1 } }]) {
      const res = await req('POST', '/v1/memories', { body });
      expectErrorBody(res, 400, 'invalid_input');
      expect(res.body.message).toContain('content');
    }
    const edge = await req('POST', '/v1/memories', {
      body: { content: 'x', edges: [{ edge_type: 'caused_by' }] },
    });
    expectErrorBody(edge, 400, 'invalid_input');
    expect(edge.body.message).toContain('target_id');
    const edgeType = await req('POST', '/v1/memories', {
      body: { content: 'x', edges: [{ target_id: existing.memory_id }] },
    });
    expectErrorBody(edgeType, 400, 'invalid_input');
    expect(edgeType.body.message).toContain('edge_type');
    await expectUnchanged();
  });

  it.each([
    ['content number', { content: 42 }, 'content'],
    ['content null', { content: null }, 'content'],
    ['content array', { content: ['a'] }, 'content'],
    ['importance string', { content: 'x', importance: 'high' }, 'importance'],
    ['importance boolean', { content: 'x', importance: true }, 'importance'],
    ['context string', { content: 'x', context: 'room A' }, 'context'],
    ['context array', { content: 'x', context: [1, 2] }, 'context'],
    ['context number', { content: 'x', context: 7 }, 'context'],
    ['entity_id number', { content: 'x', entity_id: 5 }, 'entity_id'],
    ['entity_id object', { content: 'x', entity_id: { id: 'e' } }, 'entity_id'],
    ['edges string', { content: 'x', edges: 'caused_by' }, 'edges'],
    ['edges of strings', { content: 'x', edges: ['caused_by'] }, 'edges'],
    [
      'edge target number',
      { content: 'x', edges: [{ target_id: 5, edge_type: 'caused_by' }] },
      'target_id',
    ],
    [
      'edge confidence string',
      {
        content: 'x',
        edges: [{ target_id: '0'.repeat(32), edge_type: 'caused_by', confidence: 'high' }],
      },
      'confidence',
    ],
  ])('a wrong type (%s) is a 400 naming the field', async (_name, body, field) => {
    const res = await req('POST', '/v1/memories', { body });
    expectErrorBody(res, 400, 'invalid_input');
    expect(res.body.message).toContain(field);
    await expectUnchanged();
  });

  it.each([
    ['importance above 1', { content: 'x', importance: 1.01 }, 'importance'],
    ['importance below 0', { content: 'x', importance: -0.1 }, 'importance'],
    [
      'edge confidence above 1',
      { content: 'x', edges: [{ target_id: 'EXISTING', edge_type: 'caused_by', confidence: 2 }] },
      'confidence',
    ],
    [
      'edge confidence below 0',
      {
        content: 'x',
        edges: [{ target_id: 'EXISTING', edge_type: 'caused_by', confidence: -0.5 }],
      },
      'confidence',
    ],
    ['empty content', { content: '' }, 'content'],
    ['empty entity_id', { content: 'x', entity_id: '' }, 'entity_id'],
  ])('a value out of range (%s) is a 400 naming the field', async (_name, body, field) => {
    const text = JSON.stringify(body).replace('EXISTING', existing.memory_id);
    const res = await req('POST', '/v1/memories', {
      raw: text,
      headers: { 'content-type': 'application/json' },
    });
    expectErrorBody(res, 400, 'invalid_input');
    expect(res.body.message).toContain(field);
    await expectUnchanged();
  });

  it('wrong types on batch, revise and forget are 400s naming the field', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/v1/memories/batch', { memory_ids: 'abc' }, 'memory_ids'],
      ['POST', '/v1/memories/batch', { memory_ids: [1] }, 'memory_ids'],
      ['POST', '/v1/memories/batch', {}, 'memory_ids'],
      ['PUT', `/v1/revise/${existing.memory_id}`, { importance: 'x' }, 'importance'],
      ['PUT', `/v1/revise/${existing.memory_id}`, { entity_id: 3 }, 'entity_id'],
      ['PUT', `/v1/revise/${existing.memory_id}`, { context: [] }, 'context'],
      ['POST', '/v1/forget', { memory_ids: [1] }, 'memory_ids'],
      ['POST', '/v1/forget', { access_count_floor: 'many' }, 'access_count_floor'],
      ['POST', '/v1/forget', { memory_kind: 5 }, 'memory_kind'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await req(method, path, { body });
      expectErrorBody(res, 400, 'invalid_input');
      expect(res.body.message, `${method} ${path} ${JSON.stringify(body)}`).toContain(field);
    }
    await expectUnchanged();
  });
});

describe('unknown routes and methods', () => {
  it.each([
    ['GET', '/v1/nope'],
    ['GET', '/v2/memories'],
    ['POST', '/'], // GET / is the dashboard (test/integration/web-static.test.ts)
    ['GET', '/no-such-file.js'],
    ['POST', '/v1/nothing-here'],
    ['GET', '/v1/memories/abc/def/ghi'],
    ['GET', `/v1/workspaces/some-ws/auth/whoami`],
    ['GET', '/v1/workspaces/some-ws/keys'],
  ])('%s %s is a 404 with the JSON error body', async (method, path) => {
    const res = await req(method, path);
    expectErrorBody(res, 404, 'not_found');
  });

  it.each([
    ['DELETE', '/v1/memories'],
    ['PUT', '/v1/memories'],
    ['PATCH', '/v1/memories'],
    ['GET', '/v1/forget'],
    ['POST', '/v1/entities'],
    ['POST', '/v1/auth/whoami'],
    ['GET', '/v1/revise/00000000000000000000000000000000'],
    ['PUT', '/v1/memories/00000000000000000000000000000000'],
    ['POST', '/v1/health/live'],
    ['DELETE', '/v1/metrics'],
    ['PUT', '/v1/keys'],
  ])('%s %s is a 405 with the JSON error body', async (method, path) => {
    const res = await req(method, path);
    expectErrorBody(res, 405, 'method_not_allowed');
    await expectUnchanged();
  });

  it('a 405 names the allowed methods in an Allow header (RFC 9110 15.5.6)', async () => {
    const res = await req('DELETE', '/v1/memories');
    expect(res.status).toBe(405);
    const allow = (res.headers.get('allow') ?? '')
      .split(',')
      .map((s) => s.trim())
      .sort();
    // GET routes answer HEAD too (issue 12, defect 9).
    expect(allow).toEqual(['GET', 'HEAD', 'POST']);
  });
});

describe('size limits', () => {
  it('content of exactly 64 KiB is accepted; one byte more is a 400', async () => {
    const ok = await req('POST', '/v1/memories', { body: { content: 'a'.repeat(64 * 1024) } });
    expect(ok.status).toBe(201);
    before = await stored();
    const res = await req('POST', '/v1/memories', { body: { content: 'a'.repeat(64 * 1024 + 1) } });
    expectErrorBody(res, 400, 'invalid_input');
    expect(res.body.message).toContain('content');
    await expectUnchanged();
  });

  it('counts content in bytes: 64 KiB of two-byte characters is over the limit', async () => {
    const res = await req('POST', '/v1/memories', { body: { content: 'é'.repeat(32 * 1024 + 1) } });
    expectErrorBody(res, 400, 'invalid_input');
    await expectUnchanged();
  });

  it('context serialised to exactly 16 KiB is accepted; one byte more is a 400', async () => {
    const pad = 16 * 1024 - JSON.stringify({ k: '' }).length;
    const ok = await req('POST', '/v1/memories', {
      body: { content: 'ctx', context: { k: 'x'.repeat(pad) } },
    });
    expect(ok.status, ok.text).toBe(201);
    before = await stored();
    const res = await req('POST', '/v1/memories', {
      body: { content: 'ctx', context: { k: 'x'.repeat(pad + 1) } },
    });
    expectErrorBody(res, 400, 'invalid_input');
    expect(res.body.message).toContain('context');
    await expectUnchanged();
  });

  it('entity_id of 256 characters is accepted; 257 is a 400', async () => {
    const ok = await req('POST', '/v1/memories', {
      body: { content: 'ent', entity_id: 'e'.repeat(256) },
    });
    expect(ok.status).toBe(201);
    before = await stored();
    const res = await req('POST', '/v1/memories', {
      body: { content: 'ent', entity_id: 'e'.repeat(257) },
    });
    expectErrorBody(res, 400, 'invalid_input');
    expect(res.body.message).toContain('entity_id');
    await expectUnchanged();
  });

  it('a body over 1 MiB is a 413 with the JSON error body', async () => {
    const res = await req('POST', '/v1/memories', {
      body: { content: 'a'.repeat(1024 * 1024 + 16) },
    });
    expectErrorBody(res, 413, 'payload_too_large');
    await expectUnchanged();
    // The server still answers afterwards.
    expect((await req('GET', '/v1/memories')).status).toBe(200);
  });

  it('a body between 64 KiB and 1 MiB is read and judged by field (400, not 413)', async () => {
    const res = await req('POST', '/v1/memories', { body: { content: 'a'.repeat(512 * 1024) } });
    expectErrorBody(res, 400, 'invalid_input');
    await expectUnchanged();
  });

  it('accepts a valid JSON body sent with chunked transfer encoding (no Content-Length)', async () => {
    const enc = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('{"content":'));
        c.enqueue(enc.encode('"sent in chunks"}'));
        c.close();
      },
    });
    const res = await fetch(`${t.base}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expect(JSON.parse(text).content).toBe('sent in chunks');
  });

  it('a chunked body over 1 MiB is a 413, not read as empty', async () => {
    const chunk = new TextEncoder().encode('a'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0) c.enqueue(new TextEncoder().encode('{"content":"'));
        if (sent >= 2 * 1024 * 1024) {
          c.enqueue(new TextEncoder().encode('"}'));
          c.close();
          return;
        }
        c.enqueue(chunk);
        sent += chunk.byteLength;
      },
    });
    let status = 0;
    let text = '';
    try {
      const res = await fetch(`${t.base}/v1/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      status = res.status;
      text = await res.text();
    } catch (err) {
      text = String(err);
    }
    expect(status, text).toBe(413);
    expect(JSON.parse(text).error_code).toBe('payload_too_large');
    await expectUnchanged();
  });
});

describe('media types', () => {
  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['text/html; charset=utf-8']])(
    'Content-Type %s is a 415',
    async (type) => {
      const res = await req('POST', '/v1/memories', {
        raw: JSON.stringify({ content: 'typed' }),
        headers: { 'content-type': type },
      });
      expectErrorBody(res, 415, 'unsupported_media_type');
      await expectUnchanged();
    },
  );

  it('application/json with a charset parameter is accepted', async () => {
    const res = await req('POST', '/v1/memories', {
      raw: JSON.stringify({ content: 'typed' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });
});

describe('rejected requests leave the store untouched', () => {
  it('a mix of rejected writes changes nothing', async () => {
    const attempts: Array<
      [string, string, { body?: unknown; raw?: string; headers?: Record<string, string> }]
    > = [
      [
        'POST',
        '/v1/memories',
        { body: { content: 'x', edges: [{ target_id: '1'.repeat(32), edge_type: 'caused_by' }] } },
      ],
      [
        'POST',
        '/v1/memories',
        { body: { content: 'x', edges: [{ target_id: existing.memory_id, edge_type: 'causes' }] } },
      ],
      ['PUT', `/v1/revise/${existing.memory_id}`, { body: {} }],
      ['PUT', `/v1/revise/${existing.memory_id}`, { body: { content: 'new', importance: 7 } }],
      [
        'PUT',
        `/v1/revise/${existing.memory_id}`,
        { body: { content: 'new', context_mode: 'weird' } },
      ],
      ['PUT', `/v1/revise/${'1'.repeat(32)}`, { body: { content: 'new' } }],
      ['POST', '/v1/forget', { body: {} }],
      ['POST', '/v1/forget', { body: { memory_kind: 'nope' } }],
      [
        'POST',
        '/v1/forget',
        { body: { memory_ids: [existing.memory_id], staleness_threshold_us: -5 } },
      ],
      [
        'POST',
        '/v1/forget',
        { raw: '{"memory_ids":', headers: { 'content-type': 'application/json' } },
      ],
      [
        'POST',
        '/v1/forget',
        {
          raw: JSON.stringify({ memory_ids: [existing.memory_id] }),
          headers: { 'content-type': 'text/plain' },
        },
      ],
    ];
    for (const [method, path, opts] of attempts) {
      const res = await req(method, path, opts);
      expect(res.status, `${method} ${path} ${JSON.stringify(opts)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body).toEqual({ error_code: expect.any(String), message: expect.any(String) });
    }
    await expectUnchanged();
    const edges = await req('GET', `/v1/memories/${existing.memory_id}/edges`);
    expect(edges.body).toEqual({ outgoing: [], incoming: [] });
  });

  it('an unauthenticated write changes nothing', async () => {
    const res = await t.req('POST', '/v1/memories', { key: null, body: { content: 'anonymous' } });
    expectErrorBody(res, 401, 'unauthenticated');
    const forget = await t.req('POST', '/v1/forget', {
      key: 'wrong',
      body: { memory_ids: [existing.memory_id] },
    });
    expectErrorBody(forget, 401, 'unauthenticated');
    await expectUnchanged();
  });
});
