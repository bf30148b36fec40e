/**
 * @module http/route — what a REST route is (`Route`: method, path, schemas, reply, access, handler)
 * and `route()`, which compiles a route's body and query schemas once and hands its handler values
 * already validated and typed, so a route cannot validate with one schema and document another. The
 * table itself is http/routes; http/openapi and http/server read routes through these types.
 */
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { compile } from '../api/compile.ts';
import type { Principal } from '../auth/principal.ts';
import { invalid } from '../errors/codes.ts';
import { resolveCtx, type Ctx, type Services } from '../verbs/context.ts';
import type { StreamResponse } from './exchange.ts';

export interface RouteInput {
  svc: Services;
  principal: Principal;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** Raw body and content type, for routes marked `raw`. */
  rawBody: Buffer;
  contentType: string;
  /** Request headers the server reads (lower-case names). */
  headers: ReadonlyMap<string, string>;
  /** Workspace named by a /v1/workspaces/<slug>/ prefix. */
  workspace: string | undefined;
}

export interface RouteOutput {
  status?: number;
  /** Sent as JSON, unless `text` is set. */
  body: unknown;
  /** A body sent as it is (with its own content-type header), whole or in parts. */
  text?: string | ReadonlyArray<string | Buffer>;
  headers?: Record<string, string>;
}

/** What a route answers on success: a JSON body, an SSE stream, or text. */
export type Reply =
  | { status: number; schema: TSchema; also?: readonly number[] }
  | { status: number; events: Readonly<Record<string, TSchema>> }
  | { status: number; text: string; also?: readonly number[] };

/**
 * Who may call: `key` (a bearer key, unless auth is off), `public` (anyone) or `health` (anyone
 * when FLASHBULB_PUBLIC_HEALTH is on, else a key).
 */
export type Access = 'key' | 'public' | 'health';

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Operation name: metrics label, OpenAPI operationId, client method. */
  op: string;
  /** One line for the OpenAPI document. */
  summary: string;
  /** Data-plane routes may be prefixed with /v1/workspaces/<slug>/. */
  scoped: boolean;
  access?: Access;
  /** Only admin keys may call it (documented; the verb enforces it). */
  admin?: boolean;
  /** The JSON body's schema; the server parses and validates the body with it. */
  body?: TSchema;
  /** An empty body reads as {}. */
  bodyOptional?: boolean;
  /** The query string's schema; integer, number and boolean fields are converted before validation. */
  query?: TSchema;
  /** Takes the raw body: `multipart` (form-data upload), `json-rpc` (MCP messages) or `ndjson` (import). */
  raw?: 'multipart' | 'json-rpc' | 'ndjson';
  /** The path's `:name` segments: a description, or one with the pattern the server reads them by. */
  params?: Readonly<Record<string, string | PathParam>>;
  reply: Reply;
  /** Deprecated: every answer, errors included, carries `Deprecation: true`. */
  deprecated?: boolean;
  handle: (input: RouteInput) => Promise<RouteOutput | StreamResponse> | RouteOutput;
}

/** A path parameter's description and the pattern (or the longest length) of the values the server takes. */
export interface PathParam {
  description: string;
  pattern?: string;
  maxLength?: number;
  /** Values of the form that the route refuses all the same (the default workspace cannot be deleted). */
  except?: readonly string[];
}

// biome-ignore lint/complexity/noBannedTypes: TypeBox's type of Type.Object({}), an object without properties.
type NoInput = TObject<{}>;

/** A route whose handler gets its body and query already validated against the route's own schemas. */
interface TypedRoute<B extends TSchema, Q extends TSchema>
  extends Omit<Route, 'handle' | 'body' | 'query'> {
  body?: B;
  query?: Q;
  handle: (
    input: RouteInput,
    valid: { body: Static<B>; query: Static<Q> },
  ) => Promise<RouteOutput | StreamResponse> | RouteOutput;
}

/** Declares a route; its handler receives the body and query already validated against its schemas. */
export function route<B extends TSchema = NoInput, Q extends TSchema = NoInput>(
  def: TypedRoute<B, Q>,
): Route {
  const checkBody = def.body === undefined ? null : compile(def.body);
  const checkQuery = def.query === undefined ? null : compile(def.query);
  const types = def.query === undefined ? {} : queryTypes(def.query);
  return {
    ...def,
    handle: (i) => {
      const body = (checkBody === null ? {} : checkBody(i.body)) as Static<B>;
      const query = (
        checkQuery === null ? {} : checkQuery(queryObject(i.query, types))
      ) as Static<Q>;
      return def.handle(i, { body, query });
    },
  };
}

/** The caller's context for a route: workspace from the key or the prefix, strictly resolved. */
export function ctxOf(i: RouteInput): Ctx {
  return resolveCtx(i.svc, i.principal, i.workspace, { strict: true });
}

/** A path parameter ("" when absent; the path pattern guarantees presence). */
export function param(i: RouteInput, name: string): string {
  return i.params[name] ?? '';
}

type QueryType = 'int' | 'bool' | 'num' | 'time';

/** How each query field converts from text, read off the route's query schema. */
function queryTypes(schema: TSchema): Record<string, QueryType> {
  const out: Record<string, QueryType> = {};
  const props =
    (
      schema as {
        properties?: Record<string, { type?: unknown; anyOf?: Array<{ type?: unknown }> }>;
      }
    ).properties ?? {};
  for (const [name, prop] of Object.entries(props)) {
    if (prop.type === 'integer') out[name] = 'int';
    else if (prop.type === 'number') out[name] = 'num';
    else if (prop.type === 'boolean') out[name] = 'bool';
    else if (isTime(prop)) out[name] = 'time';
  }
  return out;
}

/** A time (api/time): integer µs or ISO 8601 text. */
function isTime(prop: { anyOf?: Array<{ type?: unknown }> }): boolean {
  const types = (prop.anyOf ?? []).map((b) => b.type);
  return types.includes('integer') && types.includes('string');
}

/** Turns a query string into an object, converting the named fields; bad values are 400s. */
export function queryObject(
  q: URLSearchParams,
  types: Readonly<Record<string, QueryType>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, raw] of q) {
    const type = types[k];
    if (type === 'int') {
      if (!/^-?\d+$/.test(raw)) throw invalid(`${k} must be an integer, got '${raw}'`);
      out[k] = Number(raw);
    } else if (type === 'num') {
      if (raw.trim() === '' || !Number.isFinite(Number(raw)))
        throw invalid(`${k} must be a number, got '${raw}'`);
      out[k] = Number(raw);
    } else if (type === 'time') {
      // Digits are microseconds; anything else is left to the schema as ISO 8601 text.
      out[k] = /^[0-9]{1,16}$/.test(raw) ? Number(raw) : raw;
    } else if (type === 'bool') {
      if (raw !== 'true' && raw !== 'false')
        throw invalid(`${k} must be true or false, got '${raw}'`);
      out[k] = raw === 'true';
    } else out[k] = raw;
  }
  return out;
}
