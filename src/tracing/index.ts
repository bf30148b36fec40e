/**
 * @module tracing — OpenTelemetry spans for a request's path: the REST or gRPC request (kind
 * SERVER, with the HTTP and RPC semantic conventions' attributes), the verb (carrying the GenAI
 * memory conventions' operation name, store and record count), the embedding call and the shard
 * operation (its router-side call and the work inside the shard's thread, measured there and
 * recorded here). Off by default: `tracer()` is then a no-op that only calls through, so a request
 * pays one closure call per span site. On with `FLASHBULB_OTEL_EXPORTER=otlp` (the OTLP/HTTP
 * exporter reads the standard `OTEL_EXPORTER_OTLP_*` variables), or with any exporter handed to
 * `startTracing`. Incoming W3C `traceparent` headers (REST) and metadata (gRPC) become the parent
 * of the request's span. A span whose work throws gets `error.type` (the error's `code`), and an
 * error status only when the error is the server's fault (an error saying `fault: false`, a
 * caller's mistake, leaves the status unset, as the HTTP server conventions do for 4xx).
 * Attributes carry the workspace slug, ids and operation names, never content or keys. The only
 * file that imports `@opentelemetry/*`.
 */
import { randomUUID } from 'node:crypto';
import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type AttributeValue,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

export type { Attributes };

/** What a span site may do with its span while it runs. */
export interface SpanHandle {
  setAttribute(key: string, value: AttributeValue): void;
  updateName(name: string): void;
  /** The operation failed: status Error (described by `message` when given) and `error.type`. */
  fail(errorType: string, message?: string): void;
}

/** Measured elsewhere (a shard's thread): epoch milliseconds. */
export type Took = readonly [startMs: number, endMs: number];

export interface SpanOptions {
  /** A W3C traceparent to parent the span (instead of the active span). */
  parent?: string | undefined;
  attributes?: Attributes;
  /** `server` for a request received from a client (default `internal`). */
  kind?: 'server' | 'internal';
}

export interface Tracer {
  readonly enabled: boolean;
  /** Runs `fn` in a span, the child of the active span or of `opts.parent` when given. */
  span<T>(name: string, fn: (span: SpanHandle) => Promise<T>, opts?: SpanOptions): Promise<T>;
  /** A recorder for a span measured elsewhere, parented by the span active now (undefined when off). */
  recorder(name: string, attributes?: Attributes): ((took: Took) => void) | undefined;
  /** Sets attributes on the span active now (none when off or outside a span). */
  annotate(attributes: Attributes): void;
  shutdown(): Promise<void>;
}

const NOOP_SPAN: SpanHandle = { setAttribute: () => {}, updateName: () => {}, fail: () => {} };

const NOOP: Tracer = {
  enabled: false,
  span: (_name, fn) => fn(NOOP_SPAN),
  recorder: () => undefined,
  annotate: () => {},
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
  /** `service.version`: the server's. */
  serviceVersion?: string;
  /** `service.instance.id` (default a random UUID: one per process). */
  instanceId?: string;
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
  const processor =
    (opts.batch ?? opts.exporter === 'otlp')
      ? new BatchSpanProcessor(exporter)
      : new SimpleSpanProcessor(exporter);
  const own: Attributes = {
    'service.name': opts.serviceName ?? 'flashbulb',
    'service.instance.id': opts.instanceId ?? randomUUID(),
  };
  if (opts.serviceVersion !== undefined) own['service.version'] = opts.serviceVersion;
  // The environment's attributes (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) win over ours.
  const resource = resourceFromAttributes(own).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const otel = provider.getTracer('flashbulb', opts.serviceVersion);
  current = {
    enabled: true,
    span: (name, fn, o = {}) => {
      const parent = o.parent === undefined ? context.active() : fromTraceparent(o.parent);
      const options = {
        kind: o.kind === 'server' ? SpanKind.SERVER : SpanKind.INTERNAL,
        ...(o.attributes ? { attributes: o.attributes } : {}),
      };
      return otel.startActiveSpan(name, options, parent, (span) => run(span, fn));
    },
    recorder: (name, attributes) => {
      const parent = context.active();
      return (took) =>
        otel
          .startSpan(name, { startTime: took[0], ...(attributes ? { attributes } : {}) }, parent)
          .end(took[1]);
    },
    annotate: (attributes) => trace.getActiveSpan()?.setAttributes(attributes),
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
  const handle: SpanHandle = {
    setAttribute: (k, v) => span.setAttribute(k, v),
    updateName: (n) => span.updateName(n),
    fail: (type, message) => {
      span.setAttribute('error.type', type);
      span.setStatus(
        message === undefined
          ? { code: SpanStatusCode.ERROR }
          : { code: SpanStatusCode.ERROR, message },
      );
    },
  };
  try {
    return await fn(handle);
  } catch (err) {
    const type = errorType(err);
    if (isFault(err)) handle.fail(type, err instanceof Error ? err.message : String(err));
    else span.setAttribute('error.type', type);
    throw err;
  } finally {
    span.end();
  }
}

/** An error's low-cardinality class: its `code` (Flashbulb's error codes), else its name. */
function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error && err.name !== 'Error' ? err.name : '_OTHER';
}

/** Whether an error is the server's fault: unless it says `fault: false`, it is. */
function isFault(err: unknown): boolean {
  return (err as { fault?: unknown } | null)?.fault !== false;
}

/** The context a W3C traceparent names (the active one when it is malformed). */
function fromTraceparent(traceparent: string): Context {
  return propagation.extract(
    context.active(),
    { traceparent },
    { get: (c, k) => (c as Record<string, string>)[k], keys: (c) => Object.keys(c as object) },
  );
}
