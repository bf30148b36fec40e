/**
 * @module http/routes — the REST route table, and the single source of the API's shape: each
 * route names its method, path, request and query schemas, reply schema and status, and the
 * server validates with those same schemas, the OpenAPI document (http/openapi) is generated
 * from them, and through it the TypeScript client's types. A handler decodes nothing itself; it
 * calls one verb and shapes the result (the two that take raw bodies are in http/raw-bodies; what
 * a route is, and `route()`, in http/route; the browsing, operators' and reflection routes in
 * http/routes-browse, routes-admin and routes-reflect).
 */
import * as R from '../api/replies.ts';
import * as S from '../api/requests.ts';
import * as SR from '../api/recall-requests.ts';
import { edgeJson, hitJson, memoryJson as json, recallRequest } from '../api/views.ts';
import { invalid } from '../errors/codes.ts';
import { ID_PATTERN } from '../model/ids.ts';
import { LIMITS } from '../model/limits.ts';
import { serveMcp } from '../mcp/http.ts';
import type { JsonObject } from '../model/memory.ts';
import { forget, forgetMemory } from '../verbs/forget.ts';
import { graph } from '../verbs/graph.ts';
import { insights } from '../verbs/insights.ts';
import { prime } from '../verbs/prime.ts';
import { batchGet, entities, getMemory, listMemories, memoryEdges } from '../verbs/read.ts';
import { recall } from '../verbs/recall.ts';
import { remember } from '../verbs/remember.ts';
import { ingestConversation } from '../verbs/conversation.ts';
import { revise } from '../verbs/revise.ts';
import { closeSubscription, feedSubscription, openSubscription } from '../verbs/subscribe.ts';
import { exportWorkspace } from '../verbs/transfer.ts';
import type { StreamResponse } from './exchange.ts';
import { ndjsonStream } from './ndjson.ts';
import { openApiDocument } from './openapi.ts';
import { importNdjson, uploadFiles } from './raw-bodies.ts';
import { ctxOf, param, route, type Route, type RouteInput, type RouteOutput } from './route.ts';
import { BROWSE_ROUTES } from './routes-browse.ts';
import { SseSink } from './sse.ts';
import { ADMIN_ROUTES } from './routes-admin.ts';
import { REFLECT_ROUTES } from './routes-reflect.ts';

const ID = {
  id: { description: 'A memory id: 32 hex characters or a 26-character ULID', pattern: ID_PATTERN },
};
const SUB = {
  id: { description: 'A subscription id, from the `subscribed` event', pattern: '^[0-9]{1,16}$' },
};

export const ROUTES: readonly Route[] = [
  route({
    method: 'POST',
    path: '/v1/memories',
    op: 'remember',
    scoped: true,
    summary: 'Store a memory',
    body: S.RememberBody,
    reply: { status: 201, schema: R.Memory },
    handle: async (i, { body: b }) => ({
      status: 201,
      body: json(await remember(ctxOf(i), { ...b, context: (b.context ?? {}) as JsonObject })),
    }),
  }),
  route({
    method: 'POST',
    path: '/v1/conversations/:conversation_id/messages',
    op: 'ingest',
    scoped: true,
    body: S.IngestBody,
    summary:
      "Write a conversation's new messages in order (speaker, event time; chained followed_by), idempotent by message_id",
    params: {
      conversation_id: {
        description: 'The conversation (any id of yours, up to 256 characters)',
        maxLength: LIMITS.entityChars,
      },
    },
    reply: { status: 201, schema: R.IngestResult, also: [200] },
    handle: async (i, { body: b }) => {
      const messages = b.messages.map((m) => ({
        ...m,
        context: m.context as JsonObject | null | undefined,
      }));
      const out = await ingestConversation(ctxOf(i), {
        ...b,
        messages,
        conversation_id: param(i, 'conversation_id'),
      });
      return { status: out.created > 0 ? 201 : 200, body: out };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/memories',
    op: 'list',
    scoped: true,
    query: S.ListQuery,
    summary:
      'List memories a page at a time: oldest first, or sorted, filtered by words and creation time, with a total',
    reply: { status: 200, schema: R.MemoryPage },
    handle: async (i, { query }) => {
      const page = await listMemories(ctxOf(i), query);
      return {
        body: {
          memories: page.memories.map(json),
          next_cursor: page.nextCursor,
          ...(page.total === undefined ? {} : { total: page.total }),
        },
      };
    },
  }),
  ...BROWSE_ROUTES,
  route({
    method: 'POST',
    path: '/v1/memories/batch',
    op: 'batch_get',
    scoped: true,
    summary: 'Get several memories by id (unknown ids are skipped)',
    body: S.BatchBody,
    reply: { status: 200, schema: R.MemoryList },
    handle: async (i, { body }) => ({ body: (await batchGet(ctxOf(i), body)).map(json) }),
  }),
  route({
    method: 'GET',
    path: '/v1/memories/:id',
    op: 'get',
    scoped: true,
    summary: 'Get one memory',
    params: ID,
    reply: { status: 200, schema: R.Memory },
    handle: async (i) => ({ body: json(await getMemory(ctxOf(i), { id: param(i, 'id') })) }),
  }),
  route({
    method: 'DELETE',
    path: '/v1/memories/:id',
    op: 'delete_memory',
    scoped: true,
    params: ID,
    summary:
      "Forget one memory, as POST /v1/forget with memory_ids: [id] (its superseded versions go with it; a version's id forgets that version alone; 404 when not held)",
    reply: { status: 200, schema: R.ForgetResult },
    handle: async (i) => ({ body: await forgetMemory(ctxOf(i), { id: param(i, 'id') }) }),
  }),
  route({
    method: 'GET',
    path: '/v1/memories/:id/edges',
    op: 'edges',
    scoped: true,
    summary: "A memory's outgoing and incoming edges",
    params: ID,
    reply: { status: 200, schema: R.Edges },
    handle: async (i) => {
      const e = await memoryEdges(ctxOf(i), { id: param(i, 'id') });
      return { body: { outgoing: e.outgoing.map(edgeJson), incoming: e.incoming.map(edgeJson) } };
    },
  }),
  route({
    method: 'PUT',
    path: '/v1/revise/:id',
    op: 'revise',
    scoped: true,
    summary: 'Revise a memory in place',
    params: ID,
    body: S.ReviseBody,
    reply: { status: 200, schema: R.Memory },
    handle: async (i, { body: b }) => {
      const context = b.context as JsonObject | undefined;
      return { body: json(await revise(ctxOf(i), { ...b, context, id: param(i, 'id') })) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/forget',
    op: 'forget',
    scoped: true,
    summary: 'Erase memories matching all the given criteria',
    body: S.ForgetBody,
    reply: { status: 200, schema: R.ForgetResult },
    handle: async (i, { body }) => ({ body: await forget(ctxOf(i), body) }),
  }),
  route({
    method: 'POST',
    path: '/v1/recall',
    op: 'recall',
    scoped: true,
    summary: 'Recall memories for a cue with one or more strategies',
    body: SR.RecallBody,
    reply: { status: 200, schema: R.RecallResult },
    handle: async (i, { body }) => {
      const out = await recall(ctxOf(i), recallRequest(body));
      return {
        body: {
          results: out.results.map(hitJson),
          strategy_errors: out.strategy_errors,
          ...(out.rerank ? { rerank: out.rerank } : {}),
        },
      };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/prime',
    op: 'prime',
    scoped: true,
    summary: 'Recent plus relevant memories to prime an agent',
    body: SR.PrimeBody,
    reply: { status: 200, schema: R.PrimeResult },
    handle: async (i, { body: b }) => {
      const out = await prime(ctxOf(i), { ...b, context: b.context as JsonObject | undefined });
      return { body: { ...out, results: out.results.map(hitJson) } };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/graph',
    op: 'graph',
    scoped: true,
    summary: 'The neighbourhood of a memory in the edge graph',
    body: SR.GraphBody,
    reply: { status: 200, schema: R.GraphResult },
    handle: async (i, { body }) => {
      const out = await graph(ctxOf(i), body);
      return { body: { ...out, nodes: out.nodes.map(json), edges: out.edges.map(edgeJson) } };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/upload',
    op: 'upload',
    scoped: true,
    summary: 'Upload .md / .txt documents (multipart "files" parts; the filename is the path)',
    raw: 'multipart',
    reply: { status: 200, schema: R.UploadResult },
    handle: async (i) => ({ body: await uploadFiles(i) }),
  }),
  route({
    method: 'GET',
    path: '/v1/export',
    op: 'export',
    scoped: true,
    query: S.ExportQuery,
    summary:
      'The workspace as NDJSON: one memory a line with its versions and outgoing edges (streamed)',
    reply: { status: 200, text: 'application/x-ndjson' },
    handle: async (i, { query }) =>
      ndjsonStream(exportWorkspace(ctxOf(i), { embeddings: query.embeddings ?? false })),
  }),
  route({
    method: 'POST',
    path: '/v1/import',
    op: 'import',
    scoped: true,
    raw: 'ndjson',
    query: S.ImportQuery,
    summary:
      'Import NDJSON in the export format: idempotent by memory id, each line applied whole or not at all',
    reply: { status: 200, schema: R.ImportSummary },
    handle: async (i, { query }) => ({ body: await importNdjson(i, query) }),
  }),
  route({
    method: 'GET',
    path: '/v1/insights',
    op: 'insights',
    scoped: true,
    summary: 'Insight memories, most confident first',
    query: SR.InsightsQuery,
    reply: { status: 200, schema: R.MemoryList },
    handle: async (i, { query }) => ({ body: (await insights(ctxOf(i), query)).map(json) }),
  }),
  route({
    method: 'POST',
    path: '/v1/subscribe',
    op: 'subscribe',
    scoped: true,
    summary: 'Open a subscription: memories relevant to fed text are pushed as Server-Sent Events',
    body: SR.SubscribeBody,
    reply: { status: 200, events: R.SubscribeEvents },
    handle: async (i, { body }): Promise<StreamResponse> => {
      const ctx = ctxOf(i);
      const sink = new SseSink();
      const id = await openSubscription(ctx, body, sink);
      return {
        kind: 'stream',
        status: 200,
        headers: {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          'x-accel-buffering': 'no',
        },
        start: (stream) => sink.attach(stream, id, () => i.svc.subscriptions.disconnect(id)),
      };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/subscribe/:id/feed',
    op: 'feed',
    scoped: true,
    summary: 'Feed text to an open subscription',
    params: SUB,
    body: SR.FeedBody,
    reply: { status: 200, schema: R.Empty },
    handle: async (i, { body }) => {
      await feedSubscription(ctxOf(i), {
        subscription_id: subscriptionId(param(i, 'id')),
        text: body.text,
      });
      return { body: {} };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/subscribe/:id',
    op: 'close_subscription',
    scoped: true,
    summary: 'Close a subscription (its stream gets `event: closed`)',
    params: SUB,
    reply: { status: 200, schema: R.Empty },
    handle: async (i) => {
      await closeSubscription(ctxOf(i), { subscription_id: subscriptionId(param(i, 'id')) });
      return { body: {} };
    },
  }),
  ...REFLECT_ROUTES,
  route({
    method: 'GET',
    path: '/v1/entities',
    op: 'entities',
    scoped: true,
    summary: 'Entity ids in use in the workspace',
    reply: { status: 200, schema: R.Entities },
    handle: async (i) => ({ body: await entities(ctxOf(i)) }),
  }),
  route({
    method: 'POST',
    path: '/v1/mcp',
    op: 'mcp_v1',
    scoped: true,
    summary: 'MCP Streamable HTTP endpoint of the workspace (stateless; JSON-RPC in, JSON out)',
    raw: 'json-rpc',
    reply: { status: 200, schema: R.JsonRpcReply, also: [202] },
    handle: (i) => mcpRoute(i),
  }),
  route({
    method: 'POST',
    path: '/mcp',
    op: 'mcp',
    scoped: false,
    summary: "MCP Streamable HTTP endpoint (the key's workspace)",
    raw: 'json-rpc',
    reply: { status: 200, schema: R.JsonRpcReply, also: [202] },
    handle: (i) => mcpRoute(i),
  }),
  ...ADMIN_ROUTES,
  route({
    method: 'GET',
    path: '/v1/openapi.json',
    op: 'openapi',
    scoped: false,
    access: 'public',
    summary: 'This API as an OpenAPI 3.1 document',
    reply: { status: 200, schema: R.OpenApiDocument },
    handle: (i) => ({ body: openApiDocument(ROUTES, i.svc.version) }),
  }),
];

async function mcpRoute(i: RouteInput): Promise<RouteOutput> {
  const ctx = ctxOf(i);
  return serveMcp(ctx, { method: 'POST', headers: i.headers, body: i.rawBody });
}

function subscriptionId(text: string): number {
  if (!/^\d{1,16}$/.test(text) || Number(text) > Number.MAX_SAFE_INTEGER)
    throw invalid(`'${text}' is not a subscription id`);
  return Number(text);
}
