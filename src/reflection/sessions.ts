/**
 * @module reflection/sessions — the deprecated agent-driven reflection: `prepare` clusters the
 * episodes and hands out prompts with a session id; `commit` stores the insights the agent wrote.
 * Sessions live in memory for 10 minutes; source ids must come from the session's clusters, and a
 * commit applies all or nothing.
 */
import { FlashbulbError, invalid } from '../errors/codes.ts';
import type { Embedder } from '../embedding/embedder.ts';
import { wallClock, type Clock } from '../model/clock.ts';
import { hexToUlidText, IdGenerator } from '../model/ids.ts';
import type { ShardRouter } from '../router/router.ts';
import type { ReflectionEngine, ReflectScope } from './engine.ts';
import { INSIGHT_SYSTEM_PROMPT, insightUserPrompt } from './prompts.ts';

export const SESSION_TTL_MS = 10 * 60 * 1000;

export interface ClusterPrompt {
  cluster_id: number;
  member_count: number;
  proposal_system_prompt: string;
  proposal_user_prompt: string;
  memory_ids: string[];
  validation_context: string;
  memories: Array<{
    memory_id: string;
    content: string;
    importance: number;
    entity_id: string | null;
    created_at: number;
  }>;
}

export interface PrepareResult {
  session_id: string;
  memories_processed: number;
  clusters: ClusterPrompt[];
  existing_insight_count: number;
}

export interface ProducedInsight {
  content: string;
  confidence: number;
  source_memory_ids: string[];
  tags: string[];
  cluster_id: number | null;
}

interface Session {
  ws: string;
  expiresAt: number;
  scope: ReflectScope;
  ids: Set<string>;
}

export class ReflectSessions {
  readonly #sessions = new Map<string, Session>();
  readonly #ids = new IdGenerator();

  readonly #engine: ReflectionEngine;
  readonly #shards: ShardRouter;
  readonly #embedder: Embedder;
  readonly #clock: Clock;

  /** `clock`: the time sessions expire on (default the wall clock; tests set it by hand). */
  constructor(
    engine: ReflectionEngine,
    opts: { shards: ShardRouter; embedder: Embedder; clock?: Clock },
  ) {
    this.#engine = engine;
    this.#shards = opts.shards;
    this.#embedder = opts.embedder;
    this.#clock = opts.clock ?? wallClock;
  }

  #nowMs(): number {
    return this.#clock.nowUs() / 1000;
  }

  async prepare(ws: string, scope: ReflectScope): Promise<PrepareResult> {
    this.#sweep();
    const { gathered: g, clusters } = await this.#engine.analyse(ws, scope);
    const sessionId = hexToUlidText(this.#ids.next(this.#nowMs()));
    const prompts = clusters.map((c, clusterId): ClusterPrompt => {
      const ids = c.members.map((i) => g.ids[i] as string);
      return {
        cluster_id: clusterId,
        member_count: ids.length,
        proposal_system_prompt: INSIGHT_SYSTEM_PROMPT,
        proposal_user_prompt: insightUserPrompt(
          c.members.map((i) => g.texts[i] ?? ''),
          c.tags,
        ),
        memory_ids: ids,
        validation_context: JSON.stringify({
          cluster_id: clusterId,
          tags: c.tags,
          cohesion: c.cohesion,
          source_memory_ids: ids,
        }),
        memories: c.members.map((i) => ({
          memory_id: g.ids[i] as string,
          content: g.texts[i] ?? '',
          importance: g.meta[i]?.importance ?? 0.5,
          entity_id: g.meta[i]?.entityId ?? null,
          created_at: g.meta[i]?.createdAt ?? 0,
        })),
      };
    });
    const ids = new Set(prompts.flatMap((p) => p.memory_ids));
    this.#sessions.set(sessionId, { ws, expiresAt: this.#nowMs() + SESSION_TTL_MS, scope, ids });
    return {
      session_id: sessionId,
      memories_processed: g.ids.length,
      clusters: prompts,
      existing_insight_count: g.insights.length,
    };
  }

  async commit(
    ws: string,
    sessionId: string,
    insights: readonly ProducedInsight[],
  ): Promise<{ insights_created: number }> {
    this.#sweep();
    const session = this.#sessions.get(sessionId);
    if (!session || session.ws !== ws)
      throw new FlashbulbError('not_found', `reflect session '${sessionId}' not found or expired`);
    insights.forEach((ins, i) => {
      if (ins.content.trim() === '') throw invalid(`insights[${i}].content must not be empty`);
      if (!(ins.confidence >= 0 && ins.confidence <= 1))
        throw invalid(`insights[${i}].confidence must be between 0.0 and 1.0`);
      if (ins.source_memory_ids.length === 0)
        throw invalid(`insights[${i}].source_memory_ids must name at least one memory`);
      const outside = ins.source_memory_ids.filter((id) => !session.ids.has(id));
      if (outside.length > 0)
        throw invalid(
          `insights[${i}].source_memory_ids are not in this session's clusters: ${outside.join(', ')}`,
        );
    });
    if (insights.length === 0) return { insights_created: 0 };
    const vectors = await this.#embedder.embed(insights.map((i) => i.content));
    const dim = this.#embedder.dim;
    const written = await this.#shards.call(ws, 'writeInsights', {
      insights: insights.map((ins, i) => ({
        content: ins.content,
        embedding: vectors.slice(i * dim, (i + 1) * dim),
        sources: ins.source_memory_ids,
        confidence: ins.confidence,
        importance: 0.5,
        entityId: session.scope.entityId,
        context: {
          confidence: ins.confidence,
          source_count: ins.source_memory_ids.length,
          tags: ins.tags,
          method: 'agent',
          ...(ins.cluster_id === null ? {} : { cluster_id: ins.cluster_id }),
        },
        refreshId: null,
      })),
    });
    this.#sessions.delete(sessionId);
    return { insights_created: written.created.length };
  }

  #sweep(): void {
    const now = this.#nowMs();
    for (const [id, s] of this.#sessions) if (s.expiresAt <= now) this.#sessions.delete(id);
  }
}
