/**
 * @module reflection/engine — reflection performed by the service. For a workspace and scope it
 * gathers episodes from the owning shard, clusters them in a worker (analysis/task.ts), writes one
 * insight per cluster (by the language model when configured, else extractive), and refreshes an
 * existing insight whose sources largely overlap instead of adding a duplicate. One reflection
 * per workspace runs at a time. A background scheduler reflects after FLASHBULB_REFLECT_MIN_NEW
 * new episodes, or every FLASHBULB_REFLECT_INTERVAL_S when there are new ones.
 */
import { Piscina } from 'piscina';
import type { Config } from '../config/index.ts';
import type { Embedder } from '../embedding/embedder.ts';
import type { LlmClient } from '../llm/client.ts';
import { parseJsonReply } from '../llm/client.ts';
import { llmFailures, reflectionRuns } from '../metrics/index.ts';
import type { JsonObject } from '../model/memory.ts';
import { wallClock, type Clock } from '../model/clock.ts';
import { extractiveInsight } from '../analysis/summarize.ts';
import type { ClusterResult, ReflectTaskInput } from '../analysis/task.ts';
import type { ShardRouter } from '../router/router.ts';
import { taskModule } from '../threads/worker-url.ts';
import type { GatherOutput, InsightWrite } from '../protocol/reflection.ts';
import { contradictionMessages, insightMessages } from './prompts.ts';

/** Episodes considered per reflection (newest first). */
const MAX_EPISODES = 10_000;
/**
 * Episodes a background reflection considers (newest first). It runs every MIN_GAP_MS under a
 * steady stream of writes; over the whole history its cost grew with the store (issue 12's soak:
 * RSS and p99 drifted with reflection on, not with it off), so it looks at a fixed window.
 */
export const BACKGROUND_EPISODES = 2_000;
const REFRESH_OVERLAP = 0.5;
/** Shortest gap between two background reflections of one workspace. */
const MIN_GAP_MS = 30_000;

export interface ReflectScope {
  entityId: string | null;
  sinceUs: number | null;
  /** Newest episodes considered (default MAX_EPISODES). */
  maxEpisodes?: number;
}

export interface ReflectResult {
  insights_created: number;
  insights_refreshed: number;
  clusters_found: number;
  clusters_processed: number;
  memories_processed: number;
}

export interface Analysis {
  gathered: GatherOutput;
  clusters: ClusterResult[];
}

export class ReflectionEngine {
  readonly #config: Config;
  readonly #shards: ShardRouter;
  readonly #embedder: Embedder;
  readonly #llm: LlmClient | null;
  readonly #running = new Map<string, Promise<ReflectResult>>();
  readonly #newEpisodes = new Map<string, number>();
  readonly #lastBackground = new Map<string, number>();
  readonly #clock: Clock;
  #pool: Piscina | null = null;
  #timer: NodeJS.Timeout | null = null;

  /** `clock`: the time MIN_GAP_MS is measured on (tests set it by hand). */
  constructor(opts: {
    config: Config;
    shards: ShardRouter;
    embedder: Embedder;
    llm: LlmClient | null;
    clock?: Clock;
  }) {
    this.#config = opts.config;
    this.#clock = opts.clock ?? wallClock;
    this.#shards = opts.shards;
    this.#embedder = opts.embedder;
    this.#llm = opts.llm;
    if (opts.config.reflectEnabled) {
      this.#timer = setInterval(() => this.#onInterval(), opts.config.reflectIntervalS * 1000);
      this.#timer.unref();
    }
  }

  /** Counts a new episode; reflects the workspace in the background once enough have arrived. */
  noteEpisode(ws: string): void {
    if (!this.#config.reflectEnabled) return;
    const n = (this.#newEpisodes.get(ws) ?? 0) + 1;
    this.#newEpisodes.set(ws, n);
    const since = this.#clock.nowUs() / 1000 - (this.#lastBackground.get(ws) ?? -Infinity);
    // A steady stream of writes reflects at most every MIN_GAP_MS, not every MIN_NEW episodes.
    if (n >= this.#config.reflectMinNew && !this.#running.has(ws) && since >= MIN_GAP_MS)
      this.#background(ws);
  }

  #onInterval(): void {
    for (const [ws, n] of this.#newEpisodes)
      if (n > 0 && !this.#running.has(ws)) this.#background(ws);
  }

  #background(ws: string): void {
    this.#lastBackground.set(ws, this.#clock.nowUs() / 1000);
    this.reflect(ws, { entityId: null, sinceUs: null, maxEpisodes: BACKGROUND_EPISODES }).catch(
      (err: unknown) => console.error(`reflection of '${ws}' failed:`, err),
    );
  }

  /** Reflects now (waiting for a reflection of the same workspace already under way). */
  reflect(ws: string, scope: ReflectScope): Promise<ReflectResult> {
    const previous = this.#running.get(ws) ?? Promise.resolve(null);
    const run = previous.catch(() => null).then(() => this.#reflect(ws, scope));
    this.#running.set(ws, run);
    void run
      .finally(() => {
        if (this.#running.get(ws) === run) this.#running.delete(ws);
      })
      .catch(() => undefined);
    return run;
  }

  async #reflect(ws: string, scope: ReflectScope): Promise<ReflectResult> {
    if (scope.entityId === null && scope.sinceUs === null) this.#newEpisodes.set(ws, 0);
    reflectionRuns.inc();
    const { gathered, clusters } = await this.analyse(ws, scope);
    const writes = await this.#insightsFor(gathered, clusters, scope);
    const written =
      writes.length === 0
        ? { created: [], refreshed: [] }
        : await this.#shards.call(ws, 'writeInsights', { insights: writes });
    if (this.#llm) await this.#judgePending(ws, this.#llm);
    return {
      insights_created: written.created.length,
      insights_refreshed: written.refreshed.length,
      clusters_found: clusters.length,
      clusters_processed: writes.length,
      memories_processed: gathered.ids.length,
    };
  }

  /** Gathers the episodes in scope and clusters them off-thread. */
  async analyse(ws: string, scope: ReflectScope): Promise<Analysis> {
    const gathered = await this.#shards.call(ws, 'reflectGather', {
      entityId: scope.entityId,
      sinceUs: scope.sinceUs,
      max: Math.min(MAX_EPISODES, scope.maxEpisodes ?? MAX_EPISODES),
    });
    if (gathered.ids.length === 0) return { gathered, clusters: [] };
    const input: ReflectTaskInput = {
      vectors: gathered.vectors,
      dim: gathered.dim,
      texts: gathered.texts,
    };
    // The vectors move to the worker (nothing here reads them afterwards): a clone of up to
    // MAX_EPISODES × dim floats would hold the router thread for tens of milliseconds.
    const clusters = (await this.#taskPool().run(input, {
      transferList: [gathered.vectors.buffer as ArrayBuffer],
    })) as ClusterResult[];
    return { gathered, clusters };
  }

  async #insightsFor(
    g: GatherOutput,
    clusters: ClusterResult[],
    scope: ReflectScope,
  ): Promise<InsightWrite[]> {
    const used = new Set<string>();
    const drafts = await Promise.all(
      clusters.map(async (c, clusterId) => {
        const sources = c.members.map((i) => g.ids[i] as string);
        const { content, confidence, method } = await this.#write(g, c);
        const refresh = bestOverlap(sources, g.insights, used);
        if (refresh) used.add(refresh);
        const importance =
          c.members.reduce((s, i) => s + (g.meta[i]?.importance ?? 0.5), 0) / c.members.length;
        const context: JsonObject = {
          cluster_id: clusterId,
          confidence,
          source_count: sources.length,
          tags: c.tags,
          method,
          scope: scope.entityId === null ? 'global' : 'entity',
        };
        return {
          content,
          sources,
          confidence,
          importance,
          entityId: scope.entityId,
          context,
          refreshId: refresh,
        };
      }),
    );
    if (drafts.length === 0) return [];
    const vectors = await this.#embedder.embed(drafts.map((d) => d.content));
    const dim = this.#embedder.dim;
    return drafts.map((d, i) => ({ ...d, embedding: vectors.slice(i * dim, (i + 1) * dim) }));
  }

  async #write(
    g: GatherOutput,
    c: ClusterResult,
  ): Promise<{ content: string; confidence: number; method: 'llm' | 'extractive' }> {
    const heuristic = round3(
      Math.min(
        0.99,
        0.35 + 0.4 * Math.max(0, c.cohesion) + 0.25 * Math.min(1, Math.log2(c.members.length) / 5),
      ),
    );
    const extractive = extractiveInsight({
      texts: g.texts,
      central: c.central,
      tags: c.tags,
      size: c.members.length,
    });
    if (!this.#llm) return { content: extractive, confidence: heuristic, method: 'extractive' };
    try {
      const statements = c.members.slice(0, 20).map((i) => g.texts[i] ?? '');
      const reply = parseJsonReply(await this.#llm.chat(insightMessages(statements, c.tags)));
      const insight = typeof reply?.['insight'] === 'string' ? reply['insight'].trim() : '';
      if (!reply || reply['valid'] === false || insight === '' || insight.length > 1000)
        throw new Error('unusable insight reply');
      const llmConfidence =
        typeof reply['confidence'] === 'number'
          ? Math.min(1, Math.max(0, reply['confidence']))
          : heuristic;
      return {
        content: insight,
        confidence: round3((heuristic + llmConfidence) / 2),
        method: 'llm',
      };
    } catch {
      llmFailures.labels('insight').inc();
      return { content: extractive, confidence: heuristic, method: 'extractive' };
    }
  }

  /** With a language model, uncertain contradiction candidates get a verdict from it. */
  async #judgePending(ws: string, llm: LlmClient): Promise<void> {
    const pending = await this.#shards.call(ws, 'pendingContradictions', {});
    const verdicts: Array<{ pendingId: string; verdict: string; confidence: number }> = [];
    for (const p of pending.slice(0, 50)) {
      try {
        const reply = parseJsonReply(
          await llm.chat(contradictionMessages(p.content_a_snippet, p.content_b_snippet)),
        );
        const verdict = reply?.['verdict'];
        const confidence = typeof reply?.['confidence'] === 'number' ? reply['confidence'] : 0;
        if (
          (verdict === 'contradiction' || verdict === 'revision' || verdict === 'dismiss') &&
          confidence >= 0.7
        ) {
          verdicts.push({ pendingId: p.pending_id, verdict, confidence });
        }
      } catch {
        llmFailures.labels('contradiction').inc();
      }
    }
    if (verdicts.length > 0)
      await this.#shards.call(ws, 'commitVerdicts', { verdicts }).catch(() => undefined);
  }

  #taskPool(): Piscina {
    if (!this.#pool) {
      const task = taskModule('analysis/task');
      this.#pool = new Piscina({
        filename: task.filename,
        workerData: task.workerData,
        minThreads: 1,
        maxThreads: 1,
        idleTimeout: 60_000,
      });
    }
    return this.#pool;
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await Promise.allSettled([...this.#running.values()]);
    await this.#pool?.destroy();
  }
}

function bestOverlap(
  sources: string[],
  insights: GatherOutput['insights'],
  used: Set<string>,
): string | null {
  const s = new Set(sources);
  let best: { id: string; j: number } | null = null;
  for (const ins of insights) {
    if (used.has(ins.id)) continue;
    const inter = ins.sources.filter((x) => s.has(x)).length;
    const j = inter / (s.size + ins.sources.length - inter || 1);
    if (j >= REFRESH_OVERLAP && (!best || j > best.j)) best = { id: ins.id, j };
  }
  return best?.id ?? null;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
