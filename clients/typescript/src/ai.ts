/**
 * @module @flashbulb/client/ai — Flashbulb's memory operations as Vercel AI SDK tools (`ai` 5/6,
 * an optional peer dependency): `flashbulbTools(client)` returns the MCP server's twelve tools
 * (`remember`, `add_messages`, `recall`, `get_memory`, `list_memories`, `revise_memory`, `forget`, `prime`,
 * `explore_graph`, `list_entities`, `reflect`, `get_insights`) with the same names, descriptions
 * and JSON input schemas (generated from the server's tool list into `mcp-tools.ts`), each
 * executed through the REST client. A failed call rejects with `FlashbulbError`, which the AI SDK
 * reports to the model as a tool error. `minRelevance` sets a floor for `recall` and `prime` that
 * applies when the model gives none (a `min_relevance` it gives wins).
 */
import { jsonSchema, tool, type Tool } from 'ai';
import type { FlashbulbClient } from './index.ts';
import type {
  ForgetBody,
  GraphBody,
  IngestBody,
  InsightsQuery,
  ListQuery,
  PrimeBody,
  RecallBody,
  ReflectBody,
  RememberBody,
  ReviseBody,
} from './generated.ts';
import { MCP_TOOLS, type McpToolName } from './mcp-tools.ts';

type Args = Record<string, unknown>;
type Run = (
  client: FlashbulbClient,
  args: Args,
  options: FlashbulbToolsOptions,
) => Promise<unknown>;

/** How each tool reaches the server: the same operation its MCP twin runs. */
const RUN: Record<McpToolName, Run> = {
  remember: (c, a) => c.remember(a as RememberBody),
  add_messages: (c, { conversation_id, ...rest }) =>
    c.ingest(String(conversation_id), rest as IngestBody),
  recall: (c, a, o) => c.recall(withFloor(a, o) as RecallBody),
  get_memory: (c, a) => c.get(String(a['memory_id'])),
  list_memories: (c, a) => c.list(a as ListQuery),
  revise_memory: (c, { memory_id, ...rest }) => c.revise(String(memory_id), rest as ReviseBody),
  forget: (c, a) => c.forget(a as ForgetBody),
  prime: (c, a, o) => c.prime(withFloor(a, o) as PrimeBody),
  explore_graph: (c, a) => c.graph(a as GraphBody),
  list_entities: async (c) => ({ entities: await c.entities() }),
  reflect: (c, a) => c.reflect(a as ReflectBody),
  get_insights: async (c, a) => ({ insights: await c.insights(a as InsightsQuery) }),
};

/** The options' relevance floor, where the model gave none. */
function withFloor(args: Args, options: FlashbulbToolsOptions): Args {
  return options.minRelevance === undefined || args['min_relevance'] !== undefined
    ? args
    : { ...args, min_relevance: options.minRelevance };
}

export interface FlashbulbToolsOptions {
  /** Only these tools (default: all). */
  include?: readonly McpToolName[];
  /** Leave these out, e.g. `['forget', 'revise_memory']` for an agent that must not erase. */
  exclude?: readonly McpToolName[];
  /** Only tools that change nothing (the MCP `readOnlyHint`). */
  readOnly?: boolean;
  /** recall and prime leave out memories whose relevance is below this (0..1), unless the model asks for another floor. */
  minRelevance?: number;
}

export type FlashbulbTools = Partial<Record<McpToolName, Tool<Args, unknown>>>;

/** Flashbulb's tools for `generateText` / `streamText` / agents: `tools: flashbulbTools(client)`. */
export function flashbulbTools(
  client: FlashbulbClient,
  options: FlashbulbToolsOptions = {},
): FlashbulbTools {
  const out: FlashbulbTools = {};
  for (const t of MCP_TOOLS) {
    if (options.include && !options.include.includes(t.name)) continue;
    if (options.exclude?.includes(t.name)) continue;
    if (options.readOnly && !t.annotations.readOnlyHint) continue;
    const run = RUN[t.name];
    out[t.name] = tool<Args, unknown>({
      description: t.description,
      inputSchema: jsonSchema<Args>(
        structuredClone(t.inputSchema) as Parameters<typeof jsonSchema>[0],
      ),
      execute: (args) => run(client, args, options),
    });
  }
  return out;
}
