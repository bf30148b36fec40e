/**
 * @module api-call — the REST call behind what a page shows, written out three ways: curl, the
 * Python client and the TypeScript client, from the client's own operation table (method, path,
 * whether the workspace prefix applies). The key is never written: snippets read it from
 * $FLASHBULB_API_KEY.
 */
import { OPERATIONS, type OperationId } from '../../clients/typescript/src/index.ts';

export interface ApiCall {
  op: OperationId;
  /** Path parameters in the order the path names them. */
  params?: readonly string[];
  query?: Readonly<Record<string, string | number | boolean | undefined>>;
  body?: unknown;
}

export interface CallContext {
  baseUrl: string;
  /** The workspace acted in, when it is not the key's own (admin keys): the path prefix. */
  workspace: string | null;
}

/** Python method names that differ from the operation's (a keyword). */
const PYTHON_NAMES: Readonly<Record<string, string>> = { import: 'import_' };

function cleanQuery(q: ApiCall['query']): Array<[string, string | number | boolean]> {
  return Object.entries(q ?? {}).filter(
    (e): e is [string, string | number | boolean] => e[1] !== undefined && e[1] !== '',
  );
}

/** The request's method and URL path with its query string. */
export function requestLine(call: ApiCall, ctx: CallContext): { method: string; url: string } {
  const op = OPERATIONS[call.op];
  let i = 0;
  let path = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(call.params?.[i++] ?? ''));
  if (ctx.workspace !== null && op.scoped)
    path = path.replace('/v1/', `/v1/workspaces/${encodeURIComponent(ctx.workspace)}/`);
  const qs = new URLSearchParams(cleanQuery(call.query).map(([k, v]) => [k, String(v)])).toString();
  return { method: op.method, url: `${path}${qs === '' ? '' : `?${qs}`}` };
}

export function curl(call: ApiCall, ctx: CallContext): string {
  const { method, url } = requestLine(call, ctx);
  const lines = [
    `curl${method === 'GET' ? '' : ` -X ${method}`} '${ctx.baseUrl}${url}'`,
    `  -H "Authorization: Bearer $FLASHBULB_API_KEY"`,
  ];
  if (call.body !== undefined) {
    lines.push(`  -H 'Content-Type: application/json'`);
    lines.push(`  -d '${JSON.stringify(call.body).replace(/'/g, "'\\''")}'`);
  }
  return lines.join(' \\\n');
}

function pyValue(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pyValue).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${JSON.stringify(k)}: ${pyValue(x)}`)
    .join(', ')}}`;
}

export function python(call: ApiCall, ctx: CallContext): string {
  const name = PYTHON_NAMES[call.op] ?? call.op;
  const args = [...(call.params ?? []).map((p) => JSON.stringify(p))];
  const fields =
    call.body !== undefined && typeof call.body === 'object' && call.body !== null
      ? Object.entries(call.body as Record<string, unknown>)
      : cleanQuery(call.query);
  args.push(...fields.map(([k, v]) => `${k}=${pyValue(v)}`));
  const ws = ctx.workspace === null ? '' : `, workspace=${JSON.stringify(ctx.workspace)}`;
  return [
    'import os',
    'from flashbulb import Flashbulb',
    '',
    `fb = Flashbulb(base_url=${JSON.stringify(ctx.baseUrl)}, api_key=os.environ["FLASHBULB_API_KEY"]${ws})`,
    `result = fb.${name}(${args.join(', ')})`,
  ].join('\n');
}

function camel(op: string): string {
  return op.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

export function typescript(call: ApiCall, ctx: CallContext): string {
  const args = (call.params ?? []).map((p) => JSON.stringify(p));
  const q = cleanQuery(call.query);
  if (call.body !== undefined) args.push(JSON.stringify(call.body, null, 2).replace(/\n/g, '\n'));
  else if (q.length > 0) args.push(JSON.stringify(Object.fromEntries(q), null, 2));
  const ws = ctx.workspace === null ? '' : `, workspace: ${JSON.stringify(ctx.workspace)}`;
  return [
    "import { FlashbulbClient } from '@flashbulb/client';",
    '',
    `const fb = new FlashbulbClient({ baseUrl: ${JSON.stringify(ctx.baseUrl)}, apiKey: process.env.FLASHBULB_API_KEY${ws} });`,
    `const result = await fb.${camel(call.op)}(${args.join(', ')});`,
  ].join('\n');
}
