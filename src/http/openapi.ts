/**
 * @module http/openapi — the OpenAPI 3.1 document, generated from the route table: every route,
 * its path parameters, query, body, reply, error statuses, the SSE events of a subscription, the
 * bearer scheme and the /v1/workspaces/<slug>/ prefix of data-plane routes. Nothing here is kept
 * by hand; a route added to the table is documented by adding it.
 */
import type { TSchema } from '@sinclair/typebox';
import { SLUG_RE } from '../auth/principal.ts';
import { ERRORS, type ErrorCode } from '../errors/codes.ts';
import { ErrorBody, NAMED_SCHEMAS } from '../api/replies.ts';
import type { PathParam, Reply, Route } from './route.ts';

type Json = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

const CACHE = new WeakMap<readonly Route[], { version: string; doc: Json }>();

/** The document for a route table; `version` is the server's. Built once per table and version. */
export function openApiDocument(routes: readonly Route[], version: string): Json {
  const cached = CACHE.get(routes);
  if (cached?.version === version) return cached.doc;
  const doc = buildDocument(routes, version);
  CACHE.set(routes, { version, doc });
  return doc;
}

function buildDocument(routes: readonly Route[], version: string): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    for (const { path, scopedCopy } of documentedPaths(route)) {
      const item = (paths[path] ??= {});
      item[route.method.toLowerCase()] = operation(route, scopedCopy);
    }
  }
  const schemas: Record<string, unknown> = {};
  for (const s of NAMED_SCHEMAS) schemas[String(s.$id)] = plain(s);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Flashbulb',
      version,
      description:
        'Low-latency memory for AI agents. Data-plane routes act on the workspace of the calling key; admin keys ' +
        'may name another workspace with the /v1/workspaces/{workspace}/ prefix. Errors always answer ' +
        '{error_code, message}; 429 and 503 carry Retry-After. The server renders this document at /docs (no key needed).',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'memories' },
      {
        name: 'workspace-scoped',
        description: 'The same operation under /v1/workspaces/{workspace}/',
      },
      { name: 'admin' },
      { name: 'operations' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key: fb_admin_… or fb_live_…',
        },
      },
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before retrying',
          schema: { type: 'integer' },
        },
      },
    },
  };
}

function documentedPaths(route: Route): Array<{ path: string; scopedCopy: boolean }> {
  const path = route.path.replace(/:(\w+)/g, '{$1}');
  const out = [{ path, scopedCopy: false }];
  if (route.scoped)
    out.push({ path: path.replace(/^\/v1\//, '/v1/workspaces/{workspace}/'), scopedCopy: true });
  return out;
}

function operation(route: Route, scopedCopy: boolean): Json {
  const op: Json = {
    operationId: scopedCopy ? `${route.op}_in_workspace` : route.op,
    summary: route.summary,
    tags: [scopedCopy ? 'workspace-scoped' : tagOf(route)],
  };
  if (route.deprecated) op['deprecated'] = true;
  if (route.access === 'public') op['security'] = [];
  if (route.access === 'health') op['security'] = [{}, { bearer: [] }];
  const parameters = [...pathParameters(route, scopedCopy), ...queryParameters(route.query)];
  if (parameters.length > 0) op['parameters'] = parameters;
  const body = requestBody(route);
  if (body) op['requestBody'] = body;
  op['responses'] = responses(route, scopedCopy);
  return op;
}

function tagOf(route: Route): string {
  if (
    route.admin ||
    route.path.startsWith('/v1/keys') ||
    route.path.startsWith('/v1/workspaces') ||
    route.path === '/v1/auth/whoami'
  )
    return 'admin';
  return route.scoped ? 'memories' : 'operations';
}

function pathSchema(p: PathParam): Json {
  const form =
    p.pattern === undefined
      ? { minLength: 1, ...(p.maxLength === undefined ? {} : { maxLength: p.maxLength }) }
      : { pattern: p.pattern };
  return {
    type: 'string',
    ...form,
    ...(p.except === undefined ? {} : { not: { enum: [...p.except] } }),
  };
}

function pathParameters(route: Route, scopedCopy: boolean): Json[] {
  const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
  const out: Json[] = names.map((name) => {
    const p = route.params?.[name] ?? name;
    return {
      name,
      in: 'path',
      required: true,
      description: typeof p === 'string' ? p : p.description,
      schema: typeof p === 'string' ? { type: 'string', minLength: 1 } : pathSchema(p),
    };
  });
  if (scopedCopy) {
    const schema = { type: 'string', pattern: SLUG_RE.source };
    out.unshift({
      name: 'workspace',
      in: 'path',
      required: true,
      description: 'Workspace slug (admin keys: any; workspace keys: their own)',
      schema,
    });
  }
  return out;
}

function queryParameters(schema: TSchema | undefined): Json[] {
  if (!schema) return [];
  const s = plain(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, prop]) => ({
    name,
    in: 'query',
    required: s.required?.includes(name) ?? false,
    schema: prop,
  }));
}

function requestBody(route: Route): Json | null {
  if (route.raw === 'multipart') {
    return {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: {
              files: {
                type: 'array',
                items: { type: 'string', contentMediaType: 'application/octet-stream' },
              },
            },
            required: ['files'],
          },
        },
      },
    };
  }
  if (route.raw === 'ndjson') {
    const ndjson = {
      schema: { type: 'string', description: 'One JSON object a line, in the export format' },
    };
    return { required: true, content: { 'application/x-ndjson': ndjson, 'text/plain': ndjson } };
  }
  if (route.raw === 'json-rpc') {
    return {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' } },
            required: ['jsonrpc'],
          },
        },
      },
    };
  }
  if (!route.body) return null;
  return {
    required: route.bodyOptional !== true,
    content: { 'application/json': { schema: plain(route.body) } },
  };
}

function responses(route: Route, scopedCopy: boolean): Json {
  const out: Json = {
    [String(route.reply.status)]: success(route.reply, route.deprecated === true),
  };
  for (const status of 'also' in route.reply ? (route.reply.also ?? []) : []) {
    out[String(status)] = {
      description: status === 202 ? 'Accepted (a notification; no body)' : 'See the body',
      ...(status === 202 ? {} : { content: successContent(route.reply) }),
    };
  }
  for (const [status, codes] of errorStatuses(route, scopedCopy)) {
    const headers =
      status === 429 || status === 503
        ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
        : undefined;
    out[String(status)] = {
      description: codes.join(', '),
      ...(headers ? { headers } : {}),
      content: {
        'application/json': { schema: { $ref: `${REF_PREFIX}${String(ErrorBody.$id)}` } },
      },
    };
  }
  return out;
}

function success(reply: Reply, deprecated: boolean): Json {
  const headers = deprecated
    ? { headers: { Deprecation: { schema: { type: 'string', const: 'true' } } } }
    : {};
  if ('events' in reply) {
    const events = Object.fromEntries(
      Object.entries(reply.events).map(([name, s]) => [name, plain(s)]),
    );
    return {
      description:
        "A Server-Sent Events stream: `event: subscribed`, then one unnamed event (`message`) per push with `id:` = its sequence number, `: keep-alive` comments every 15 s, and `event: closed` at the end. `x-sse-events` gives the JSON schema of each event's data.",
      ...headers,
      content: { 'text/event-stream': { schema: { type: 'string' }, 'x-sse-events': events } },
    };
  }
  return { description: 'Success', ...headers, content: successContent(reply) };
}

function successContent(reply: Reply): Json {
  if ('text' in reply) return { [reply.text]: { schema: { type: 'string' } } };
  if ('schema' in reply) return { 'application/json': { schema: plain(reply.schema) } };
  return {};
}

/** The error statuses a route can answer, with the codes behind each. */
function errorStatuses(route: Route, scopedCopy: boolean): Map<number, ErrorCode[]> {
  const codes: ErrorCode[] = ['internal_error', 'method_not_allowed'];
  if (route.access !== 'public') codes.push('unauthenticated');
  if (route.access === undefined || route.access === 'key')
    codes.push('forbidden', 'not_found', 'rate_limited', 'unavailable');
  if (route.access === 'health') codes.push('unavailable');
  if (scopedCopy || route.body || route.query || route.raw || route.path.includes(':'))
    codes.push('invalid_input');
  if (route.body || route.raw) codes.push('payload_too_large', 'unsupported_media_type');
  if (route.op === 'workspaces_create' || route.op === 'keys_create' || route.op === 'backup')
    codes.push('conflict');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].http;
    if (
      status === route.reply.status ||
      ('also' in route.reply && route.reply.also?.includes(status))
    )
      continue;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** A TypeBox schema as plain JSON Schema: `$id`s dropped, `$ref`s pointed at components/schemas. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (key === '$id') return undefined;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#'))
      return `${REF_PREFIX}${value}`;
    return value;
  });
}
