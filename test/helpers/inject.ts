/**
 * REST requests in-process, without a socket (after hono's `app.request()` and fastify's
 * `inject`): a request goes straight to http/server.ts `handle(svc, req)`, the seam the listener
 * calls, and its reply comes back as `fetch` would give it (status, headers, text, parsed JSON).
 * For tests of a route's or a verb's contract. What the listener does before the handler needs a
 * real socket: the connection gate, body size limits (413), the head's checks (401 before the
 * body, 415 for a content encoding), the static site and API docs, streams (SSE), Connection
 * headers. Those tests keep `TestApp.req`.
 */
import { handle } from '../../src/http/server.ts';
import type { Services } from '../../src/verbs/context.ts';

export interface RequestOptions {
  body?: unknown;
  /** The bearer token; null sends none. */
  key?: string | null;
  headers?: Record<string, string>;
  /** A body sent as is (instead of `body` as JSON). */
  raw?: string;
}

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

/** One request to `svc`'s routes, answered in this thread; `key` is the bearer token sent. */
export async function inject(
  svc: Services,
  method: string,
  target: string,
  opts: RequestOptions & { key: string | null },
): Promise<Reply> {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(opts.headers ?? {}))
    headers.set(name.toLowerCase(), value);
  if (opts.key) headers.set('authorization', `Bearer ${opts.key}`);
  let body = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  const bytes = Buffer.from(body ?? '', 'utf8');
  if (bytes.length > 0) headers.set('content-length', String(bytes.length));
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
  const res = await handle(svc, {
    method: method.toUpperCase(),
    path,
    query,
    headers,
    body: bytes,
  });
  if ('kind' in res)
    throw new Error(`${method} ${target} answered a stream: test it over a socket (TestApp.req)`);
  try {
    const parts = typeof res.body === 'string' || Buffer.isBuffer(res.body) ? [res.body] : res.body;
    const text = parts.map((p) => (typeof p === 'string' ? p : p.toString('utf8'))).join('');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: new Headers(res.headers ?? {}), text };
  } finally {
    res.done?.(); // what the reply held of the reply budgets is given back, as once sent
  }
}
