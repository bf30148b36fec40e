/**
 * Property-based fuzzing of the REST surface (issue 12), time-boxed. Every route gets requests
 * built from its own schema (src/api/requests.ts), with any part of them swapped, at random, for
 * arbitrary JSON, plus malformed JSON text, deep nesting and odd content types; raw sockets get
 * malformed HTTP. Whatever comes in: no 5xx, every request is answered in time, the server stays
 * ready, and a sentinel workspace nobody fuzzes keeps exactly what it held.
 */
import net from 'node:net';
import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Route } from '../../src/http/route.ts';
import { ROUTES } from '../../src/http/routes.ts';
import * as S from '../../src/api/requests.ts';
import * as SR from '../../src/api/recall-requests.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/** A request that takes longer than this counts as hung (every answer here takes milliseconds). */
const HUNG_MS = 10_000;
/** Wall-clock budget of each property (fast-check stops generating after it). */
const BUDGET_MS = 20_000;

let t: TestApp;
let fuzzKey: string;
let fuzzSlug: string;
let sentinelKey: string;
let sentinelBefore: string;
const knownIds: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  fuzzSlug = `fuzz-${process.pid}`;
  fuzzKey = (await t.req('POST', '/v1/workspaces', { body: { slug: fuzzSlug } })).body.api_key;
  sentinelKey = (
    await t.req('POST', '/v1/workspaces', { body: { slug: `sentinel-${process.pid}` } })
  ).body.api_key;
  for (let i = 0; i < 5; i++) {
    const s = await t.req('POST', '/v1/memories', {
      key: sentinelKey,
      body: { content: `sentinel memory ${i}`, context: { i }, entity_id: 'guard' },
    });
    expect(s.status).toBe(201);
    const f = await t.req('POST', '/v1/memories', {
      key: fuzzKey,
      body: { content: `fuzz seed memory ${i} about gardens and tomatoes`, entity_id: 'seed' },
    });
    knownIds.push(f.body.memory_id);
  }
  sentinelBefore = await sentinel();
});
afterAll(async () => t.stop());

async function sentinel(): Promise<string> {
  const res = await t.req('GET', '/v1/memories?include_superseded=true&limit=1000', {
    key: sentinelKey,
  });
  expect(res.status).toBe(200);
  // decay_score moves with the clock; everything else must stay as it was.
  return JSON.stringify(
    res.body.memories.map(({ decay_score: _, ...m }: Record<string, unknown>) => m),
    null,
    1,
  );
}

// ─── arbitraries from the route schemas ──────────────────────────────────────────────────

/** Body schema per route (`METHOD path`); routes missing here get arbitrary JSON objects. */
const BODY_SCHEMAS: Record<string, TSchema> = {
  'POST /v1/memories': S.RememberBody,
  'POST /v1/memories/batch': S.BatchBody,
  'PUT /v1/revise/:id': S.ReviseBody,
  'POST /v1/forget': S.ForgetBody,
  'POST /v1/recall': SR.RecallBody,
  'POST /v1/prime': SR.PrimeBody,
  'POST /v1/graph': SR.GraphBody,
  'POST /v1/subscribe': SR.SubscribeBody,
  'POST /v1/subscribe/:id/feed': SR.FeedBody,
  'POST /v1/reflect': S.ScopeBody,
  'POST /v1/reflect/prepare': S.ScopeBody,
  'POST /v1/reflect/commit': S.ReflectCommitBody,
  'POST /v1/contradictions/commit': S.VerdictsBody,
  'POST /v1/workspaces': S.CreateWorkspaceBody,
  'POST /v1/keys': S.CreateKeyBody,
};
const QUERY_SCHEMAS: Record<string, TSchema> = {
  'GET /v1/memories': S.ListQuery,
  'GET /v1/insights': SR.InsightsQuery,
};

const anyJson = fc.jsonValue({ maxDepth: 3 });
const word = fc.constantFrom(
  'garden',
  'tomato',
  'episode',
  'insight',
  'similarity',
  'temporal',
  'causal',
  'analogical',
  'related_to',
  'caused_by',
  'seed',
  'merge',
  'replace',
  'admin',
  'workspace',
  '',
  ' ',
  'é',
  '\u0000',
  '../x',
);
const text = fc.oneof(word, fc.string({ maxLength: 40 }), fc.constantFrom('x'.repeat(70_000)));
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -1, 1, 0.5, 1e300, -1e300, Number.MAX_SAFE_INTEGER),
);
const idLike = fc.oneof(
  fc.constantFrom(...['0'.repeat(32), 'f'.repeat(32), '01ARZ3NDEKTSV4RRFFQ69G5FAV']),
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }),
  fc.string({ maxLength: 40 }),
);

/** A value shaped by `schema` (JSON Schema as TypeBox writes it), often bent out of shape. */
function fromSchema(schema: TSchema, depth = 0): fc.Arbitrary<unknown> {
  const shaped = shapedBy(schema, depth);
  return fc.oneof({ arbitrary: shaped, weight: 6 }, { arbitrary: anyJson, weight: 1 });
}

function shapedBy(schema: TSchema, depth: number): fc.Arbitrary<unknown> {
  const s = schema as Record<string, unknown>;
  if ('const' in s) return fc.constant(s['const']);
  if (Array.isArray(s['anyOf']))
    return fc.oneof(...(s['anyOf'] as TSchema[]).map((x) => fromSchema(x, depth + 1)));
  switch (s['type']) {
    case 'string':
      return fc.oneof(text, idLike);
    case 'number':
    case 'integer':
      return number;
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fromSchema(s['items'] as TSchema, depth + 1), {
        maxLength: depth > 2 ? 2 : 6,
      });
    case 'object': {
      const props = (s['properties'] ?? {}) as Record<string, TSchema>;
      const required = new Set((s['required'] ?? []) as string[]);
      if (Object.keys(props).length === 0)
        return fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 4 });
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = fromSchema(v, depth + 1);
      // Required fields are present unless fromSchema bent the whole object; optional ones come and go.
      return fc
        .record(record, { requiredKeys: [...required] })
        .chain((obj) =>
          fc
            .dictionary(
              fc.constantFrom('extra', 'unknown_field', '__proto__', 'constructor'),
              anyJson,
              { maxKeys: 2 },
            )
            .map((extra) => ({ ...extra, ...obj })),
        );
    }
    default:
      return anyJson;
  }
}

/** Raw body text: the JSON of a value, or text that is almost JSON, deeply nested, or not JSON at all. */
function bodyText(schema: TSchema | undefined): fc.Arbitrary<string> {
  const value = schema
    ? fromSchema(schema)
    : fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 5 });
  const json = value.map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { arbitrary: json, weight: 8 },
    { arbitrary: json.chain((j) => fc.nat(j.length).map((n) => j.slice(0, n))), weight: 1 },
    {
      arbitrary: fc
        .integer({ min: 20, max: 3000 })
        .map((n) => `{"content":"deep","context":{"d":${'['.repeat(n)}${']'.repeat(n)}}}`),
      weight: 1,
    },
    { arbitrary: fc.string({ maxLength: 60 }), weight: 1 },
    { arbitrary: fc.constant(''), weight: 1 },
  );
}

function queryText(schema: TSchema | undefined): fc.Arbitrary<string> {
  const pairs = schema ? fromSchema(schema) : fc.constant({});
  const fromPairs = pairs.map((v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return '';
    return new URLSearchParams(
      Object.entries(v).map(([k, x]): [string, string] => [
        k,
        typeof x === 'string' ? x : (JSON.stringify(x) ?? ''),
      ]),
    ).toString();
  });
  return fc.oneof(
    fromPairs,
    fc.string({ maxLength: 30 }).map((q) => encodeURI(q)),
    fc.constant('limit=-5&limit=abc&%zz=1'),
  );
}

/** A concrete path for a route pattern: its parameters from ids that exist, random ids or junk. */
function pathFor(route: Route): fc.Arbitrary<string> {
  const segments = route.path.split('/').filter(Boolean);
  const parts = segments.map((seg) => {
    if (!seg.startsWith(':')) return fc.constant(seg);
    const value =
      seg === ':id'
        ? fc.oneof(fc.constantFrom(...knownIds), idLike, fc.integer().map(String))
        : fc.oneof(word, fc.string({ maxLength: 20 }), idLike);
    return value.map((v) => encodeURIComponent(v) || 'x');
  });
  const prefixed = route.scoped ? fc.boolean() : fc.constant(false);
  return fc
    .tuple(fc.tuple(...parts), prefixed)
    .map(
      ([p, prefix]) =>
        `${prefix ? `/v1/workspaces/${fuzzSlug}` : ''}/${p.slice(prefix ? 1 : 0).join('/')}`,
    );
}

interface FuzzRequest {
  route: Route;
  method: string;
  path: string;
  body: string | undefined;
  contentType: string | undefined;
  admin: boolean;
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/vnd.api+json',
];

function requestFor(route: Route): fc.Arbitrary<FuzzRequest> {
  const key = `${route.method} ${route.path}`;
  const method = fc.oneof(
    { arbitrary: fc.constant(route.method), weight: 9 },
    {
      arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
      weight: 1,
    },
  );
  const query = queryText(QUERY_SCHEMAS[key]);
  const body =
    route.body || route.raw
      ? bodyText(BODY_SCHEMAS[key]).map((b): string | undefined => b)
      : fc.option(bodyText(undefined), { nil: undefined });
  const type = fc.oneof(
    {
      arbitrary: fc.constant(route.raw ? 'multipart/form-data; boundary=xyz' : 'application/json'),
      weight: 5,
    },
    { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
  // Admin routes (workspaces, keys) are fuzzed with the admin key; data routes with the fuzz workspace's key.
  const admin = !route.scoped;
  return fc.record({ method, path: pathFor(route), query, body, contentType: type }).map((r) => ({
    route,
    method: r.method,
    path: r.query === '' ? r.path : `${r.path}?${r.query}`,
    body: r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body,
    contentType: r.contentType,
    admin,
  }));
}

async function send(r: FuzzRequest): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${r.admin ? t.adminKey : fuzzKey}`,
  };
  if (r.contentType !== undefined && r.body !== undefined) headers['content-type'] = r.contentType;
  const res = await fetch(`${t.base}${r.path}`, {
    method: r.method,
    headers,
    body: r.body ?? null,
    signal: AbortSignal.timeout(HUNG_MS),
  });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, text: '' };
  }
  return { status: res.status, text: await res.text() };
}

/**
 * A Flashbulb error body; on the MCP endpoint, whose protocol is JSON-RPC, errors the MCP transport
 * raises itself (e.g. 406 for a client that does not accept SSE) are JSON-RPC error objects.
 */
function errorShape(route: Route): unknown {
  const flashbulb = { error_code: expect.any(String), message: expect.any(String) };
  if (route.raw !== 'json-rpc') return flashbulb;
  return expect.toSatisfy(
    (body: any) =>
      (typeof body?.error_code === 'string' && typeof body?.message === 'string') ||
      (body?.jsonrpc === '2.0' &&
        typeof body?.error?.code === 'number' &&
        typeof body?.error?.message === 'string'),
  );
}

describe('fuzzing every route', () => {
  // Every route, admin ones included: a guessed slug or key id can only name what the fuzzer made.
  const routes = ROUTES;

  it('no 5xx and no hang, whatever each route is sent; the server stays ready; other data intact', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.oneof(...routes.map(requestFor)), async (r) => {
        const res = await send(r);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(
          res.status,
          `${r.method} ${r.path} ${r.body?.slice(0, 200)} → ${res.text.slice(0, 300)}`,
        ).toBeLessThan(500);
        if (res.status >= 400 && r.method !== 'HEAD')
          expect(JSON.parse(res.text)).toEqual(errorShape(r.route));
      }),
      {
        numRuns: 2000,
        interruptAfterTimeLimit: BUDGET_MS,
        seed: Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31),
      },
    );
    if (process.env['FUZZ_VERBOSE']) console.log([...statuses].sort());
    // Both outcomes were exercised: requests that passed validation and requests that did not.
    expect([...statuses.keys()].some((s) => s < 300)).toBe(true);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    expect((await t.req('GET', '/v1/health/ready')).status).toBe(200);
    expect(await sentinel()).toBe(sentinelBefore);
    // What the fuzzer stored is consistent: every listed memory reads back as listed.
    const listed = await t.req('GET', '/v1/memories?limit=1000', { key: fuzzKey });
    expect(listed.status).toBe(200);
    for (const m of listed.body.memories.slice(0, 50)) {
      const got = await t.req('GET', `/v1/memories/${m.memory_id}`, { key: fuzzKey });
      expect(got.status).toBe(200);
      expect(got.body.content).toBe(m.content);
    }
  }, 90_000);
});

// ─── raw malformed HTTP ──────────────────────────────────────────────────────────────────

/** Writes `data`, returns the status of the first response (0 when the server closed without one). */
function rawExchange(data: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(t.app.httpPort, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no answer and no close within ${HUNG_MS} ms for ${JSON.stringify(data.toString('latin1').slice(0, 200))}`,
        ),
      );
    }, HUNG_MS);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      resolve(m ? Number(m[1]) : 0);
    };
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) done();
    });
    socket.on('close', done);
    socket.on('error', () => done());
    // Half-close after writing: a request that is only a fragment must still end in an answer or a close.
    socket.end(data);
  });
}

const token = fc.constantFrom(
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'HEAD',
  'get',
  'G ET',
  'BREW',
  '',
  '\u0000',
);
const target = fc.constantFrom(
  '/v1/health/live',
  '/v1/memories',
  '/v1/auth/whoami',
  '/',
  '*',
  '/v1/health/ live',
  'http://x/v1/memories',
  '/%zz',
  '/v1/memories?limit=%ff',
  '//',
  `/${'a'.repeat(9000)}`,
);
const version = fc.constantFrom(
  'HTTP/1.1',
  'HTTP/1.0',
  'HTTP/9.9',
  'HTTP/1.1 ',
  'HTTP/2',
  'HTTP',
  '',
  'http/1.1',
);
const eol = fc.constantFrom('\r\n', '\n', '\r', '\n\r');
const header = fc.oneof(
  fc.constantFrom(
    'Host: x',
    'Content-Length: 5',
    'Content-Length: -1',
    'Content-Length: ten',
    'Content-Length: 5, 6',
    'Transfer-Encoding: chunked',
    'Transfer-Encoding: gzip',
    'Connection: close',
    'Host x',
    ': empty',
    `X-Long: ${'v'.repeat(20_000)}`,
    'Content-Type: application/json',
  ),
  fc.string({ maxLength: 30 }),
);

const rawRequest = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        token,
        target,
        version,
        eol,
        fc.array(header, { maxLength: 6 }),
        fc.string({ maxLength: 40 }),
      )
      .map(([m, p, v, e, hs, body]) =>
        Buffer.from(`${m} ${p} ${v}${e}${hs.join(e)}${e}${e}${body}`, 'latin1'),
      ),
    weight: 5,
  },
  { arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)), weight: 1 },
);

describe('fuzzing raw HTTP', () => {
  it('every malformed request is answered (never 5xx) or the connection closed, at once; the server goes on', async () => {
    await fc.assert(
      fc.asyncProperty(rawRequest, async (data) => {
        const status = await rawExchange(data);
        expect(
          status === 0 || status < 500,
          `status ${status} for ${JSON.stringify(data.toString('latin1').slice(0, 200))}`,
        ).toBe(true);
      }),
      { numRuns: 1000, interruptAfterTimeLimit: BUDGET_MS },
    );
    expect((await t.req('GET', '/v1/health/ready')).status).toBe(200);
    expect(await sentinel()).toBe(sentinelBefore);
  }, 90_000);
});
