/**
 * @module mcp/guard — what every MCP transport (Streamable HTTP, stdio) goes through on both
 * sides of the SDK's server. In: requests whose params are malformed (`tools/call` without
 * `params`, `arguments` not an object, `name` not a string, `resources/read` without `uri`, a
 * cursor not a string) are answered with JSON-RPC -32602 "Invalid params" naming the parameter;
 * the SDK would parse them inside the handler and answer -32603 "Internal error" with a raw
 * validation dump, which clients read as a server fault. Out: every message is repaired to valid
 * Unicode (model/unicode.ts), so nothing stored before the check can break a client's parser.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { unicodeProblem, wellFormedDeep } from '../model/unicode.ts';

type Params = Record<string, unknown> | undefined;

/** The SDK's own schema for each method we serve, checked last (for anything the rules below miss). */
const SCHEMAS: Record<
  string,
  {
    safeParse(value: unknown): {
      success: boolean;
      error?: { issues?: Array<{ path: PropertyKey[]; message: string }> };
    };
  }
> = {
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why the params of a `method` request are not acceptable, naming the parameter, or null. */
export function paramsProblem(method: string, params: unknown): string | null {
  if (params !== undefined && !isObject(params))
    return `params must be an object, got ${describe(params)}`;
  const p = params as Params;
  const text = unicodeProblem('params', p);
  if (text !== null) return text;
  if (method === 'tools/call') {
    if (p === undefined)
      return 'params is required for tools/call: {"name": <tool>, "arguments": {...}}';
    if (typeof p['name'] !== 'string')
      return `params.name must be a string (the tool), got ${describe(p['name'])}`;
    if (p['arguments'] !== undefined && !isObject(p['arguments']))
      return `params.arguments must be an object, got ${describe(p['arguments'])}`;
  }
  if (method === 'resources/read') {
    if (p === undefined)
      return 'params is required for resources/read: {"uri": "flashbulb://memories/<memory_id>"}';
    if (typeof p['uri'] !== 'string')
      return `params.uri must be a string, got ${describe(p['uri'])}`;
  }
  if (method.endsWith('/list') && p?.['cursor'] !== undefined && typeof p['cursor'] !== 'string') {
    return `params.cursor must be a string (the nextCursor of a previous page), got ${describe(p['cursor'])}`;
  }
  const schema = SCHEMAS[method];
  const parsed = schema?.safeParse({ method, ...(p === undefined ? {} : { params: p }) });
  if (parsed && !parsed.success) {
    const issue = parsed.error?.issues?.[0];
    return issue
      ? `${issue.path.map(String).join('.') || 'params'}: ${issue.message}`
      : 'params do not match the method';
  }
  return null;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

/**
 * Connects `server` to `transport` with the checks above on every message in and out.
 * `oneAtATime`: requests are handed to the server one by one, each once the one before has been
 * answered (a JSON-RPC batch over HTTP), so the calls of a batch meet the request's reply budget
 * in order (router/reply-budget) rather than racing for it.
 */
export async function connectGuarded(
  server: Server,
  transport: Transport,
  opts: { oneAtATime?: boolean } = {},
): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  const send = transport.send.bind(transport);
  const waiting: Array<() => void> = [];
  let busy: { id: unknown } | null = null;
  transport.send = (message, options) => {
    const sent = send(wellFormedDeep(message), options);
    if (busy !== null && !('method' in message) && 'id' in message && message.id === busy.id) {
      busy = null;
      waiting.shift()?.();
    }
    return sent;
  };
  transport.onmessage = (message, extra) => {
    const refusal = refuse(message);
    if (refusal !== null) return void send(refusal).catch(() => undefined);
    if (opts.oneAtATime !== true || !('method' in message) || !('id' in message))
      return deliver?.(message, extra);
    waiting.push(() => {
      busy = { id: message.id };
      deliver?.(message, extra);
    });
    if (busy === null) waiting.shift()?.();
  };
}

/** The -32602 answer to a request whose params are malformed, or null to let it through. */
function refuse(message: JSONRPCMessage): JSONRPCMessage | null {
  if (!('method' in message) || !('id' in message)) return null;
  const problem = paramsProblem(message.method, (message as { params?: unknown }).params);
  if (problem === null) return null;
  return wellFormedDeep({
    jsonrpc: '2.0',
    id: message.id,
    error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${problem}` },
  });
}
