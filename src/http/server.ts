/**
 * @module http/server — REST front: matches a route, authenticates, parses JSON, calls the route,
 * and maps every failure to the JSON error body with the status of errors/codes.
 */
import { ANONYMOUS_ADMIN, type Principal } from '../auth/principal.ts';
import { ERRORS, FlashbulbError } from '../errors/codes.ts';
import { observeRequest } from '../metrics/history.ts';
import { JSON_LIMITS, jsonTextDepth } from '../model/json-shape.ts';
import { wellFormedJson } from '../model/unicode.ts';
import { budgeted, type Services } from '../verbs/context.ts';
import { jsonParts } from '../api/json-slices.ts';
import { checkJsonShape } from '../verbs/validate.ts';
import { tracer, type SpanHandle } from '../tracing/index.ts';
import {
  httpRoute,
  requestAttributes,
  responded,
  routeMatched,
  spanMethod,
} from './request-span.ts';
import { apiDocs } from './api-docs.ts';
import { openStaticSite } from './static.ts';
import type { Access, Route, RouteOutput } from './route.ts';
import { ROUTES } from './routes.ts';
import type { ConnectionGate } from './connection-gate.ts';
import { listenHttp } from './listener.ts';
import type {
  HttpRequest,
  HttpResponse,
  HttpServer,
  RequestHead,
  StreamResponse,
} from './exchange.ts';

const MAX_BODY = 1024 * 1024;
const MAX_UPLOAD = 16 * 1024 * 1024;
/** A conversation ingest: up to 10,000 messages a call. */
const MAX_MESSAGES = 16 * 1024 * 1024;
/** An import body; `flashbulb import` sends larger files in parts well below this. */
const MAX_IMPORT = 64 * 1024 * 1024;
const JSON_HEADERS = { 'content-type': 'application/json' };

interface Match {
  route: Route;
  params: Record<string, string>;
  workspace: string | undefined;
}

/** What a request's head decided: its route and caller (null: leave it to the static site or a 404). */
type Admitted = { match: Match; principal: Principal } | null;

export function startHttp(svc: Services, gate: ConnectionGate): Promise<HttpServer> {
  const site = openStaticSite(svc.config.webDir);
  const docs = apiDocs();
  const { config } = svc;
  return listenHttp<Admitted>({
    host: config.bind,
    port: config.httpPort,
    limits: {
      gate,
      headersTimeoutMs: config.headersTimeoutMs,
      bodyTimeoutMs: config.bodyTimeoutMs,
      requestTimeoutMs: config.requestTimeoutS * 1000,
    },
    isHealth: (path) => HEALTH_PATHS.has(path),
    admit: (head) => admitHead(svc, head),
    maxBodyBytes: (path) =>
      path.endsWith('/upload')
        ? MAX_UPLOAD
        : path.endsWith('/import')
          ? MAX_IMPORT
          : path.endsWith('/messages')
            ? MAX_MESSAGES
            : MAX_BODY,
    tooLarge: (limit) =>
      errorResponse(
        new FlashbulbError('payload_too_large', `request body exceeds the limit of ${limit} bytes`),
      ),
    unavailable: (reason) => errorResponse(new FlashbulbError('unavailable', reason)),
    malformed: (reason) => errorResponse(new FlashbulbError('invalid_input', reason)),
    handler: async (req, admitted) =>
      site.serve(req) ?? docs.serve(req) ?? handle(svc, req, admitted ?? undefined),
  });
}

const HEALTH_PATHS = new Set(ROUTES.filter((r) => r.access === 'health').map((r) => r.path));

/**
 * Routes and authenticates from the headers alone, so a caller without a valid key gets its 401
 * before any body is read. Paths that match no route are left to the handler (static files, 404).
 */
function admitHead(
  svc: Services,
  head: RequestHead,
): { admitted: Admitted; authenticated: boolean } | { reply: HttpResponse } {
  let match: Match;
  try {
    match = matchRoute(head.method, head.path);
  } catch {
    return { admitted: null, authenticated: false };
  }
  try {
    const principal = authorize(svc, head, match.route.access ?? 'key');
    checkContentEncoding(head.headers.get('content-encoding'));
    // A key was presented and is valid (public routes and open health checks present none).
    return { admitted: { match, principal }, authenticated: principal.keyId !== null };
  } catch (err) {
    observeRequest(
      match.route.op,
      'rest',
      err instanceof FlashbulbError ? err.code : 'internal_error',
      0,
    );
    const res = errorResponse(err);
    if (tracer().enabled) {
      void traced(head, (span) => {
        routeMatched(span, head.method, httpRoute(match.route, match.workspace !== undefined));
        return Promise.resolve(res);
      });
    }
    return {
      reply:
        match.route.deprecated === true
          ? { ...res, headers: { ...res.headers, deprecation: 'true' } }
          : res,
    };
  }
}

/** Runs `fn` in the request's span (http/request-span), recording the status it answers with. */
function traced<R extends { status: number }>(
  head: RequestHead,
  fn: (span: SpanHandle) => Promise<R>,
): Promise<R> {
  return tracer().span(
    spanMethod(head.method),
    async (span) => {
      const res = await fn(span);
      responded(span, res.status);
      return res;
    },
    {
      kind: 'server',
      parent: head.headers.get('traceparent'),
      attributes: requestAttributes(head),
    },
  );
}

/**
 * Handles one request; exported so tests can drive the router without sockets. `admitted`: what
 * the listener already decided from the head (otherwise it is decided here). With tracing on, in a
 * span for the request (http/request-span; the child of an incoming W3C `traceparent`) holding one
 * for the verb. A request refused from its head (401, 415) gets a span of its own there.
 */
export function handle(
  svc: Services,
  req: HttpRequest,
  admitted?: Admitted & object,
): Promise<HttpResponse | StreamResponse> {
  return traced(req, (span) => handleRequest(svc, req, span, admitted));
}

async function handleRequest(
  svc: Services,
  req: HttpRequest,
  span: SpanHandle,
  admitted?: Admitted & object,
): Promise<HttpResponse | StreamResponse> {
  const start = performance.now();
  let op = 'unknown';
  let outcome = 'ok';
  let deprecated = false;
  // The reply's bytes count against the budgets until it is sent (router/reply-budget).
  const scope = budgeted(svc);
  let held = false;
  try {
    const match = admitted?.match ?? matchRoute(req.method, req.path);
    op = match.route.op;
    deprecated = match.route.deprecated === true;
    const principal = admitted?.principal ?? authorize(svc, req, match.route.access ?? 'key');
    routeMatched(span, req.method, httpRoute(match.route, match.workspace !== undefined));
    span.setAttribute('flashbulb.operation', op);
    span.setAttribute('flashbulb.workspace', match.workspace ?? principal.workspace);
    const out = await tracer().span(`verb ${op}`, async () =>
      match.route.handle({
        svc: scope.svc,
        principal,
        params: match.params,
        query: req.query,
        body: match.route.body ? parseJson(req, match.route.bodyOptional === true) : undefined,
        rawBody: req.body,
        contentType: req.headers.get('content-type') ?? '',
        headers: req.headers,
        workspace: match.workspace,
      }),
    );
    if ('kind' in out) return out;
    const res = await jsonResponse(out, scope.lease?.used ?? 0);
    held = true;
    return { ...res, done: scope.release };
  } catch (err) {
    outcome = err instanceof FlashbulbError ? err.code : 'internal_error';
    if (!(err instanceof FlashbulbError)) console.error(`${req.method} ${req.path} failed:`, err);
    const res = errorResponse(err);
    return deprecated ? { ...res, headers: { ...res.headers, deprecation: 'true' } } : res;
  } finally {
    if (!held) scope.release();
    observeRequest(op, 'rest', outcome, (performance.now() - start) / 1000);
  }
}

/** The reply to a route's output; a large JSON body (by `sizeHint`, its shard replies' bytes) is built in slices. */
async function jsonResponse(out: RouteOutput, sizeHint: number): Promise<HttpResponse> {
  const status = out.status ?? 200;
  if (out.text !== undefined) return { status, headers: { ...out.headers }, body: out.text };
  return {
    status,
    headers: { ...JSON_HEADERS, ...out.headers },
    body: await jsonParts(out.body, sizeHint),
  };
}

export function errorResponse(err: unknown): HttpResponse {
  const e =
    err instanceof FlashbulbError ? err : new FlashbulbError('internal_error', 'internal error');
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (e.retryAfterS !== undefined) headers['retry-after'] = String(e.retryAfterS);
  if (e.allow !== undefined) headers['allow'] = e.allow.join(', ');
  return {
    status: ERRORS[e.code].http,
    headers,
    body: wellFormedJson({ error_code: e.code, message: e.message }),
  };
}

/** The caller of a route: health routes are open when FLASHBULB_PUBLIC_HEALTH is on, public ones always. */
function authorize(svc: Services, req: Pick<HttpRequest, 'headers'>, access: Access): Principal {
  if (access === 'public' || (access === 'health' && svc.config.publicHealth))
    return ANONYMOUS_ADMIN;
  return authenticate(svc, req);
}

export function authenticate(svc: Services, req: Pick<HttpRequest, 'headers'>): Principal {
  if (!svc.config.authEnabled) return ANONYMOUS_ADMIN;
  const header = req.headers.get('authorization');
  if (!header)
    throw new FlashbulbError(
      'unauthenticated',
      'missing Authorization header; send "Authorization: Bearer <API key>"',
    );
  const key = header.replace(/^Bearer\s+/i, '').trim();
  svc.auth.reload();
  const principal = svc.auth.authenticate(key);
  if (!principal) throw new FlashbulbError('unauthenticated', 'API key is not valid');
  return principal;
}

/** Bodies are read as sent: a compressed one is refused from the head, not misread as bad JSON. */
function checkContentEncoding(encoding: string | undefined): void {
  if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return;
  throw new FlashbulbError(
    'unsupported_media_type',
    `Content-Encoding '${encoding}' is not supported: send the request body uncompressed`,
  );
}

function parseJson(req: HttpRequest, optional: boolean): unknown {
  if (optional && req.body.length === 0) return {};
  const type = req.headers.get('content-type');
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new FlashbulbError(
      'unsupported_media_type',
      `Content-Type must be application/json, got '${type}'`,
    );
  }
  if (req.body.length === 0)
    throw new FlashbulbError('invalid_input', 'request body is required (a JSON object)');
  const text = req.body.toString('utf8');
  // Checked on the text first: JSON.parse itself recurses, and so does everything after it.
  if (jsonTextDepth(text) > JSON_LIMITS.depth) {
    throw new FlashbulbError(
      'invalid_input',
      `request body nests objects and arrays deeper than the limit of ${JSON_LIMITS.depth} levels`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FlashbulbError(
      'invalid_input',
      `request body is not valid JSON: ${(err as Error).message}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FlashbulbError('invalid_input', 'request body must be a JSON object');
  }
  return checkJsonShape('request body', value);
}

const COMPILED = ROUTES.map((route) => ({
  route,
  segments: route.path.split('/').filter(Boolean),
}));

/**
 * Finds the route; a known path with another method is a 405, anything else a 404. HEAD is
 * answered by the GET route (the listener leaves the body out).
 */
export function matchRoute(requested: string, path: string): Match {
  const method = requested === 'HEAD' ? 'GET' : requested;
  let segments = path.split('/').filter(Boolean).map(decodeSegment);
  let workspace: string | undefined;
  if (segments[0] === 'v1' && segments[1] === 'workspaces' && segments.length >= 4) {
    workspace = segments[2];
    segments = ['v1', ...segments.slice(3)];
  }
  let allowed: string[] = [];
  for (const { route, segments: pattern } of COMPILED) {
    if (workspace !== undefined && !route.scoped) continue;
    const params = matchSegments(pattern, segments);
    if (!params) continue;
    if (route.method === method) return { route, params, workspace };
    allowed = [...allowed, route.method, ...(route.method === 'GET' ? ['HEAD'] : [])];
  }
  if (allowed.length > 0) {
    throw new FlashbulbError(
      'method_not_allowed',
      `${requested} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
      { allow: allowed },
    );
  }
  throw new FlashbulbError('not_found', `no route for ${method} ${path}`);
}

function matchSegments(
  pattern: readonly string[],
  actual: readonly string[],
): Record<string, string> | null {
  if (pattern.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const a = actual[i] as string;
    if (p.startsWith(':')) params[p.slice(1)] = a;
    else if (p !== a) return null;
  }
  return params;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
