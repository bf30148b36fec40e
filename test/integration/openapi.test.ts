/**
 * GET /v1/openapi.json: served without a key, valid against the OpenAPI 3.1 meta-schema, in step
 * with the route table both ways (every route documented, every documented operation routed),
 * and honest: live answers validate against the reply schemas it documents, and its request schemas
 * are the validation (a body they refuse gets a 400, one they take does not).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020Module from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchRoute } from '../../src/http/server.ts';
import { ROUTES } from '../../src/http/routes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const Ajv2020 = Ajv2020Module.default;
const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

let t: TestApp;
let doc: any;

beforeAll(async () => {
  t = await startTestApp();
  const res = await t.req('GET', '/v1/openapi.json', { key: null });
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => t.stop());

/** Replaces `#/components/schemas/X` references with the schemas they name. */
function resolved(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(resolved);
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as { $ref?: string }).$ref;
  if (typeof ref === 'string')
    return resolved(doc.components.schemas[ref.replace('#/components/schemas/', '')]);
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolved(v)]));
}

const ajv = new Ajv2020({ strict: false, allErrors: true });

function expectConforms(path: string, method: string, status: number, body: unknown): void {
  const op = doc.paths[path]?.[method];
  expect(op, `${method} ${path} documented`).toBeDefined();
  const media = op.responses[String(status)]?.content?.['application/json'];
  expect(media, `${method} ${path} documents ${status}`).toBeDefined();
  const check = ajv.compile(resolved(media.schema) as object);
  expect(check(body), `${method} ${path} ${status}: ${ajv.errorsText(check.errors)}`).toBe(true);
}

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document (meta-schema)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every registered route, and every documented operation is routed to the route it names', () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        documented.add(`${method.toUpperCase()} ${path}`);
        const concrete = path.replace(/\{workspace\}/, 'default').replace(/\{(\w+)\}/g, 'x');
        const match = matchRoute(method.toUpperCase(), concrete);
        expect(item[method].operationId.replace(/_in_workspace$/, ''), `${method} ${path}`).toBe(
          match.route.op,
        );
        expect(match.workspace === undefined, `${path} prefix`).toBe(!path.includes('{workspace}'));
      }
    }
    for (const r of ROUTES) {
      const path = r.path.replace(/:(\w+)/g, '{$1}');
      expect(documented.has(`${r.method} ${path}`), `${r.method} ${path}`).toBe(true);
      if (r.scoped)
        expect(
          documented.has(`${r.method} ${path.replace('/v1/', '/v1/workspaces/{workspace}/')}`),
        ).toBe(true);
    }
    const ids = Object.values<any>(doc.paths).flatMap((item) =>
      METHODS.filter((m) => item[m]).map((m) => item[m].operationId),
    );
    expect(new Set(ids).size, 'operationIds are unique').toBe(ids.length);
    expect(documented.size).toBe(ROUTES.length + ROUTES.filter((r) => r.scoped).length);
  });

  it('declares the bearer scheme and lets the document itself and nothing else go without a key', async () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/v1/openapi.json'].get.security).toEqual([]);
    const open = Object.values<any>(doc.paths).flatMap((item) =>
      METHODS.map((m) => item[m]).filter((op) => op?.security?.length === 0),
    );
    expect(open.map((op) => op.operationId)).toEqual(['openapi']);
    expect((await t.req('GET', '/v1/memories', { key: null })).status).toBe(401);
  });

  it('documents request bodies, query parameters, error bodies and the SSE events', () => {
    const recall = doc.paths['/v1/recall'].post;
    expect(recall.requestBody.content['application/json'].schema.required).toEqual(['cue']);
    expect(recall.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorBody',
    );
    expect(recall.responses['429'].headers['Retry-After']).toBeDefined();
    const list = doc.paths['/v1/memories'].get;
    expect(list.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['entity_id', 'kind', 'cursor', 'limit', 'include_superseded']),
    );
    expect(list.parameters.find((p: any) => p.name === 'limit').schema.type).toBe('integer');
    const scoped = doc.paths['/v1/workspaces/{workspace}/memories/{id}'].get;
    expect(scoped.parameters.map((p: any) => p.name)).toEqual(['workspace', 'id']);
    const events =
      doc.paths['/v1/subscribe'].post.responses['200'].content['text/event-stream']['x-sse-events'];
    expect(Object.keys(events)).toEqual(['subscribed', 'message', 'closed']);
    expect(
      doc.components.schemas.ErrorBody.properties.error_code.anyOf.map((s: any) => s.const),
    ).toContain('rate_limited');
    expect(doc.paths['/v1/reflect/prepare'].post.deprecated).toBe(true);
  });

  it('states what validation enforces: a body its schema refuses is a 400 naming the fault, one it takes is not', async () => {
    const m = await t.req('POST', '/v1/memories', {
      body: { content: 'a memory the request schemas are tried on' },
    });
    const id = m.body.memory_id as string;
    const far = new Date(Date.now() + 86_400_000).toISOString();
    const cases: Array<[method: string, path: string, body: object, fault: RegExp | null]> = [
      [
        'post',
        '/v1/recall',
        { cue: 'x', strategies: ['temporal'], time_range: { start: '2026-01-01', start_us: 1 } },
        /give start_us or start, not both/,
      ],
      [
        'post',
        '/v1/recall',
        {
          cue: 'x',
          strategies: ['temporal'],
          time_range: { start: '2026-01-01', end_us: 1_900_000_000_000_000 },
        },
        null,
      ],
      ['post', '/v1/recall', { cue: 'x', strategies: ['Similarity'] }, null],
      ['post', '/v1/memories', { content: 'x', expires_at: '2255-01-01' }, /expires_at/],
      ['post', '/v1/memories', { content: 'x', ttl_s: 0 }, /^ttl_s must be more than 0/],
      [
        'post',
        '/v1/memories',
        { content: 'x', ttl_s: 60, expires_at: far },
        /give ttl_s or expires_at, not both/,
      ],
      ['post', '/v1/memories', { content: 'x', ttl_s: null, expires_at: far }, null],
      ['post', '/v1/memories', { content: '   ' }, /^content must not be empty or blank/],
      [
        'post',
        '/v1/memories',
        { content: 'x', edges: [{ target_id: id, edge_type: 'CAUSED_BY' }] },
        null,
      ],
      [
        'post',
        '/v1/memories',
        { content: 'x', edges: [{ target_id: 'nope', edge_type: 'caused_by' }] },
        /^edges\[0\]\.target_id 'nope' is not a memory id/,
      ],
      ['post', '/v1/memories/batch', { memory_ids: ['not-an-id'] }, null],
      ['post', '/v1/forget', {}, /^give at least one of memory_ids, entity_id/],
      ['put', '/v1/revise/{id}', {}, /^give at least one of content, importance/],
      [
        'post',
        '/v1/conversations/{conversation_id}/messages',
        { messages: [] },
        /^messages must have at least 1 item/,
      ],
      [
        'post',
        '/v1/conversations/{conversation_id}/messages',
        { messages: [{ speaker: '', content: 'hi' }] },
        /^messages\[0\]\.speaker must not be empty/,
      ],
      [
        'post',
        '/v1/conversations/{conversation_id}/messages',
        { messages: [{ speaker: 'ann', content: 'hi', importance: 2 }] },
        /^messages\[0\]\.importance must be between 0 and 1, got 2/,
      ],
      [
        'post',
        '/v1/conversations/{conversation_id}/messages',
        { messages: [{ speaker: 'ann', content: 'hi' }], ttl_s: 60, expires_at_us: far },
        /not both/,
      ],
      [
        'post',
        '/v1/conversations/{conversation_id}/messages',
        { messages: [{ speaker: 'ann', content: 'hi', message_id: 'm1' }] },
        null,
      ],
    ];
    for (const [method, path, body, fault] of cases) {
      const what = `${method} ${path} ${JSON.stringify(body)}`;
      const check = ajv.compile(
        resolved(doc.paths[path][method].requestBody.content['application/json'].schema) as object,
      );
      expect(check(body), `${what}: the schema ${fault === null ? 'takes' : 'refuses'} it`).toBe(
        fault === null,
      );
      const res = await t.req(
        method.toUpperCase(),
        path.replace('{id}', id).replace('{conversation_id}', 'openapi-chat'),
        { body },
      );
      if (fault === null)
        expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      else {
        expect(res.status, what).toBe(400);
        expect(res.body.message, what).toMatch(fault);
      }
    }
  });

  it('declares microsecond times as integers and the conflicts it answers', () => {
    for (const field of ['created_at', 'occurred_at', 'updated_at', 'last_accessed_at'])
      expect(doc.components.schemas.Memory.properties[field].type).toBe('integer');
    expect(doc.paths['/v1/admin/backup'].post.responses['409']).toBeDefined();
    expect(doc.paths['/v1/workspaces/{slug}'].delete.parameters[0].schema.not).toEqual({
      enum: ['default'],
    });
    expect(
      doc.paths['/v1/conversations/{conversation_id}/messages'].post.parameters.find(
        (p: any) => p.name === 'conversation_id',
      ).schema,
    ).toMatchObject({ minLength: 1, maxLength: 256 });
  });

  it('describes the answers the server actually gives', async () => {
    const m = await t.req('POST', '/v1/memories', {
      body: { content: 'the openapi test remembers this', entity_id: 'doc', context: { a: 1 } },
    });
    expectConforms('/v1/memories', 'post', 201, m.body);
    const other = await t.req('POST', '/v1/memories', {
      body: {
        content: 'a follow-up',
        edges: [{ target_id: m.body.memory_id, edge_type: 'followed_by' }],
      },
    });
    expectConforms('/v1/memories', 'get', 200, (await t.req('GET', '/v1/memories?limit=5')).body);
    expectConforms(
      '/v1/memories/{id}',
      'get',
      200,
      (await t.req('GET', `/v1/memories/${m.body.memory_id}`)).body,
    );
    expectConforms(
      '/v1/memories/{id}/edges',
      'get',
      200,
      (await t.req('GET', `/v1/memories/${other.body.memory_id}/edges`)).body,
    );
    expectConforms(
      '/v1/memories/batch',
      'post',
      200,
      (await t.req('POST', '/v1/memories/batch', { body: { memory_ids: [m.body.memory_id] } }))
        .body,
    );
    const recall = await t.req('POST', '/v1/recall', {
      body: { cue: 'openapi', strategies: ['similarity', 'temporal'] },
    });
    expect(recall.body.results.length).toBeGreaterThan(0);
    expectConforms('/v1/recall', 'post', 200, recall.body);
    expectConforms(
      '/v1/prime',
      'post',
      200,
      (await t.req('POST', '/v1/prime', { body: { entity_id: 'doc' } })).body,
    );
    expectConforms(
      '/v1/graph',
      'post',
      200,
      (await t.req('POST', '/v1/graph', { body: { center_id: m.body.memory_id } })).body,
    );
    expectConforms('/v1/entities', 'get', 200, (await t.req('GET', '/v1/entities')).body);
    expectConforms('/v1/insights', 'get', 200, (await t.req('GET', '/v1/insights')).body);
    expectConforms('/v1/reflect', 'post', 200, (await t.req('POST', '/v1/reflect')).body);
    expectConforms(
      '/v1/revise/{id}',
      'put',
      200,
      (await t.req('PUT', `/v1/revise/${m.body.memory_id}`, { body: { importance: 0.9 } })).body,
    );
    expectConforms('/v1/auth/whoami', 'get', 200, (await t.req('GET', '/v1/auth/whoami')).body);
    expectConforms('/v1/workspaces', 'get', 200, (await t.req('GET', '/v1/workspaces')).body);
    const ws = await t.req('POST', '/v1/workspaces', { body: { slug: 'openapi-doc' } });
    expectConforms('/v1/workspaces', 'post', 201, ws.body);
    const key = await t.req('POST', '/v1/keys', {
      body: { workspace: 'openapi-doc', role: 'workspace' },
    });
    expectConforms('/v1/keys', 'post', 201, key.body);
    expectConforms('/v1/keys', 'get', 200, (await t.req('GET', '/v1/keys')).body);
    expectConforms(
      '/v1/keys/{key_id}',
      'delete',
      200,
      (await t.req('DELETE', `/v1/keys/${key.body.key_id}`)).body,
    );
    expectConforms(
      '/v1/workspaces/{slug}',
      'delete',
      200,
      (await t.req('DELETE', '/v1/workspaces/openapi-doc')).body,
    );
    expectConforms(
      '/v1/forget',
      'post',
      200,
      (await t.req('POST', '/v1/forget', { body: { entity_id: 'doc' } })).body,
    );
    expectConforms('/v1/health/ready', 'get', 200, (await t.req('GET', '/v1/health/ready')).body);
    const bad = await t.req('POST', '/v1/recall', { body: { cue: 3 } });
    expectConforms('/v1/recall', 'post', 400, bad.body);
    const missing = await t.req('GET', '/v1/memories/00000000000000000000000000000000');
    expectConforms('/v1/memories/{id}', 'get', 404, missing.body);
  });
});
