/**
 * @module http/routes — the REST route table, and the single source of the API's shape: each
 * route names its method, path, request and query schemas, reply schema and status, and the
 * server validates with those same schemas, the OpenAPI document (http/openapi) is generated
 * from them, and through it the TypeScript client's types. A handler decodes nothing itself; it
 * calls one verb and shapes the result (the two that take raw bodies are in http/raw-bodies; what
 * a route is, and `route()`, in http/route).
 */
import * as R from '../api/replies.ts';
import * as S from '../api/requests.ts';
import { edgeJson, hitJson, memoryJson as json, recallRequest, withIso } from '../api/views.ts';
import { DEFAULT_WORKSPACE, SLUG_RE } from '../auth/principal.ts';
import { invalid } from '../errors/codes.ts';
import { ID_PATTERN } from '../model/ids.ts';
import { LIMITS } from '../model/limits.ts';
import { serveMcp } from '../mcp/http.ts';
import { registry } from '../metrics/index.ts';
import type { JsonObject } from '../model/memory.ts';
import * as admin from '../verbs/admin.ts';
import { backup } from '../verbs/backup.ts';
import { readiness, requireAdmin } from '../verbs/context.ts';
import { forget, forgetMemory } from '../verbs/forget.ts';
import { graph } from '../verbs/graph.ts';
import { insights } from '../verbs/insights.ts';
import { prime } from '../verbs/prime.ts';
import { batchGet, entities, getMemory, listMemories, memoryEdges } from '../verbs/read.ts';
import { recall } from '../verbs/recall.ts';
import * as reflection from '../verbs/reflect.ts';
import { remember } from '../verbs/remember.ts';
import { ingestConversation } from '../verbs/conversation.ts';
import { revise } from '../verbs/revise.ts';
import { closeSubscription, feedSubscription, openSubscription } from '../verbs/subscribe.ts';
import { exportWorkspace } from '../verbs/transfer.ts';
import type { StreamResponse } from './listener.ts';
import { ndjsonStream } from './ndjson.ts';
import { openApiDocument } from './openapi.ts';
import { importNdjson, uploadFiles } from './raw-bodies.ts';
import { ctxOf, param, route, type Route, type RouteInput, type RouteOutput } from './route.ts';
import { BROWSE_ROUTES } from './routes-browse.ts';
import { SseSink } from './sse.ts';

const DEPRECATED = { deprecation: 'true' };
const ID = { id: { description: 'A memory id: 32 hex characters or a 26-character ULID', pattern: ID_PATTERN } };
const SUB = { id: { description: 'A subscription id, from the `subscribed` event', pattern: '^[0-9]{1,16}$' } };
const SLUG = { slug: { description: 'Workspace slug', pattern: SLUG_RE.source } };

export const ROUTES: readonly Route[] = [
  route({
    method: 'POST', path: '/v1/memories', op: 'remember', scoped: true, summary: 'Store a memory', body: S.RememberBody,
    reply: { status: 201, schema: R.Memory },
    handle: async (i, { body: b }) => ({ status: 201, body: json(await remember(ctxOf(i), { ...b, context: (b.context ?? {}) as JsonObject })) }),
  }),
  route({
    method: 'POST', path: '/v1/conversations/:conversation_id/messages', op: 'ingest', scoped: true, body: S.IngestBody,
    summary: "Write a conversation's new messages in order (speaker, event time; chained followed_by), idempotent by message_id",
    params: { conversation_id: { description: 'The conversation (any id of yours, up to 256 characters)', maxLength: LIMITS.entityChars } },
    reply: { status: 201, schema: R.IngestResult, also: [200] },
    handle: async (i, { body: b }) => {
      const messages = b.messages.map((m) => ({ ...m, context: m.context as JsonObject | null | undefined }));
      const out = await ingestConversation(ctxOf(i), { ...b, messages, conversation_id: param(i, 'conversation_id') });
      return { status: out.created > 0 ? 201 : 200, body: out };
    },
  }),
  route({
    method: 'GET', path: '/v1/memories', op: 'list', scoped: true, query: S.ListQuery,
    summary: 'List memories a page at a time: oldest first, or sorted, filtered by words and creation time, with a total',
    reply: { status: 200, schema: R.MemoryPage },
    handle: async (i, { query }) => {
      const page = await listMemories(ctxOf(i), query);
      return { body: { memories: page.memories.map(json), next_cursor: page.nextCursor, ...(page.total === undefined ? {} : { total: page.total }) } };
    },
  }),
  ...BROWSE_ROUTES,
  route({
    method: 'POST', path: '/v1/memories/batch', op: 'batch_get', scoped: true, summary: 'Get several memories by id (unknown ids are skipped)', body: S.BatchBody,
    reply: { status: 200, schema: R.MemoryList },
    handle: async (i, { body }) => ({ body: (await batchGet(ctxOf(i), body)).map(json) }),
  }),
  route({
    method: 'GET', path: '/v1/memories/:id', op: 'get', scoped: true, summary: 'Get one memory', params: ID,
    reply: { status: 200, schema: R.Memory },
    handle: async (i) => ({ body: json(await getMemory(ctxOf(i), { id: param(i, 'id') })) }),
  }),
  route({
    method: 'DELETE', path: '/v1/memories/:id', op: 'delete_memory', scoped: true, params: ID,
    summary: 'Forget one memory, as POST /v1/forget with memory_ids: [id] (its superseded versions go with it; a version\'s id forgets that version alone; 404 when not held)',
    reply: { status: 200, schema: R.ForgetResult },
    handle: async (i) => ({ body: await forgetMemory(ctxOf(i), { id: param(i, 'id') }) }),
  }),
  route({
    method: 'GET', path: '/v1/memories/:id/edges', op: 'edges', scoped: true, summary: "A memory's outgoing and incoming edges", params: ID,
    reply: { status: 200, schema: R.Edges },
    handle: async (i) => {
      const e = await memoryEdges(ctxOf(i), { id: param(i, 'id') });
      return { body: { outgoing: e.outgoing.map(edgeJson), incoming: e.incoming.map(edgeJson) } };
    },
  }),
  route({
    method: 'PUT', path: '/v1/revise/:id', op: 'revise', scoped: true, summary: 'Revise a memory in place', params: ID, body: S.ReviseBody,
    reply: { status: 200, schema: R.Memory },
    handle: async (i, { body: b }) => {
      const context = b.context as JsonObject | undefined;
      return { body: json(await revise(ctxOf(i), { ...b, context, id: param(i, 'id') })) };
    },
  }),
  route({
    method: 'POST', path: '/v1/forget', op: 'forget', scoped: true, summary: 'Erase memories matching all the given criteria', body: S.ForgetBody,
    reply: { status: 200, schema: R.ForgetResult },
    handle: async (i, { body }) => ({ body: await forget(ctxOf(i), body) }),
  }),
  route({
    method: 'POST', path: '/v1/recall', op: 'recall', scoped: true, summary: 'Recall memories for a cue with one or more strategies', body: S.RecallBody,
    reply: { status: 200, schema: R.RecallResult },
    handle: async (i, { body }) => {
      const out = await recall(ctxOf(i), recallRequest(body));
      return { body: { results: out.results.map(hitJson), strategy_errors: out.strategy_errors } };
    },
  }),
  route({
    method: 'POST', path: '/v1/prime', op: 'prime', scoped: true, summary: 'Recent plus relevant memories to prime an agent', body: S.PrimeBody,
    reply: { status: 200, schema: R.PrimeResult },
    handle: async (i, { body: b }) => {
      const out = await prime(ctxOf(i), { ...b, context: b.context as JsonObject | undefined });
      return { body: { ...out, results: out.results.map(hitJson) } };
    },
  }),
  route({
    method: 'POST', path: '/v1/graph', op: 'graph', scoped: true, summary: 'The neighbourhood of a memory in the edge graph', body: S.GraphBody,
    reply: { status: 200, schema: R.GraphResult },
    handle: async (i, { body }) => {
      const out = await graph(ctxOf(i), body);
      return { body: { ...out, nodes: out.nodes.map(json), edges: out.edges.map(edgeJson) } };
    },
  }),
  route({
    method: 'POST', path: '/v1/upload', op: 'upload', scoped: true, summary: 'Upload .md / .txt documents (multipart "files" parts; the filename is the path)', raw: 'multipart',
    reply: { status: 200, schema: R.UploadResult },
    handle: async (i) => ({ body: await uploadFiles(i) }),
  }),
  route({
    method: 'GET', path: '/v1/export', op: 'export', scoped: true, query: S.ExportQuery,
    summary: 'The workspace as NDJSON: one memory a line with its versions and outgoing edges (streamed)',
    reply: { status: 200, text: 'application/x-ndjson' },
    handle: async (i, { query }) => ndjsonStream(exportWorkspace(ctxOf(i), { embeddings: query.embeddings ?? false })),
  }),
  route({
    method: 'POST', path: '/v1/import', op: 'import', scoped: true, raw: 'ndjson', query: S.ImportQuery,
    summary: 'Import NDJSON in the export format: idempotent by memory id, each line applied whole or not at all',
    reply: { status: 200, schema: R.ImportSummary },
    handle: async (i, { query }) => ({ body: await importNdjson(i, query) }),
  }),
  route({
    method: 'GET', path: '/v1/insights', op: 'insights', scoped: true, summary: 'Insight memories, most confident first', query: S.InsightsQuery,
    reply: { status: 200, schema: R.MemoryList },
    handle: async (i, { query }) => ({ body: (await insights(ctxOf(i), query)).map(json) }),
  }),
  route({
    method: 'POST', path: '/v1/subscribe', op: 'subscribe', scoped: true, summary: 'Open a subscription: memories relevant to fed text are pushed as Server-Sent Events', body: S.SubscribeBody,
    reply: { status: 200, events: R.SubscribeEvents },
    handle: async (i, { body }): Promise<StreamResponse> => {
      const ctx = ctxOf(i);
      const sink = new SseSink();
      const id = await openSubscription(ctx, body, sink);
      return {
        kind: 'stream',
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
        start: (stream) => sink.attach(stream, id, () => i.svc.subscriptions.disconnect(id)),
      };
    },
  }),
  route({
    method: 'POST', path: '/v1/subscribe/:id/feed', op: 'feed', scoped: true, summary: 'Feed text to an open subscription', params: SUB, body: S.FeedBody,
    reply: { status: 200, schema: R.Empty },
    handle: async (i, { body }) => {
      await feedSubscription(ctxOf(i), { subscription_id: subscriptionId(param(i, 'id')), text: body.text });
      return { body: {} };
    },
  }),
  route({
    method: 'DELETE', path: '/v1/subscribe/:id', op: 'close_subscription', scoped: true, summary: 'Close a subscription (its stream gets `event: closed`)', params: SUB,
    reply: { status: 200, schema: R.Empty },
    handle: async (i) => {
      await closeSubscription(ctxOf(i), { subscription_id: subscriptionId(param(i, 'id')) });
      return { body: {} };
    },
  }),
  route({
    method: 'POST', path: '/v1/reflect', op: 'reflect', scoped: true, summary: 'Cluster recent memories into insights now', body: S.ScopeBody, bodyOptional: true,
    reply: { status: 200, schema: R.ReflectResult },
    handle: async (i, { body }) => ({ body: await reflection.reflect(ctxOf(i), body) }),
  }),
  route({
    method: 'POST', path: '/v1/reflect/prepare', op: 'reflect_prepare', scoped: true, deprecated: true, summary: 'Agent-driven reflection, step 1: clusters and prompts', body: S.ScopeBody, bodyOptional: true,
    reply: { status: 200, schema: R.ReflectPrepareResult },
    handle: async (i, { body }) => {
      const out = await reflection.reflectPrepare(ctxOf(i), body);
      const clusters = out.clusters.map((c) => ({ ...c, memories: c.memories.map((m) => withIso(m, ['created_at'])) }));
      return { body: { ...out, clusters }, headers: DEPRECATED };
    },
  }),
  route({
    method: 'POST', path: '/v1/reflect/commit', op: 'reflect_commit', scoped: true, deprecated: true, summary: 'Agent-driven reflection, step 2: store the insights', body: S.ReflectCommitBody,
    reply: { status: 200, schema: R.ReflectCommitResult },
    handle: async (i, { body }) => ({ body: await reflection.reflectCommit(ctxOf(i), body), headers: DEPRECATED }),
  }),
  route({
    method: 'POST', path: '/v1/contradictions/prepare', op: 'contradiction_prepare', scoped: true, deprecated: true, summary: 'Contradiction candidates waiting for a verdict',
    reply: { status: 200, schema: R.PendingContradictions },
    handle: async (i) => ({ body: (await reflection.contradictionPrepare(ctxOf(i))).map((p) => withIso(p, ['created_at'])), headers: DEPRECATED }),
  }),
  route({
    method: 'POST', path: '/v1/contradictions/commit', op: 'contradiction_commit', scoped: true, deprecated: true, summary: 'Verdicts on contradiction candidates', body: S.VerdictsBody,
    reply: { status: 200, schema: R.VerdictResult },
    handle: async (i, { body }) => ({ body: await reflection.contradictionCommit(ctxOf(i), body), headers: DEPRECATED }),
  }),
  route({
    method: 'GET', path: '/v1/entities', op: 'entities', scoped: true, summary: 'Entity ids in use in the workspace',
    reply: { status: 200, schema: R.Entities },
    handle: async (i) => ({ body: await entities(ctxOf(i)) }),
  }),
  route({
    method: 'POST', path: '/v1/mcp', op: 'mcp_v1', scoped: true, summary: 'MCP Streamable HTTP endpoint of the workspace (stateless; JSON-RPC in, JSON out)', raw: 'json-rpc',
    reply: { status: 200, schema: R.JsonRpcReply, also: [202] },
    handle: (i) => mcpRoute(i),
  }),
  route({
    method: 'POST', path: '/mcp', op: 'mcp', scoped: false, summary: "MCP Streamable HTTP endpoint (the key's workspace)", raw: 'json-rpc',
    reply: { status: 200, schema: R.JsonRpcReply, also: [202] },
    handle: (i) => mcpRoute(i),
  }),
  route({
    method: 'GET', path: '/v1/auth/whoami', op: 'whoami', scoped: false, summary: 'The calling key: role, workspace, reach',
    reply: { status: 200, schema: R.Whoami },
    handle: (i) => ({ body: admin.whoami(i.svc, i.principal) }),
  }),
  route({
    method: 'GET', path: '/v1/cluster', op: 'cluster_status', scoped: false, admin: true, summary: 'Cluster mode: nodes, partitions, owners, lag (404 when cluster mode is off)',
    reply: { status: 200, schema: R.ClusterStatus },
    handle: async (i) => ({ body: await admin.clusterStatus(i.svc, i.principal) }),
  }),
  route({
    method: 'GET', path: '/v1/workspaces', op: 'workspaces_list', scoped: false, admin: true, summary: 'All workspaces with their memory counts',
    reply: { status: 200, schema: R.WorkspaceList },
    handle: async (i) => ({ body: { workspaces: (await admin.listWorkspaces(i.svc, i.principal)).map((w) => withIso(w, ['created_at'])) } }),
  }),
  route({
    method: 'POST', path: '/v1/workspaces', op: 'workspaces_create', scoped: false, admin: true, summary: 'Create a workspace and a workspace key for it', body: S.CreateWorkspaceBody,
    reply: { status: 201, schema: R.WorkspaceCreated },
    handle: async (i, { body }) => {
      const out = await admin.createWorkspace(i.svc, i.principal, body);
      return { status: 201, body: { ...out, workspace: withIso(out.workspace, ['created_at']) } };
    },
  }),
  route({
    method: 'GET', path: '/v1/workspaces/:slug', op: 'workspaces_get', scoped: false, admin: true, summary: 'One workspace', params: SLUG,
    reply: { status: 200, schema: R.WorkspaceWithCount },
    handle: async (i) => ({ body: withIso(await admin.getWorkspace(i.svc, i.principal, param(i, 'slug')), ['created_at']) }),
  }),
  route({
    method: 'PUT', path: '/v1/workspaces/:slug', op: 'workspaces_update', scoped: false, admin: true, body: S.UpdateWorkspaceBody,
    summary: 'Rename a workspace or set its default TTL (null removes it)', params: SLUG,
    reply: { status: 200, schema: R.Workspace },
    handle: async (i, { body }) => ({ body: withIso(await admin.updateWorkspace(i.svc, i.principal, param(i, 'slug'), body), ['created_at']) }),
  }),
  route({
    method: 'POST', path: '/v1/admin/backup', op: 'backup', scoped: false, admin: true, body: S.BackupBody,
    summary: "Online backup: a consistent copy of every shard into an empty directory on the server's machine",
    reply: { status: 200, schema: R.BackupSummary },
    handle: async (i, { body }) => ({ body: withIso(await backup({ svc: i.svc, principal: i.principal }, body), ['started_at', 'finished_at']) }),
  }),
  route({
    method: 'DELETE', path: '/v1/workspaces/:slug', op: 'workspaces_delete', scoped: false, admin: true, summary: 'Delete a workspace, its memories and its keys (not the default one)', params: { slug: { ...SLUG.slug, except: [DEFAULT_WORKSPACE] } },
    reply: { status: 200, schema: R.WorkspaceDeleted },
    handle: async (i) => ({ body: await admin.deleteWorkspace(i.svc, i.principal, param(i, 'slug')) }),
  }),
  route({
    method: 'GET', path: '/v1/keys', op: 'keys_list', scoped: false, admin: true, summary: 'All API keys (never their secrets)',
    reply: { status: 200, schema: R.KeyList },
    handle: (i) => ({ body: { keys: admin.listKeys(i.svc, i.principal).map((k) => withIso(k, ['created_at'])) } }),
  }),
  route({
    method: 'POST', path: '/v1/keys', op: 'keys_create', scoped: false, admin: true, summary: 'Create an API key', body: S.CreateKeyBody,
    reply: { status: 201, schema: R.KeyCreated },
    handle: async (i, { body }) => ({ status: 201, body: withIso(await admin.createKey(i.svc, i.principal, body), ['created_at']) }),
  }),
  route({
    method: 'DELETE', path: '/v1/keys/:key_id', op: 'keys_revoke', scoped: false, admin: true, summary: 'Revoke an API key', params: { key_id: { description: 'Key id (key_ and 16 hex digits)', pattern: '^key_[0-9a-f]{16}$' } },
    reply: { status: 200, schema: R.KeyRevoked },
    handle: async (i) => {
      const out = await admin.revokeKey(i.svc, i.principal, param(i, 'key_id'));
      return { body: { ...out, revoked: withIso(out.revoked, ['created_at']) } };
    },
  }),
  route({
    method: 'GET', path: '/v1/health/live', op: 'health_live', scoped: false, access: 'health', summary: 'Liveness',
    reply: { status: 200, schema: R.Health },
    handle: () => ({ body: { status: 'alive' } }),
  }),
  route({
    method: 'GET', path: '/v1/health/ready', op: 'health_ready', scoped: false, access: 'health', summary: 'Readiness (503 while starting or draining)',
    reply: { status: 200, schema: R.Health, also: [503] },
    handle: (i) => {
      const h = readiness(i.svc);
      return h.ready ? { body: { status: 'ready' } } : { status: 503, body: { status: 'not_ready', reason: h.reason } };
    },
  }),
  route({
    method: 'GET', path: '/v1/metrics', op: 'metrics', scoped: false, admin: true, summary: 'Prometheus metrics (server-wide figures: admin keys only)',
    reply: { status: 200, text: 'text/plain' },
    handle: async (i) => {
      requireAdmin(i);
      return { body: null, text: await registry.metrics(), headers: { 'content-type': registry.contentType } };
    },
  }),
  route({
    method: 'GET', path: '/v1/openapi.json', op: 'openapi', scoped: false, access: 'public', summary: 'This API as an OpenAPI 3.1 document',
    reply: { status: 200, schema: R.OpenApiDocument },
    handle: (i) => ({ body: openApiDocument(ROUTES, i.svc.version) }),
  }),
];

async function mcpRoute(i: RouteInput): Promise<RouteOutput> {
  const ctx = ctxOf(i);
  return serveMcp(ctx, { method: 'POST', headers: i.headers, body: i.rawBody });
}

function subscriptionId(text: string): number {
  if (!/^\d{1,16}$/.test(text) || Number(text) > Number.MAX_SAFE_INTEGER) throw invalid(`'${text}' is not a subscription id`);
  return Number(text);
}
