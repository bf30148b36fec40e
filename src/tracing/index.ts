/**
 * @module tracing — OpenTelemetry spans for a request's path: the REST or gRPC request, the verb,
 * the embedding call and the shard operation (its router-side call and the work inside the shard's
 * thread, measured there and recorded here). Off by default: `tracer()` is then a no-op that only
 * calls through, so a request pays one closure call per span site. On with
 * `FLASHBULB_OTEL_EXPORTER=otlp` (the OTLP/HTTP exporter reads the standard `OTEL_EXPORTER_OTLP_*`
 * variables), or with any exporter a test hands to `startTracing`. Incoming W3C `traceparent`
 * headers (REST) and metadata (gRPC) become the parent of the request's span. Attributes carry the
 * workspace slug and operation names, never content or keys. The only file that imports
 * `@opentelemetry/*`.
 */
import { context, propagation, trace, SpanStatusCode, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

/** What a span site may do with its span while it runs. */
export interface SpanHandle {
  setAttribute(key: string, value: string | number | boolean): void;
  updateName(name: string): void;
}

/** Measured elsewhere (a shard's thread): epoch milliseconds. */
export type Took = readonly [startMs: number, endMs: number];

export interface Tracer {
  readonly enabled: boolean;
  /** Runs `fn` in a span, the child of the active span or of `parent` (a W3C traceparent) when given. */
  span<T>(name: string, fn: (span: SpanHandle) => Promise<T>, opts?: { parent?: string | undefined; attributes?: Attributes }): Promise<T>;
  /** A recorder for a span measured elsewhere, parented by the span active now (undefined when off). */
  recorder(name: string, attributes?: Attributes): ((took: Took) => void) | undefined;
  shutdown(): Promise<void>;
}

const NOOP_SPAN: SpanHandle = { setAttribute: () => {}, updateName: () => {} };

const NOOP: Tracer = {
  enabled: false,
  span: (_name, fn) => fn(NOOP_SPAN),
  recorder: () => undefined,
  shutdown: async () => {},
};

let current: Tracer = NOOP;

/** The process's tracer: the no-op one until `startTracing`. */
export function tracer(): Tracer {
  return current;
}

export interface TracingOptions {
  /** `service.name` unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES (read by the SDK) say otherwise (default flashbulb). */
  serviceName?: string;
  /** `otlp`, or an exporter (tests pass an in-memory one). */
  exporter: 'otlp' | SpanExporter;
  /** Hand spans to the exporter in batches, as `otlp` does (default for `otlp`), or one by one as they end. */
  batch?: boolean;
}

/** Turns tracing on for this process; returns the tracer (also what `tracer()` gives from now on). */
export function startTracing(opts: TracingOptions): Tracer {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const exporter = opts.exporter === 'otlp' ? new OTLPTraceExporter() : opts.exporter;
  const processor = opts.batch ?? opts.exporter === 'otlp' ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter);
  const resource = resourceFromAttributes({ 'service.name': opts.serviceName ?? 'flashbulb' }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const otel = provider.getTracer('flashbulb');
  current = {
    enabled: true,
    span: (name, fn, o = {}) => {
      const parent = o.parent === undefined ? context.active() : fromTraceparent(o.parent);
      return otel.startActiveSpan(name, o.attributes ? { attributes: o.attributes } : {}, parent, (span) => run(span, fn));
    },
    recorder: (name, attributes) => {
      const parent = context.active();
      return (took) => otel.startSpan(name, { startTime: took[0], ...(attributes ? { attributes } : {}) }, parent).end(took[1]);
    },
    shutdown: async () => {
      current = NOOP;
      await provider.shutdown();
      context.disable();
      propagation.disable();
      trace.disable();
    },
  };
  return current;
}

async function run<T>(span: Span, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
  try {
    return await fn(span);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** The context a W3C traceparent names (the active one when it is malformed). */
function fromTraceparent(traceparent: string): Context {
  return propagation.extract(context.active(), { traceparent }, { get: (c, k) => (c as Record<string, string>)[k], keys: (c) => Object.keys(c as object) });
}

