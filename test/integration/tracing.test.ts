/**
 * OpenTelemetry spans (src/tracing), collected with the SDK's in-memory exporter from a server in
 * this process: a REST remember and a gRPC recall each carry an incoming W3C traceparent, and the
 * spans form one chain under it — request → verb → embedding and shard call → the shard's own work,
 * measured inside its worker thread — with the workspace slug, never content or keys.
 */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, tracer } from '../../src/tracing/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc } from '../helpers/grpc.ts';
import { until } from '../helpers/wait.ts';

const exporter = new InMemorySpanExporter();
let t: TestApp;

beforeAll(async () => {
  startTracing({ serviceName: 'flashbulb-test', exporter });
  t = await startTestApp({}, { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' });
});
afterAll(async () => {
  await t?.stop();
  await tracer().shutdown();
});

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

function trace(traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}

/** The spans of a trace, once the one named `last` (the outermost, so the last to end) is there. */
function spansOf(traceId: string, last: string): Promise<ReadableSpan[]> {
  return until(() => {
    const s = trace(traceId);
    return s.some((x) => x.name === last) ? s : null;
  }, { what: `the span ${last}` });
}

function only(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name), `one span named ${name} among ${spans.map((s) => s.name).join(', ')}`).toEqual([name]);
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
    const res = await t.req('POST', '/v1/memories', { body: { content }, headers: { traceparent: `00-${TRACE}-${PARENT}-01` } });
    expect(res.status, res.text).toBe(201);
    const spans = await spansOf(TRACE, 'POST /v1/memories');
    const request = only(spans, 'POST /v1/memories');
    expect(parentOf(request)).toBe(PARENT);
    expect(request.attributes).toMatchObject({ 'flashbulb.operation': 'remember', 'flashbulb.workspace': 'default' });
    const verb = only(spans, 'verb remember');
    expect(parentOf(verb)).toBe(id(request));
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
    const grpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey, extra: { traceparent: `00-${traceId}-${'b'.repeat(16)}-01` } } });
    try {
      await grpc.call('MemoryService', 'Recall', { cue: 'maps', strategies: [{ strategy_type: 1 }] });
    } finally {
      grpc.close();
    }
    const spans = await spansOf(traceId, 'grpc recall');
    const call = only(spans, 'grpc recall');
    expect(parentOf(call)).toBe('b'.repeat(16));
    expect(parentOf(only(spans, 'verb recall'))).toBe(id(call));
    expect(spans.some((s) => s.name.startsWith('shard ') && s.name.endsWith('(in the shard)'))).toBe(true);
  });

  it('without a traceparent a request starts a trace of its own', async () => {
    const before = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));
    const res = await t.req('GET', '/v1/entities');
    expect(res.status).toBe(200);
    const fresh = await until(() => {
      const s = exporter.getFinishedSpans().filter((x) => x.name === 'GET /v1/entities' && !before.has(x.spanContext().traceId));
      return s.length > 0 ? s : null;
    }, { what: 'a new trace' });
    expect(parentOf(fresh[0]!)).toBeUndefined();
  });
});
