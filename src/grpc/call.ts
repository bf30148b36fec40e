/** @module grpc/call — what every handler shares: the caller, the workspace, metrics, error mapping. */
import * as grpc from '@grpc/grpc-js';
import { ANONYMOUS_ADMIN, type Principal } from '../auth/principal.ts';
import { ERRORS, FlashbulbError, invalid } from '../errors/codes.ts';
import { observeRequest } from '../metrics/history.ts';
import { tracer, type SpanHandle } from '../tracing/index.ts';
import { unicodeProblem } from '../model/unicode.ts';
import { budgeted, resolveCtx, type Ctx, type Services } from '../verbs/context.ts';

/**
 * What a request message becomes when its bytes are not a valid protobuf message. grpc-js answers
 * a throwing deserializer with INTERNAL; client garbage is INVALID_ARGUMENT, so server.ts wraps
 * every deserializer to return this instead, and the handlers refuse it.
 */
export class Undecodable {
  readonly message: string;
  constructor(reason: string, opts: { field?: boolean } = {}) {
    this.message =
      opts.field === true
        ? reason
        : `the request message could not be decoded as protobuf: ${reason}`;
  }
}

/**
 * The first string field of a decoded request that was not valid UTF-8 on the wire, as a sentence
 * naming it, or null. The decoder replaces each invalid sequence with U+FFFD, so only strings
 * holding U+FFFD are looked at (rarely any): one whose UTF-8 is not in `raw` as it is was repaired.
 */
export function invalidUtf8Field(message: unknown, raw: Buffer): string | null {
  const stack: Array<{ v: unknown; path: string }> = [{ v: message, path: '' }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { v, path } = top;
    if (typeof v === 'string') {
      if (v.includes('\ufffd') && !raw.includes(Buffer.from(v)))
        return `${path} is not valid UTF-8 (proto3 strings must be)`;
      continue;
    }
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) continue;
    for (const [k, child] of Object.entries(v)) {
      if (typeof child === 'string' || (typeof child === 'object' && child !== null))
        stack.push({
          v: child,
          path: path === '' ? k : Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`,
        });
    }
  }
  return null;
}

/** Throws INVALID_ARGUMENT for a request that could not be decoded; otherwise returns it. */
export function decoded<Req>(req: Req | Undecodable): Req {
  if (req instanceof Undecodable) throw invalid(req.message);
  // protobufjs decodes invalid UTF-8 (ED A0 80) into lone surrogates; proto3 strings must be UTF-8.
  const text = unicodeProblem('request', req);
  if (text !== null) throw invalid(text.replace(/^request\./, ''));
  return req;
}

/** The peer (`address:port`) of each call, and what to tell when a call on a connection authenticates (grpc/server). */
const peers = new WeakMap<grpc.Metadata, string>();
const authenticatedHooks = new WeakMap<Services, (peer: string) => void>();

/** Remembers `call`'s peer, so a valid key on it marks its connection authenticated (http/connection-gate). */
export function trackPeer(call: { metadata: grpc.Metadata; getPeer(): string }): void {
  peers.set(call.metadata, call.getPeer());
}

/** Calls `hook` with the peer of every call that presents a valid key. */
export function onAuthenticated(svc: Services, hook: (peer: string) => void): void {
  authenticatedHooks.set(svc, hook);
}

/** Principal from `authorization` metadata (`Bearer <key>` or a bare key). */
export function principalOf(svc: Services, metadata: grpc.Metadata): Principal {
  if (!svc.config.authEnabled) return ANONYMOUS_ADMIN;
  const value = metadata.get('authorization')[0];
  if (value === undefined)
    throw new FlashbulbError(
      'unauthenticated',
      'missing authorization metadata; send "authorization: Bearer <API key>"',
    );
  svc.auth.reload();
  const principal = svc.auth.authenticate(
    String(value)
      .replace(/^Bearer\s+/i, '')
      .trim(),
  );
  if (!principal) throw new FlashbulbError('unauthenticated', 'API key is not valid');
  const peer = peers.get(metadata);
  if (peer !== undefined) authenticatedHooks.get(svc)?.(peer);
  return principal;
}

/** Each unary call's view of the services: its reads count against the reply budgets until it is answered. */
const scopes = new WeakMap<grpc.Metadata, ReturnType<typeof budgeted>>();

/** The verb context for a call: the key's workspace, or `tenant_id` where the rules allow it. */
export function ctxOf(svc: Services, metadata: grpc.Metadata, tenantId: string | undefined): Ctx {
  let scope = scopes.get(metadata);
  if (scope === undefined) {
    scope = budgeted(svc);
    scopes.set(metadata, scope);
  }
  return resolveCtx(scope.svc, principalOf(svc, metadata), tenantId === '' ? undefined : tenantId, {
    strict: false,
  });
}

export function toServiceError(err: unknown): grpc.ServiceError {
  const e =
    err instanceof FlashbulbError ? err : new FlashbulbError('internal_error', 'internal error');
  if (!(err instanceof FlashbulbError)) console.error('gRPC handler failed:', err);
  const out = Object.assign(new Error(e.message), {
    code: ERRORS[e.code].grpc,
    details: e.message,
    metadata: new grpc.Metadata(),
  });
  return out as grpc.ServiceError;
}

/** Wraps a unary handler: metrics, error mapping, and (tracing on) a span per call and verb. */
export function unary<Req, Res>(
  op: string,
  fn: (req: Req, metadata: grpc.Metadata) => Promise<Res> | Res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    trackPeer(call);
    const start = performance.now();
    const parent = call.metadata.get('traceparent')[0];
    const { service, method } = rpcNames(call.getPath());
    tracer()
      .span(
        `${service}/${method}`,
        async (span): Promise<{ ok: true; res: Res } | { ok: false; err: unknown }> => {
          try {
            const res = await tracer().span(`verb ${op}`, async () =>
              fn(decoded(call.request as Req | Undecodable), call.metadata),
            );
            rpcStatus(span, grpc.status.OK);
            return { ok: true, res };
          } catch (err) {
            rpcStatus(
              span,
              err instanceof FlashbulbError ? ERRORS[err.code].grpc : grpc.status.INTERNAL,
            );
            return { ok: false, err };
          }
        },
        {
          kind: 'server',
          parent: typeof parent === 'string' ? parent : undefined,
          attributes: {
            'rpc.system': 'grpc',
            'rpc.service': service,
            'rpc.method': method,
            'flashbulb.operation': op,
          },
        },
      )
      .then((out) => {
        const outcome = out.ok
          ? 'ok'
          : out.err instanceof FlashbulbError
            ? out.err.code
            : 'internal_error';
        observeRequest(op, 'grpc', outcome, (performance.now() - start) / 1000);
        if (out.ok) {
          // grpc-js serialises the reply here; what it held is given back once it is written.
          callback(null, out.res);
          scopes.get(call.metadata)?.release();
        } else {
          scopes.get(call.metadata)?.release();
          callback(toServiceError(out.err));
        }
      });
  };
}

/** `/hebbs.v1.MemoryService/Recall` → the full service name and the method. */
function rpcNames(path: string): { service: string; method: string } {
  const at = path.lastIndexOf('/');
  return { service: path.slice(1, at), method: path.slice(at + 1) };
}

/** gRPC statuses the RPC conventions count as the server's errors. */
const SERVER_ERRORS: ReadonlySet<number> = new Set([
  grpc.status.UNKNOWN,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.INTERNAL,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
]);

/**
 * The call's status on its span, as the RPC conventions have it: `rpc.grpc.status_code` (the
 * number) and `rpc.response.status_code` (the name, newer conventions); status Error and
 * `error.type` = the name only for the statuses that are the server's errors.
 */
function rpcStatus(span: SpanHandle, code: number): void {
  const name = grpc.status[code] ?? String(code);
  span.setAttribute('rpc.grpc.status_code', code);
  span.setAttribute('rpc.response.status_code', name);
  if (SERVER_ERRORS.has(code)) span.fail(name);
}
