/**
 * @module shard/dispatch — the shard's method table: which op answers each protocol method. Most
 * are ops/ functions over the op context; the few that need the shard itself (subscriptions,
 * dropping a workspace, stats, backup, snapshot) reach it through `ShardSelf`.
 */
import { FlashbulbError } from '../errors/codes.ts';
import type { MemoryRecord } from '../model/memory.ts';
import type {
  BackupResult,
  ShardEvent,
  ShardInput,
  ShardMethod,
  ShardOutput,
  ShardStats,
} from '../protocol/shard.ts';
import { commitVerdicts } from './contradictions.ts';
import type { OpContext } from './ops/context.ts';
import { ingest } from './ops/conversation.ts';
import { forget } from './ops/forget.ts';
import { graph } from './ops/graph.ts';
import { list, timeline } from './ops/list.ts';
import { contradictions, entitySummaries, graphOverview } from './ops/overview.ts';
import { batchGet, count, edges, entities, get, insights } from './ops/read.ts';
import { prime, recall } from './ops/recall.ts';
import { access } from './ops/access.ts';
import { reflectGather, writeInsights } from './ops/reflect.ts';
import { remember } from './ops/remember.ts';
import { revise } from './ops/revise.ts';
import { exportPage, importItems } from './ops/transfer.ts';
import { upload } from './ops/upload.ts';
import type { Subscriptions } from './subscriptions.ts';

/** Memories a subscription arriving from another owner checks for writes it may have missed (newest first). */
const RESUME_SCAN_MAX = 10_000;

export type Handler<M extends ShardMethod> = (
  ctx: OpContext,
  ws: string,
  input: ShardInput<M>,
) => ShardOutput<M> | Promise<ShardOutput<M>>;

export type Handlers = { [M in ShardMethod]: Handler<M> };

/** What the table needs of the shard beyond the op context. */
export interface ShardSelf {
  readonly subs: Subscriptions;
  emit(e: ShardEvent): void;
  stats(): ShardStats;
  backup(dir: string): Promise<BackupResult>;
  snapshot(): Promise<void>;
}

/**
 * Which methods read what writes leave (shard/commit-barrier): they wait until the appends of
 * their workspace in flight have landed. Every method must say, so a new one cannot forget.
 */
export const READS_COMMITTED: { readonly [M in ShardMethod]: boolean } = {
  get: true,
  batchGet: true,
  list: true,
  recall: true,
  access: true,
  prime: true,
  entities: true,
  insights: true,
  edges: true,
  graph: true,
  count: true,
  exportPage: true,
  pendingContradictions: true,
  reflectGather: true,
  subOpen: true,
  subMatch: true,
  timeline: true,
  entitySummaries: true,
  graphOverview: true,
  contradictions: true,
  remember: false,
  ingest: false,
  revise: false,
  forget: false,
  upload: false,
  importItems: false,
  writeInsights: false,
  commitVerdicts: false,
  subClose: false,
  dropWorkspace: false,
  stats: false,
  snapshot: false,
  backup: false,
};

/**
 * Which methods add to what the shard holds in memory: they are refused while its heap is full
 * (shard/heap-watch); reads, forget and deletions are not. Every method must say.
 */
export const GROWS_STORE: { readonly [M in ShardMethod]: boolean } = {
  remember: true,
  ingest: true,
  revise: true,
  upload: true,
  importItems: true,
  writeInsights: true,
  commitVerdicts: true,
  get: false,
  batchGet: false,
  list: false,
  recall: false,
  access: false,
  prime: false,
  entities: false,
  insights: false,
  edges: false,
  graph: false,
  count: false,
  exportPage: false,
  pendingContradictions: false,
  reflectGather: false,
  subOpen: false,
  subMatch: false,
  timeline: false,
  entitySummaries: false,
  graphOverview: false,
  contradictions: false,
  forget: false,
  subClose: false,
  dropWorkspace: false,
  stats: false,
  snapshot: false,
  backup: false,
};

/** Methods that free memory: a heap found full may have room after them. */
export const FREES_MEMORY: ReadonlySet<ShardMethod> = new Set(['forget', 'dropWorkspace']);

export function shardHandlers(self: ShardSelf): Handlers {
  return {
    remember,
    ingest,
    get,
    batchGet,
    list,
    revise,
    forget,
    recall,
    access,
    prime,
    upload,
    entities,
    insights,
    edges,
    graph,
    exportPage,
    importItems,
    count,
    timeline,
    entitySummaries,
    graphOverview,
    contradictions,
    dropWorkspace: async (ctx, ws) => {
      const memories = ctx.state.workspaces.get(ws)?.memories.size ?? 0;
      await ctx.commit([{ t: 'drop', ws }]);
      ctx.requestErasure('all');
      return { memories };
    },
    stats: () => self.stats(),
    reflectGather,
    writeInsights,
    pendingContradictions: (ctx, ws) =>
      [...(ctx.state.workspaces.get(ws)?.pending.values() ?? [])].sort(
        (a, b) => a.created_at - b.created_at,
      ),
    commitVerdicts: async (ctx, ws, input) => {
      const { records, result } = commitVerdicts(ctx.state.workspaces.get(ws), input, ctx.nowUs());
      await ctx.commit(records);
      return result;
    },
    subOpen: (ctx, ws, spec) => {
      self.subs.open(ws, spec);
      const w = ctx.state.workspaces.get(ws);
      if (spec.resume && w) {
        // Moved here from another owner: writes since the move (or just before it) get their pushes now.
        const since: MemoryRecord[] = [];
        for (const id of w.order.newestFirst()) {
          const m = w.memories.get(id);
          if (!m) continue;
          if (m.createdAt < spec.resume.sinceUs || since.length === RESUME_SCAN_MAX) break;
          since.push(m);
        }
        const pushes = self.subs.matchWrites(w, since.reverse(), ctx.nowUs(), spec.id);
        if (pushes.length > 0) self.emit({ kind: 'push', ws, pushes });
      }
      return { opened: true };
    },
    subMatch: (ctx, ws, input) => {
      const pushes = self.subs.matchChunk(
        ws,
        ctx.state.workspaces.get(ws),
        input.id,
        input.vector,
        input.offset,
        ctx.nowUs(),
      );
      if (pushes === null)
        throw new FlashbulbError('not_found', `subscription ${input.id} not found`);
      return pushes;
    },
    subClose: (_ctx, ws, input) => ({ closed: self.subs.close(ws, input.id) }),
    backup: (_ctx, _ws, input) => self.backup(input.dir),
    snapshot: async (ctx) => {
      await self.snapshot();
      return { records: ctx.state.memoryCount() };
    },
  };
}
