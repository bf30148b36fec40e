/**
 * OpenTelemetry spans (src/tracing), collected with the SDK's in-memory exporter from a server in
 * this process: a REST remember and a gRPC recall each carry an incoming W3C traceparent, and the
 * spans form one chain under it — request → verb → embedding and shard call → the shard's own work,
 * measured inside its worker thread — with the workspace slug, never content or keys. The request
 * spans follow the HTTP and RPC semantic conventions (kind SERVER, route, status code; an error
 * status for the server's faults only), the verb spans the GenAI memory conventions, and the
 * resource names the service's version and instance.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/config/version.ts';
import { tracer } from '../../src/tracing/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc } from '../helpers/grpc.ts';
import { until } from '../helpers/wait.ts';

const exporter = new InMemorySpanExporter();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp(
    {},
    { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' },
    { traceExporter: exporter },
  );
});
afterAll(async () => {
  await t?.stop();
  await tracer().shutdown();
});

/** The one span of a fresh trace (a traceparent of its own) named `name`. */
async function requestSpan(traceId: string, name: string): Promise<ReadableSpan> {
  return only(await spansOf(traceId, name), name);
}
const traceparent = (traceId: string): string => `00-${traceId}-${'c'.repeat(16)}-01`;

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

function trace(traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}

/** The spans of a trace, once the one named `last` (the outermost, so the last to end) is there. */
function spansOf(traceId: string, last: string): Promise<ReadableSpan[]> {
  return until(
    () => {
      const s = trace(traceId);
      return s.some((x) => x.name === last) ? s : null;
    },
    { what: `the span ${last}` },
  );
}

function only(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `one span named ${name} among ${spans.map((s) => s.name).join(', ')}`,
  ).toEqual([name]);
  return found[0]!;
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

function id(span: ReadableSpan): string {
  return span.spanContext().spanId;
}

describe('tracing', () => {
  it('a REST remember is one chain under the incoming traceparent, across the shard thread', async () => {
    const content = 'Erin secretly collects antique maps';
    const res = await t.req('POST', '/v1/memories', {
      body: { content },
      headers: { traceparent: `00-${TRACE}-${PARENT}-01` },
    });
    expect(res.status, res.text).toBe(201);
    const spans = await spansOf(TRACE, 'POST /v1/memories');
    const request = only(spans, 'POST /v1/memories');
    expect(parentOf(request)).toBe(PARENT);
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.status.code).toBe(SpanStatusCode.UNSET);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/memories',
      'http.response.status_code': 201,
      'url.path': '/v1/memories',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': t.app.httpPort,
      'flashbulb.operation': 'remember',
      'flashbulb.workspace': 'default',
    });
    expect(request.attributes['error.type']).toBeUndefined();
    const verb = only(spans, 'verb remember');
    expect(parentOf(verb)).toBe(id(request));
    expect(verb.kind).toBe(SpanKind.INTERNAL);
    expect(verb.attributes).toMatchObject({
      'gen_ai.operation.name': 'create_memory',
      'gen_ai.provider.name': 'flashbulb',
      'gen_ai.memory.store.id': 'default',
      'gen_ai.memory.record.id': res.body.memory_id,
      'gen_ai.memory.record.count': 1,
    });
    expect(request.resource.attributes).toMatchObject({
      'service.name': 'flashbulb',
      'service.version': VERSION,
    });
    expect(String(request.resource.attributes['service.instance.id'])).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(parentOf(only(spans, 'embed'))).toBe(id(verb));
    const call = only(spans, 'shard remember');
    expect(parentOf(call)).toBe(id(verb));
    const inShard = only(spans, 'shard remember (in the shard)');
    expect(parentOf(inShard)).toBe(id(call));
    // The shard's span is timed by its own thread's clock, the others by the SDK's (anchored to
    // Date.now() when the trace began): they agree to well under a millisecond, not exactly.
    const ms = (hr: [number, number]): number => hr[0] * 1000 + hr[1] / 1e6;
    const CLOCKS_MS = 5;
    expect(ms(inShard.startTime)).toBeGreaterThanOrEqual(ms(call.startTime) - CLOCKS_MS);
    expect(ms(inShard.endTime)).toBeLessThanOrEqual(ms(call.endTime) + CLOCKS_MS);
    expect(ms(inShard.endTime)).toBeGreaterThanOrEqual(ms(inShard.startTime));
    const everything = JSON.stringify(spans.map((s) => [s.name, s.attributes]));
    expect(everything).not.toContain('antique');
    expect(everything).not.toContain(t.adminKey);
  });

  it('a gRPC recall takes its parent from traceparent metadata', async () => {
    const traceId = 'a'.repeat(32);
    const grpc = connectGrpc(t.app.grpcPort, {
      auth: { key: t.adminKey, extra: { traceparent: `00-${traceId}-${'b'.repeat(16)}-01` } },
    });
    try {
      await grpc.call('MemoryService', 'Recall', {
        cue: 'maps',
        strategies: [{ strategy_type: 1 }],
      });
    } finally {
      grpc.close();
    }
    const spans = await spansOf(traceId, 'hebbs.v1.MemoryService/Recall');
    const call = only(spans, 'hebbs.v1.MemoryService/Recall');
    expect(parentOf(call)).toBe('b'.repeat(16));
    expect(call.kind).toBe(SpanKind.SERVER);
    expect(call.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'hebbs.v1.MemoryService',
      'rpc.method': 'Recall',
      'rpc.grpc.status_code': 0,
      'rpc.response.status_code': 'OK',
    });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    const verb = only(spans, 'verb recall');
    expect(parentOf(verb)).toBe(id(call));
    expect(verb.attributes).toMatchObject({
      'gen_ai.operation.name': 'search_memory',
      'gen_ai.memory.store.id': 'default',
      'flashbulb.recall.strategies': ['similarity'],
    });
    expect(verb.attributes['gen_ai.memory.record.count']).toBeGreaterThan(0);
    expect(
      spans.some((s) => s.name.startsWith('shard ') && s.name.endsWith('(in the shard)')),
    ).toBe(true);
  });

  it('without a traceparent a request starts a trace of its own', async () => {
    const before = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));
    const res = await t.req('GET', '/v1/entities');
    expect(res.status).toBe(200);
    const fresh = await until(
      () => {
        const s = exporter
          .getFinishedSpans()
          .filter((x) => x.name === 'GET /v1/entities' && !before.has(x.spanContext().traceId));
        return s.length > 0 ? s : null;
      },
      { what: 'a new trace' },
    );
    expect(parentOf(fresh[0]!)).toBeUndefined();
  });

  it('a 4xx leaves the request span unset (the caller erred), with its route and status; the verb span names the error', async () => {
    const traceId = '1'.repeat(32);
    const res = await t.req('GET', `/v1/workspaces/default/memories/${'0'.repeat(32)}`, {
      headers: { traceparent: traceparent(traceId) },
    });
    expect(res.status).toBe(404);
    const request = await requestSpan(traceId, 'GET /v1/workspaces/{workspace}/memories/{id}');
    expect(request.attributes).toMatchObject({
      'http.route': '/v1/workspaces/{workspace}/memories/{id}',
      'http.response.status_code': 404,
    });
    expect(request.status.code).toBe(SpanStatusCode.UNSET);
    expect(request.attributes['error.type']).toBeUndefined();
    const verb = only(await spansOf(traceId, 'verb get'), 'verb get');
    expect(verb.status.code).toBe(SpanStatusCode.UNSET);
    expect(verb.attributes['error.type']).toBe('not_found');
  });

  it('a 5xx sets the error status and error.type to the status code, with no description', async () => {
    const traceId = '2'.repeat(32);
    t.app.svc.health.ready = false;
    try {
      expect(
        (await t.req('GET', '/v1/health/ready', { headers: { traceparent: traceparent(traceId) } }))
          .status,
      ).toBe(503);
    } finally {
      t.app.svc.health.ready = true;
    }
    const request = await requestSpan(traceId, 'GET /v1/health/ready');
    expect(request.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(request.attributes).toMatchObject({
      'error.type': '503',
      'http.response.status_code': 503,
    });
  });

  it('a path no route knows is named by its method alone; a refused key still gets its span; query values are redacted', async () => {
    const unknown = '3'.repeat(32);
    expect(
      (await t.req('GET', '/v1/nothing/here', { headers: { traceparent: traceparent(unknown) } }))
        .status,
    ).toBe(404);
    const bare = await requestSpan(unknown, 'GET');
    expect(bare.attributes['http.route']).toBeUndefined();
    expect(bare.attributes).toMatchObject({
      'url.path': '/v1/nothing/here',
      'http.response.status_code': 404,
    });

    const refused = '4'.repeat(32);
    expect(
      (
        await t.req('POST', '/v1/recall', {
          key: 'fb_live_wrong',
          body: { cue: 'x' },
          headers: { traceparent: traceparent(refused) },
        })
      ).status,
    ).toBe(401);
    const denied = await requestSpan(refused, 'POST /v1/recall');
    expect(denied.attributes).toMatchObject({
      'http.response.status_code': 401,
      'http.route': '/v1/recall',
    });
    expect(denied.status.code).toBe(SpanStatusCode.UNSET);

    const listed = '5'.repeat(32);
    expect(
      (
        await t.req('GET', '/v1/memories?q=antique&limit=2', {
          headers: { traceparent: traceparent(listed) },
        })
      ).status,
    ).toBe(200);
    const list = await requestSpan(listed, 'GET /v1/memories');
    expect(list.attributes['url.query']).toBe('q=REDACTED&limit=REDACTED');
  });

  it('a gRPC call the caller got wrong keeps an unset status; its code is on the span', async () => {
    const traceId = '6'.repeat(32);
    const grpc = connectGrpc(t.app.grpcPort, {
      auth: { key: t.adminKey, extra: { traceparent: traceparent(traceId) } },
    });
    try {
      await grpc
        .call('MemoryService', 'Get', { memory_id: Buffer.alloc(16) })
        .catch(() => undefined);
    } finally {
      grpc.close();
    }
    const call = await requestSpan(traceId, 'hebbs.v1.MemoryService/Get');
    expect(call.attributes).toMatchObject({
      'rpc.grpc.status_code': 5,
      'rpc.response.status_code': 'NOT_FOUND',
      'rpc.method': 'Get',
    });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
  });
});
