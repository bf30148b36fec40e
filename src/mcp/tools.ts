/**
 * @module mcp/tools — the MCP tools: each one names a verb, takes the same TypeBox schema the
 * REST route validates with (so MCP and REST accept the same fields, and fields added to a REST
 * body appear here too), answers with the REST reply's schema as structured content, and says
 * whether it reads, writes or destroys.
 */
import { Type as T, type Static, type TSchema } from '@sinclair/typebox';
import type { JsonObject } from '../model/memory.ts';
import { compile } from '../api/compile.ts';
import * as S from '../api/requests.ts';
import * as SR from '../api/recall-requests.ts';
import * as R from '../api/replies.ts';
import { edgeJson, hitJson, memoryJson, recallRequest } from '../api/views.ts';
import type { Ctx } from '../verbs/context.ts';
import { forget } from '../verbs/forget.ts';
import { graph } from '../verbs/graph.ts';
import { insights } from '../verbs/insights.ts';
import { prime } from '../verbs/prime.ts';
import { entities, getMemory, listMemories } from '../verbs/read.ts';
import { recall } from '../verbs/recall.ts';
import { reflect } from '../verbs/reflect.ts';
import { remember } from '../verbs/remember.ts';
import { ingestConversation } from '../verbs/conversation.ts';
import { revise } from '../verbs/revise.ts';

export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  input: TSchema;
  output: TSchema;
  annotations: Annotations;
  /** Validates the arguments against `input`, runs the verb, returns the structured result. */
  call(ctx: Ctx, args: unknown): Promise<Record<string, unknown>>;
}

interface ToolDef<S extends TSchema> extends Omit<Tool, 'call' | 'input'> {
  input: S;
  run(ctx: Ctx, args: Static<S>): Promise<Record<string, unknown>>;
}

function tool<S extends TSchema>(def: ToolDef<S>): Tool {
  const check = compile(def.input);
  const { run, ...rest } = def;
  return { ...rest, call: (ctx, args) => run(ctx, check(args ?? {})) };
}

const READ: Annotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
const WRITE: Annotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

const MemoryId = T.Object({
  memory_id: T.String({ description: 'The memory id (32 hex characters or a 26-character ULID)' }),
});

export const TOOLS: readonly Tool[] = [
  tool({
    name: 'remember',
    title: 'Remember',
    description:
      'Store one new memory (a fact, event, preference or decision worth keeping) in this workspace. Use it when the ' +
      'user tells you something that should be recalled in later conversations. Optional: importance 0..1, entity_id ' +
      '(who or what it is about), context (a JSON object), edges to existing memories. Returns the stored memory with its memory_id.',
    input: S.RememberBody,
    output: R.Memory,
    annotations: WRITE,
    run: async (ctx, b) => ({
      ...memoryJson(await remember(ctx, { ...b, context: (b.context ?? {}) as JsonObject })),
    }),
  }),
  tool({
    name: 'add_messages',
    title: 'Add conversation messages',
    description:
      "Write a conversation's new messages in order, each as a memory with its speaker and (optional) occurred_at, " +
      'linked followed_by to the message before it; call it again to append to the same conversation_id later. Give ' +
      'each message a message_id to make a retry safe (a message whose id the conversation holds is not written again). ' +
      'Use it to store what was said, as it was said; use remember for a single fact. Returns the memory ids in order.',
    input: T.Composite([
      T.Object({
        conversation_id: T.String({ description: 'The conversation (any id of yours)' }),
      }),
      S.IngestBody,
    ]),
    output: R.IngestResult,
    // Idempotent only for messages with a message_id: without one a repeat writes them again.
    annotations: WRITE,
    run: async (ctx, b) => ({
      ...(await ingestConversation(ctx, {
        ...b,
        messages: b.messages.map((m) => ({
          ...m,
          context: m.context as JsonObject | null | undefined,
        })),
      })),
    }),
  }),
  tool({
    name: 'recall',
    title: 'Recall',
    description:
      'Find the memories most relevant to a cue. Use it before answering anything that may depend on what was said ' +
      'or learned earlier. strategies: similarity (meaning), temporal (by time, with time_range {start, end} as ISO 8601 or microseconds), ' +
      'causal (follow edges from seed_memory_id), analogical (similar shape); defaults to similarity. Narrow with ' +
      'entity_id and top_k; min_relevance (0..1, e.g. 0.2) drops weak matches, so a cue nothing matches returns no results. ' +
      'Returns ranked results with scores, relevance and per-strategy details.',
    input: SR.RecallBody,
    output: R.RecallResult,
    annotations: READ,
    run: async (ctx, b) => {
      const out = await recall(ctx, recallRequest(b));
      return {
        results: out.results.map(hitJson),
        strategy_errors: out.strategy_errors,
        ...(out.rerank ? { rerank: out.rerank } : {}),
      };
    },
  }),
  tool({
    name: 'get_memory',
    title: 'Get a memory',
    description:
      'Read one memory by its memory_id, with all its fields. Use it to look at a memory named by another result.',
    input: MemoryId,
    output: R.Memory,
    annotations: READ,
    run: async (ctx, b) => ({ ...memoryJson(await getMemory(ctx, { id: b.memory_id })) }),
  }),
  tool({
    name: 'list_memories',
    title: 'List memories',
    description:
      'Page through the workspace\'s memories, oldest first (order "desc": newest first; sort by importance, access_count, ' +
      'updated_at or last_accessed_at), optionally only those of one entity_id or kind, holding every word of q, or created ' +
      'between since_us and until_us. Use it to browse or audit what is stored, not to search by meaning (use recall for that). ' +
      'Returns a page and next_cursor (null on the last page); with_total adds the number of matches.',
    input: S.ListQuery,
    output: R.MemoryPage,
    annotations: READ,
    run: async (ctx, q) => {
      const page = await listMemories(ctx, q);
      return {
        memories: page.memories.map(memoryJson),
        next_cursor: page.nextCursor,
        ...(page.total === undefined ? {} : { total: page.total }),
      };
    },
  }),
  tool({
    name: 'revise_memory',
    title: 'Revise a memory',
    description:
      'Change a stored memory in place: new content, importance, context (merged, or replaced with context_mode ' +
      '"replace"), entity_id (null clears it), or extra edges. Use it when a remembered fact was wrong or has changed. ' +
      'The previous content is overwritten. Returns the revised memory.',
    input: T.Composite([MemoryId, S.ReviseBody]),
    output: R.Memory,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    run: async (ctx, b) => {
      const { memory_id, ...rest } = b;
      return {
        ...memoryJson(
          await revise(ctx, {
            ...rest,
            context: rest.context as JsonObject | undefined,
            id: memory_id,
          }),
        ),
      };
    },
  }),
  tool({
    name: 'forget',
    title: 'Forget',
    description:
      'Permanently erase memories matching ALL the given criteria: memory_ids, entity_id, memory_kind, staleness, ' +
      'access count or decay score. Use it only when the user asks to forget something or data must be removed; it ' +
      'cannot be undone, and memories derived from them (insights, propositions) go too. Returns how many were erased.',
    input: S.ForgetBody,
    output: R.ForgetResult,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    run: async (ctx, b) => ({ ...(await forget(ctx, b)) }),
  }),
  tool({
    name: 'prime',
    title: 'Prime context',
    description:
      'Get a starting set of memories for a conversation: the most recent ones plus those most relevant to ' +
      'similarity_cue (or to the entity and context). Use it at the start of a session about a person or topic. ' +
      'Returns ranked results and how many came from recency and from similarity.',
    input: SR.PrimeBody,
    output: R.PrimeResult,
    annotations: READ,
    run: async (ctx, b) => {
      const out = await prime(ctx, { ...b, context: b.context as JsonObject | undefined });
      return { ...out, results: out.results.map(hitJson) };
    },
  }),
  tool({
    name: 'explore_graph',
    title: 'Explore the memory graph',
    description:
      'Walk the typed edges (caused_by, followed_by, revised_from, contradicts, …) around one memory, up to depth ' +
      'hops in direction out/in/both. Use it to see why something happened or how memories connect. Returns nodes and edges.',
    input: SR.GraphBody,
    output: R.GraphResult,
    annotations: READ,
    run: async (ctx, b) => {
      const out = await graph(ctx, b);
      return { ...out, nodes: out.nodes.map(memoryJson), edges: out.edges.map(edgeJson) };
    },
  }),
  tool({
    name: 'list_entities',
    title: 'List entities',
    description:
      'List the entity ids (people, projects, topics) that memories in this workspace are about. Use it to find the right entity_id for other tools.',
    input: T.Object({}),
    output: T.Object({ entities: R.Entities }),
    annotations: READ,
    run: async (ctx) => ({ entities: await entities(ctx) }),
  }),
  tool({
    name: 'reflect',
    title: 'Reflect',
    description:
      'Cluster recent memories (optionally of one entity_id, or created since `since`, an ISO 8601 time) and write insight memories that ' +
      'summarise them. Use it after many new memories, before asking for insights. Returns counts of insights created and refreshed.',
    input: S.ScopeBody,
    output: R.ReflectResult,
    annotations: WRITE,
    run: async (ctx, b) => ({ ...(await reflect(ctx, b)) }),
  }),
  tool({
    name: 'get_insights',
    title: 'Get insights',
    description:
      'Read the insights drawn from memories by reflection, most confident first, optionally for one entity_id and ' +
      'above min_confidence. Use it for a summary of what is known rather than single facts.',
    input: SR.InsightsQuery,
    output: T.Object({ insights: R.MemoryList }),
    annotations: READ,
    run: async (ctx, q) => ({ insights: (await insights(ctx, q)).map(memoryJson) }),
  }),
];
