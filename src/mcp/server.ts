/**
 * @module mcp/server — an MCP server over one workspace: the tools of mcp/tools and the
 * workspace's memories as `flashbulb://memories/<id>` resources. Built on the SDK's low-level
 * `Server` because our schemas are JSON Schema (TypeBox) already; see docs/architecture-notes.md.
 * The workspace is fixed by whoever builds the server (from the key), never by tool arguments.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ErrorCode,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { TSchema } from '@sinclair/typebox';
import { FlashbulbError } from '../errors/codes.ts';
import { NAMED_SCHEMAS } from '../api/replies.ts';
import { memoryJson } from '../api/views.ts';
import { wellFormedJson } from '../model/unicode.ts';
import type { Ctx } from '../verbs/context.ts';
import { getMemory, listMemories } from '../verbs/read.ts';
import { toolResult, type RawResults } from './results.ts';
import { TOOLS } from './tools.ts';

const MEMORY_URI = 'flashbulb://memories/';
const RESOURCE_PAGE = 100;
/** JSON-RPC code for an unknown resource (MCP specification, resources). */
const RESOURCE_NOT_FOUND = -32002;
/** JSON-RPC code (implementation-defined server error) for a call whose reply would pass a reply budget. */
export const REPLY_OVER_BUDGET = -32010;

const INSTRUCTIONS =
  'Flashbulb is long-term memory. Call `recall` (or `prime` at the start of a conversation) before answering ' +
  'questions that may depend on earlier conversations; call `remember` for facts worth keeping. Everything ' +
  'happens in the workspace of the API key in use.';

/**
 * The SDK validates elicitation replies with it (never used here); one for every server, since a
 * new one (a new Ajv, compiling its meta-schema) took ~10 ms of the router per HTTP request.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

/**
 * Builds a server whose every request acts in `ctx`'s workspace. `raw`: large tool results go as
 * placeholders for the transport's reply text (mcp/results; Streamable HTTP).
 */
export function createMcpServer(ctx: Ctx, opts: { raw?: RawResults } = {}): Server {
  const server = new Server(
    { name: 'flashbulb', version: ctx.svc.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: VALIDATOR,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: LISTED }));
  server.setRequestHandler(CallToolRequestSchema, (req) =>
    callTool(ctx, req.params.name, req.params.arguments, opts.raw ?? null),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async (req) => {
    const cursor = req.params?.cursor;
    const page = await (async () =>
      listMemories(ctx, {
        limit: RESOURCE_PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      }))().catch((err: unknown) => {
      // The only client input here is the cursor: a bad one is the caller's mistake, not a fault.
      if (err instanceof FlashbulbError && err.code === 'invalid_input')
        throw new McpError(
          ErrorCode.InvalidParams,
          `Invalid params: params.cursor: ${err.message}`,
        );
      throw overBudget(err);
    });
    return {
      resources: page.memories.map((m) => ({
        uri: `${MEMORY_URI}${m.id}`,
        name: title(m.content),
        mimeType: 'application/json',
      })),
      ...(page.nextCursor === null ? {} : { nextCursor: page.nextCursor }),
    };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: `${MEMORY_URI}{memory_id}`,
        name: 'memory',
        title: 'A memory by id',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri;
    if (!uri.startsWith(MEMORY_URI))
      throw new McpError(
        RESOURCE_NOT_FOUND,
        `unknown resource '${uri}'; memories are ${MEMORY_URI}<memory_id>`,
      );
    try {
      const memory = await getMemory(ctx, { id: uri.slice(MEMORY_URI.length) });
      return {
        contents: [{ uri, mimeType: 'application/json', text: wellFormedJson(memoryJson(memory)) }],
      };
    } catch (err) {
      if (
        err instanceof FlashbulbError &&
        (err.code === 'not_found' || err.code === 'invalid_input')
      )
        throw new McpError(RESOURCE_NOT_FOUND, `${err.code}: ${err.message}`);
      throw overBudget(err);
    }
  });
  return server;
}

async function callTool(
  ctx: Ctx,
  name: string,
  args: unknown,
  raw: RawResults | null,
): Promise<CallToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool)
    return toolError(
      'invalid_input',
      `unknown tool '${name}'; tools: ${TOOLS.map((t) => t.name).join(', ')}`,
    );
  try {
    return await toolResult(await tool.call(ctx, args), raw);
  } catch (err) {
    // A reply over a budget is the request's failure, not the tool's: a JSON-RPC error for this call.
    if (err instanceof FlashbulbError && err.limit !== undefined) throw overBudget(err);
    if (err instanceof FlashbulbError) return toolError(err.code, err.message);
    console.error(`MCP tool ${name} failed:`, err);
    return toolError('internal_error', 'internal error');
  }
}

/** A reply over a budget (router/reply-budget) as a JSON-RPC error naming the limit; anything else as it is. */
function overBudget(err: unknown): unknown {
  if (!(err instanceof FlashbulbError) || err.limit === undefined) return err;
  return new McpError(REPLY_OVER_BUDGET, err.message, { error_code: err.code, limit: err.limit });
}

/** A tool error the model can read: the Flashbulb error code and message, as JSON text. */
function toolError(code: string, message: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify({ error_code: code, message }) }],
  };
}

function title(content: string): string {
  const line = content.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

const NAMED = new Map(NAMED_SCHEMAS.map((s) => [String(s.$id), s]));

/** Tools as MCP lists them: schemas inlined (MCP clients do not resolve `$ref`s across documents). */
export const LISTED: McpTool[] = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: inline(t.input) as McpTool['inputSchema'],
  outputSchema: inline(t.output) as McpTool['outputSchema'],
  annotations: { title: t.title, ...t.annotations },
}));

/** A schema as plain JSON with every named `$ref` replaced by the schema it names. */
function inline(schema: TSchema): Record<string, unknown> {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const obj = value as Record<string, unknown>;
    const ref = obj['$ref'];
    if (typeof ref === 'string' && NAMED.has(ref)) return walk(NAMED.get(ref));
    return Object.fromEntries(
      Object.entries(obj)
        .filter(([k]) => k !== '$id')
        .map(([k, v]) => [k, walk(v)]),
    );
  };
  return walk(JSON.parse(JSON.stringify(schema))) as Record<string, unknown>;
}
