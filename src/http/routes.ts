/**
 * @module http/routes — the REST route table. Each route decodes its input with a schema, calls
 * one verb and encodes the result; nothing else happens here.
 */
import type { Principal } from '../auth/principal.ts';
import { invalid } from '../errors/codes.ts';
import { memoryToJson, nowUs, type JsonObject, type MemoryView } from '../model/memory.ts';
import * as admin from '../verbs/admin.ts';
import { resolveCtx, type Ctx, type Services } from '../verbs/context.ts';
import { forget } from '../verbs/forget.ts';
import { batchGet, entities, getMemory, listMemories, memoryEdges } from '../verbs/read.ts';
import { remember } from '../verbs/remember.ts';
import { revise } from '../verbs/revise.ts';
import { recall, type RecallRequest, type TimeRangeInput } from '../verbs/recall.ts';
import { prime } from '../verbs/prime.ts';
import { graph } from '../verbs/graph.ts';
import { upload } from '../verbs/upload.ts';
import { insights } from '../verbs/insights.ts';
import { FlashbulbError } from '../errors/codes.ts';
import { parseMultipart, type StreamResponse } from './uws.ts';
import { SseSink } from './sse.ts';
import { closeSubscription, feedSubscription, openSubscription } from '../verbs/subscribe.ts';
import * as reflection from '../verbs/reflect.ts';
import type { RecallHit } from '../recall/types.ts';
import { compile } from './schema.ts';
import { ndjsonLines, ndjsonStream } from './ndjson.ts';
import { exportWorkspace, importLines, type LineInput } from '../verbs/transfer.ts';
import { backup } from '../verbs/backup.ts';
import * as S from './schemas.ts';

export interface RouteInput {
  svc: Services;
  principal: Principal;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** Raw body and content type, for routes marked `raw`. */
  rawBody: Buffer;
  contentType: string;
  /** Workspace named by a /v1/workspaces/<slug>/ prefix. */
  workspace: string | undefined;
}

export interface RouteOutput {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Operation name for metrics. */
  op: string;
  /** Data-plane routes may be prefixed with /v1/workspaces/<slug>/. */
  scoped: boolean;
  /** Needs a JSON body ('optional': an empty body reads as {}). */
  body?: boolean | 'optional';
  /** Takes the raw body (multipart). */
  raw?: boolean;
  /** Deprecated: every answer, errors included, carries `Deprecation: true`. */
  deprecated?: boolean;
  handle: (input: RouteInput) => Promise<RouteOutput | StreamResponse> | RouteOutput;
}

const v = {
  remember: compile(S.RememberBody),
  batch: compile(S.BatchBody),
  revise: compile(S.ReviseBody),
  forget: compile(S.ForgetBody),
  createWorkspace: compile(S.CreateWorkspaceBody),
  updateWorkspace: compile(S.UpdateWorkspaceBody),
  createKey: compile(S.CreateKeyBody),
  list: compile(S.ListQuery),
  recall: compile(S.RecallBody),
  prime: compile(S.PrimeBody),
  graph: compile(S.GraphBody),
  insights: compile(S.InsightsQuery),
  subscribe: compile(S.SubscribeBody),
  feed: compile(S.FeedBody),
  scope: compile(S.ScopeBody),
  reflectCommit: compile(S.ReflectCommitBody),
  verdicts: compile(S.VerdictsBody),
  exportQuery: compile(S.ExportQuery),
  importQuery: compile(S.ImportQuery),
  transferLine: compile(S.TransferLine),
  backup: compile(S.BackupBody),
};

const DEPRECATED = { deprecation: 'true' };

function ctxOf(i: RouteInput): Ctx {
  return resolveCtx(i.svc, i.principal, i.workspace, { strict: true });
}

function param(i: RouteInput, name: string): string {
  return i.params[name] ?? '';
}

const json = (m: MemoryView): unknown => memoryToJson(m, nowUs());
const hitJson = (h: RecallHit): unknown => ({ ...h, memory: json(h.memory) });

/** REST recall body → verb input: plain-string strategies, `strategy` alias, `{start, end}` ranges. */
function recallRequest(body: unknown): RecallRequest {
  const b = v.recall(body);
  const names = b.strategies ?? (b.strategy === undefined ? undefined : [b.strategy]);
  if (names === undefined) throw invalid('strategies is required (one or more of similarity, temporal, causal, analogical)');
  const range = (t: typeof b.time_range): TimeRangeInput | undefined =>
    t === undefined ? undefined : { start_us: t.start_us ?? t.start, end_us: t.end_us ?? t.end };
  return {
    ...b,
    cue_context: b.cue_context as string | JsonObject | undefined,
    time_range: range(b.time_range),
    strategies: names.map((s) => (typeof s === 'string' ? { strategy: s } : { ...s, time_range: range(s.time_range) })),
  };
}

export const ROUTES: readonly Route[] = [
  {
    method: 'POST', path: '/v1/memories', op: 'remember', scoped: true, body: true,
    handle: async (i) => {
      const b = v.remember(i.body);
      const memory = await remember(ctxOf(i), { ...b, context: (b.context ?? {}) as JsonObject });
      return { status: 201, body: json(memory) };
    },
  },
  {
    method: 'GET', path: '/v1/memories', op: 'list', scoped: true,
    handle: async (i) => {
      const q = v.list(queryObject(i.query, { limit: 'int', include_superseded: 'bool' }));
      const page = await listMemories(ctxOf(i), q);
      return { body: { memories: page.memories.map(json), next_cursor: page.nextCursor } };
    },
  },
  {
    method: 'POST', path: '/v1/memories/batch', op: 'batch_get', scoped: true, body: true,
    handle: async (i) => ({ body: (await batchGet(ctxOf(i), v.batch(i.body))).map(json) }),
  },
  {
    method: 'GET', path: '/v1/memories/:id', op: 'get', scoped: true,
    handle: async (i) => ({ body: json(await getMemory(ctxOf(i), { id: param(i, 'id') })) }),
  },
  {
    method: 'GET', path: '/v1/memories/:id/edges', op: 'edges', scoped: true,
    handle: async (i) => ({ body: await memoryEdges(ctxOf(i), { id: param(i, 'id') }) }),
  },
  {
    method: 'PUT', path: '/v1/revise/:id', op: 'revise', scoped: true, body: true,
    handle: async (i) => {
      const b = v.revise(i.body);
      const context = b.context as JsonObject | undefined;
      return { body: json(await revise(ctxOf(i), { ...b, context, id: param(i, 'id') })) };
    },
  },
  {
    method: 'POST', path: '/v1/forget', op: 'forget', scoped: true, body: true,
    handle: async (i) => ({ body: await forget(ctxOf(i), v.forget(i.body)) }),
  },
  {
    method: 'POST', path: '/v1/recall', op: 'recall', scoped: true, body: true,
    handle: async (i) => {
      const out = await recall(ctxOf(i), recallRequest(i.body));
      return { body: { results: out.results.map(hitJson), strategy_errors: out.strategy_errors } };
    },
  },
  {
    method: 'POST', path: '/v1/prime', op: 'prime', scoped: true, body: true,
    handle: async (i) => {
      const b = v.prime(i.body);
      const out = await prime(ctxOf(i), { ...b, context: b.context as JsonObject | undefined });
      return { body: { ...out, results: out.results.map(hitJson) } };
    },
  },
  {
    method: 'POST', path: '/v1/graph', op: 'graph', scoped: true, body: true,
    handle: async (i) => {
      const out = await graph(ctxOf(i), v.graph(i.body));
      return { body: { ...out, nodes: out.nodes.map(json) } };
    },
  },
  {
    method: 'POST', path: '/v1/upload', op: 'upload', scoped: true, raw: true,
    handle: async (i) => {
      const parts = parseMultipart(i.rawBody, i.contentType);
      if (!parts) throw new FlashbulbError('unsupported_media_type', 'upload needs Content-Type multipart/form-data with "files" parts');
      const files = parts.filter((p) => p.name === 'files' || p.name === 'file');
      for (const p of files) if (!p.filename) throw invalid(`a "${p.name}" part has no filename; the filename is the file's relative path`);
      return { body: await upload(ctxOf(i), { files: files.map((p) => ({ filePath: p.filename ?? '', data: p.data })) }) };
    },
  },
  {
    method: 'GET', path: '/v1/export', op: 'export', scoped: true,
    handle: async (i) => {
      const q = v.exportQuery(queryObject(i.query, { embeddings: 'bool' }));
      return ndjsonStream(exportWorkspace(ctxOf(i), { embeddings: q.embeddings ?? false }));
    },
  },
  {
    method: 'POST', path: '/v1/import', op: 'import', scoped: true, raw: true,
    handle: async (i) => {
      const q = v.importQuery(queryObject(i.query, { first_line: 'int' }));
      const ctx = ctxOf(i);
      const type = i.contentType;
      if (type !== '' && !/^(application\/(x-)?ndjson|application\/jsonl|application\/json|text\/plain)\b/i.test(type)) {
        throw new FlashbulbError('unsupported_media_type', `import takes NDJSON (Content-Type application/x-ndjson), got '${type}'`);
      }
      const lines = ndjsonLines<LineInput>(i.rawBody, q.first_line ?? 1, v.transferLine as (value: unknown) => LineInput);
      return { body: await importLines(ctx, { lines }) };
    },
  },
  {
    method: 'GET', path: '/v1/insights', op: 'insights', scoped: true,
    handle: async (i) => {
      const q = v.insights(queryObject(i.query, { min_confidence: 'num', max_results: 'int' }));
      return { body: (await insights(ctxOf(i), q)).map(json) };
    },
  },
  {
    method: 'POST', path: '/v1/subscribe', op: 'subscribe', scoped: true, body: true,
    handle: async (i): Promise<StreamResponse> => {
      const ctx = ctxOf(i);
      const sink = new SseSink();
      const id = await openSubscription(ctx, v.subscribe(i.body), sink);
      return {
        kind: 'stream',
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
        start: (stream) => sink.attach(stream, id, () => i.svc.subscriptions.disconnect(id)),
      };
    },
  },
  {
    method: 'POST', path: '/v1/subscribe/:id/feed', op: 'feed', scoped: true, body: true,
    handle: async (i) => {
      await feedSubscription(ctxOf(i), { subscription_id: subscriptionId(param(i, 'id')), text: v.feed(i.body).text });
      return { body: {} };
    },
  },
  {
    method: 'DELETE', path: '/v1/subscribe/:id', op: 'close_subscription', scoped: true,
    handle: async (i) => {
      await closeSubscription(ctxOf(i), { subscription_id: subscriptionId(param(i, 'id')) });
      return { body: {} };
    },
  },
  {
    method: 'POST', path: '/v1/reflect', op: 'reflect', scoped: true, body: 'optional',
    handle: async (i) => ({ body: await reflection.reflect(ctxOf(i), v.scope(i.body)) }),
  },
  {
    method: 'POST', path: '/v1/reflect/prepare', op: 'reflect_prepare', scoped: true, deprecated: true, body: 'optional',
    handle: async (i) => ({ body: await reflection.reflectPrepare(ctxOf(i), v.scope(i.body)), headers: DEPRECATED }),
  },
  {
    method: 'POST', path: '/v1/reflect/commit', op: 'reflect_commit', scoped: true, deprecated: true, body: true,
    handle: async (i) => ({ body: await reflection.reflectCommit(ctxOf(i), v.reflectCommit(i.body)), headers: DEPRECATED }),
  },
  {
    method: 'POST', path: '/v1/contradictions/prepare', op: 'contradiction_prepare', scoped: true, deprecated: true,
    handle: async (i) => ({ body: await reflection.contradictionPrepare(ctxOf(i)), headers: DEPRECATED }),
  },
  {
    method: 'POST', path: '/v1/contradictions/commit', op: 'contradiction_commit', scoped: true, deprecated: true, body: true,
    handle: async (i) => ({ body: await reflection.contradictionCommit(ctxOf(i), v.verdicts(i.body)), headers: DEPRECATED }),
  },
  {
    method: 'GET', path: '/v1/entities', op: 'entities', scoped: true,
    handle: async (i) => ({ body: await entities(ctxOf(i)) }),
  },
  {
    method: 'GET', path: '/v1/auth/whoami', op: 'whoami', scoped: false,
    handle: (i) => ({ body: admin.whoami(i.svc, i.principal) }),
  },
  {
    method: 'GET', path: '/v1/workspaces', op: 'workspaces_list', scoped: false,
    handle: async (i) => ({ body: { workspaces: await admin.listWorkspaces(i.svc, i.principal) } }),
  },
  {
    method: 'POST', path: '/v1/workspaces', op: 'workspaces_create', scoped: false, body: true,
    handle: (i) => ({ status: 201, body: admin.createWorkspace(i.svc, i.principal, v.createWorkspace(i.body)) }),
  },
  {
    method: 'GET', path: '/v1/workspaces/:slug', op: 'workspaces_get', scoped: false,
    handle: async (i) => ({ body: await admin.getWorkspace(i.svc, i.principal, param(i, 'slug')) }),
  },
  {
    method: 'PUT', path: '/v1/workspaces/:slug', op: 'workspaces_update', scoped: false, body: true,
    handle: (i) => ({ body: admin.updateWorkspace(i.svc, i.principal, param(i, 'slug'), v.updateWorkspace(i.body)) }),
  },
  {
    method: 'DELETE', path: '/v1/workspaces/:slug', op: 'workspaces_delete', scoped: false,
    handle: async (i) => ({ body: await admin.deleteWorkspace(i.svc, i.principal, param(i, 'slug')) }),
  },
  {
    method: 'POST', path: '/v1/admin/backup', op: 'backup', scoped: false, body: true,
    handle: async (i) => ({ body: await backup({ svc: i.svc, principal: i.principal }, v.backup(i.body)) }),
  },
  {
    method: 'GET', path: '/v1/keys', op: 'keys_list', scoped: false,
    handle: (i) => ({ body: { keys: admin.listKeys(i.svc, i.principal) } }),
  },
  {
    method: 'POST', path: '/v1/keys', op: 'keys_create', scoped: false, body: true,
    handle: (i) => ({ status: 201, body: admin.createKey(i.svc, i.principal, v.createKey(i.body)) }),
  },
  {
    method: 'DELETE', path: '/v1/keys/:key_id', op: 'keys_revoke', scoped: false,
    handle: (i) => ({ body: admin.revokeKey(i.svc, i.principal, param(i, 'key_id')) }),
  },
];

function subscriptionId(text: string): number {
  if (!/^\d{1,16}$/.test(text) || Number(text) > Number.MAX_SAFE_INTEGER) throw invalid(`'${text}' is not a subscription id`);
  return Number(text);
}

type QueryTypes = Record<string, 'int' | 'bool' | 'num'>;

/** Turns a query string into an object, converting the named fields; bad values are 400s. */
export function queryObject(q: URLSearchParams, types: QueryTypes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, raw] of q) {
    const type = types[k];
    if (type === 'int') {
      if (!/^-?\d+$/.test(raw)) throw invalid(`${k} must be an integer, got '${raw}'`);
      out[k] = Number(raw);
    } else if (type === 'num') {
      if (raw.trim() === '' || !Number.isFinite(Number(raw))) throw invalid(`${k} must be a number, got '${raw}'`);
      out[k] = Number(raw);
    } else if (type === 'bool') {
      if (raw !== 'true' && raw !== 'false') throw invalid(`${k} must be true or false, got '${raw}'`);
      out[k] = raw === 'true';
    } else out[k] = raw;
  }
  return out;
}
