/**
 * @module shard/subscriptions — the matching half of subscriptions, in the shard that owns the
 * workspace. A subscription remembers its recent chunk vectors and the memories it has pushed:
 * a memory is pushed at most once, when its relevance to a chunk reaches the threshold and it
 * passes the entity, kind and time-scope filters. New writes are checked against recent chunks.
 * A chunk (or a batch of writes) pushes at most `maxPushes` memories, the most relevant first; the
 * rest stay unpushed, so a later chunk may still push them.
 */
import { isExpired, type MemoryRecord } from '../model/memory.ts';
import { compileFilter } from '../recall/filter.ts';
import { compositeScore } from '../recall/scoring.ts';
import { DEFAULT_WEIGHTS } from '../recall/types.ts';
import { dot } from '../recall/vector.ts';
import { view } from './ops/context.ts';
import { recallSource } from './ops/recall-source.ts';
import type { ShardState } from './store/apply.ts';
import type { LiveRecord } from './store/records.ts';
import type { Workspace } from './store/workspace.ts';
import type { Push, SubscriptionSpec } from '../protocol/shard.ts';

/** Chunks a subscription keeps for matching new writes. */
const RECENT_CHUNKS = 8;
const SEARCH_K = 32;
/** Memories a subscription remembers having pushed (older ones may be pushed again). */
const PUSHED_MAX = 100_000;

interface Sub extends SubscriptionSpec {
  accepts: (m: MemoryRecord) => boolean;
  pushed: Set<string>;
  recent: Array<{ vector: Float32Array; offset: number }>;
}

export class Subscriptions {
  readonly #byWorkspace = new Map<string, Map<number, Sub>>();

  get active(): boolean {
    return this.#byWorkspace.size > 0;
  }

  open(ws: string, spec: SubscriptionSpec): void {
    let subs = this.#byWorkspace.get(ws);
    if (!subs) {
      subs = new Map();
      this.#byWorkspace.set(ws, subs);
    }
    const { resume, ...plain } = spec;
    const recent = (resume?.recent ?? [])
      .slice(-RECENT_CHUNKS)
      .map((r) => ({ vector: Float32Array.from(r.vector), offset: r.offset }));
    subs.set(spec.id, {
      ...plain,
      accepts: spec.filter ? compileFilter(spec.filter) : () => true,
      pushed: new Set(resume?.pushed ?? []),
      recent,
    });
  }

  close(ws: string, id: number): boolean {
    const subs = this.#byWorkspace.get(ws);
    const found = subs?.delete(id) ?? false;
    if (subs && subs.size === 0) this.#byWorkspace.delete(ws);
    return found;
  }

  has(ws: string, id: number): boolean {
    return this.#byWorkspace.get(ws)?.has(id) ?? false;
  }

  /** Matches one embedded chunk; returns the pushes (best first). */
  matchChunk(
    ws: string,
    w: Workspace | undefined,
    id: number,
    vector: Float32Array,
    offset: number,
    nowUs: number,
  ): Push[] | null {
    const sub = this.#byWorkspace.get(ws)?.get(id);
    if (!sub) return null;
    sub.recent.push({ vector, offset });
    if (sub.recent.length > RECENT_CHUNKS) sub.recent.shift();
    if (!w) return [];
    const chosen: Array<{ m: MemoryRecord; sim: number }> = [];
    const seen = new Set<string>();
    const src = recallSource(w, sub.filter ?? null);
    // Widen the search while it still finds memories above the threshold and places are left.
    for (let k = SEARCH_K; ; k *= 4) {
      const hits = src.nearest(vector, { k, ef: Math.max(64, k), entityId: sub.entityId });
      for (const { id: memoryId, sim } of hits) {
        if (sim < sub.threshold || chosen.length === sub.maxPushes) break;
        if (seen.has(memoryId)) continue;
        seen.add(memoryId);
        const m = w.memories.get(memoryId);
        if (m && this.#passes(sub, m, nowUs)) chosen.push({ m, sim });
      }
      const last = hits[hits.length - 1];
      if (
        chosen.length === sub.maxPushes ||
        hits.length < k ||
        !last ||
        last.sim < sub.threshold ||
        k >= w.vectors.size
      )
        break;
    }
    chosen.sort((a, b) => b.sim - a.sim);
    return chosen.map(({ m, sim }) => this.#push(sub, m, sim, offset, nowUs));
  }

  /**
   * Durable new or changed memories (the records of one commit), offered to their workspaces' open
   * subscriptions: the pushes to make, by workspace. Superseded and expired memories are not offered.
   */
  offerWrites(
    state: ShardState,
    records: readonly LiveRecord[],
    nowUs: number,
  ): Array<{ ws: string; pushes: Push[] }> {
    if (!this.active) return [];
    const byWs = new Map<string, MemoryRecord[]>();
    for (const r of records) {
      if ((r.t !== 'put' && r.t !== 'unsource') || r.m.supersededBy !== null) continue;
      const m = state.workspaces.get(r.ws)?.memories.get(r.m.id);
      if (m && !isExpired(m, nowUs)) byWs.set(r.ws, [...(byWs.get(r.ws) ?? []), m]);
    }
    const out: Array<{ ws: string; pushes: Push[] }> = [];
    for (const [ws, memories] of byWs) {
      const w = state.workspaces.get(ws);
      const pushes = w ? this.matchWrites(w, memories, nowUs) : [];
      if (pushes.length > 0) out.push({ ws, pushes });
    }
    return out;
  }

  /** Checks freshly written memories against every open subscription's recent chunks (or only subscription `only`'s). */
  matchWrites(
    w: Workspace,
    memories: readonly MemoryRecord[],
    nowUs: number,
    only: number | null = null,
  ): Push[] {
    const subs = this.#byWorkspace.get(w.slug);
    if (!subs) return [];
    const out: Push[] = [];
    for (const sub of subs.values()) {
      if (only !== null && sub.id !== only) continue;
      const found: Array<{ m: MemoryRecord; sim: number; offset: number }> = [];
      for (const m of memories) {
        if (
          m.supersededBy !== null ||
          (sub.entityId !== null && m.entityId !== sub.entityId) ||
          !this.#passes(sub, m, nowUs)
        )
          continue;
        let best: { sim: number; offset: number } | null = null;
        for (const c of sub.recent) {
          const sim = dot(c.vector, m.embedding);
          if (sim >= sub.threshold && (!best || sim > best.sim)) best = { sim, offset: c.offset };
        }
        if (best) found.push({ m, ...best });
      }
      if (found.length > sub.maxPushes) found.sort((a, b) => b.sim - a.sim).length = sub.maxPushes;
      for (const f of found) out.push(this.#push(sub, f.m, f.sim, f.offset, nowUs));
    }
    return out;
  }

  #passes(sub: Sub, m: MemoryRecord, nowUs: number): boolean {
    if (sub.pushed.has(m.id) || !sub.kinds.includes(m.kind) || !sub.accepts(m)) return false;
    return sub.timeScopeUs === null || m.occurredAt >= nowUs - sub.timeScopeUs;
  }

  #push(sub: Sub, m: MemoryRecord, sim: number, offset: number, nowUs: number): Push {
    sub.pushed.add(m.id);
    if (sub.pushed.size > PUSHED_MAX) sub.pushed.delete(sub.pushed.values().next().value as string);
    // The embedding rides along: gRPC pushes carry Memory.embedding like every other RPC.
    return {
      subscription: sub.id,
      memory: view(m, true),
      confidence: sim,
      score: compositeScore(m, sim, DEFAULT_WEIGHTS, nowUs),
      chunkOffset: offset,
    };
  }
}
