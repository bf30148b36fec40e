/**
 * @module http/request-span — what a REST request's span says, after the OpenTelemetry HTTP
 * server conventions: kind SERVER; named `{method} {http.route}` once a route matched (`{method}`
 * alone before, for a path no route knows, and `HTTP` for a method outside RFC 9110's list);
 * `http.request.method` (`_OTHER` plus `http.request.method_original` for an unknown one),
 * `url.path`, `url.scheme`, `url.query` (keys kept, every value `REDACTED`: values can hold a
 * memory's words), `server.address` / `server.port` from Host, `user_agent.original`;
 * `http.route` in the OpenAPI document's spelling (`/v1/memories/{id}`,
 * `/v1/workspaces/{workspace}/recall`); `http.response.status_code`; and for a 5xx, status Error
 * and `error.type` = the status code (a 4xx leaves the status unset: for a server it is the
 * caller's error).
 */
import type { Attributes, SpanHandle } from '../tracing/index.ts';
import type { RequestHead } from './exchange.ts';
import type { Route } from './route.ts';

const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/** `{method}` of the span name: the method, or `HTTP` for one the conventions do not know. */
export function spanMethod(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'HTTP';
}

/** The attributes a request's span starts with (what sampling may look at). */
export function requestAttributes(req: RequestHead): Attributes {
  const known = KNOWN_METHODS.has(req.method);
  const out: Attributes = {
    'http.request.method': known ? req.method : '_OTHER',
    'url.path': req.path,
    'url.scheme': req.headers.get('x-forwarded-proto') === 'https' ? 'https' : 'http',
  };
  if (!known) out['http.request.method_original'] = req.method;
  const query = [...req.query.keys()].map((k) => `${encodeURIComponent(k)}=REDACTED`).join('&');
  if (query !== '') out['url.query'] = query;
  const host = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(req.headers.get('host') ?? '');
  if (host?.[1] !== undefined) {
    out['server.address'] = host[1];
    if (host[2] !== undefined) out['server.port'] = Number(host[2]);
  }
  const agent = req.headers.get('user-agent');
  if (agent !== undefined) out['user_agent.original'] = agent;
  return out;
}

/** The matched route in the OpenAPI document's spelling, with the workspace prefix when it was used. */
export function httpRoute(route: Route, scoped: boolean): string {
  const path = route.path.replace(/:(\w+)/g, '{$1}');
  return scoped ? path.replace(/^\/v1\//, '/v1/workspaces/{workspace}/') : path;
}

/** Names the span by its route and records it. */
export function routeMatched(span: SpanHandle, method: string, route: string): void {
  span.setAttribute('http.route', route);
  span.updateName(`${spanMethod(method)} ${route}`);
}

/** Records the status sent; a 5xx marks the span failed (no description: the status code says it). */
export function responded(span: SpanHandle, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.fail(String(status));
}
