/**
 * @module native-bench/experiments/context-view — a second dense view of each turn, the turn before
 * it then the turn, for recall-lab's `--ctx-view W` (measured and dropped: docs/benchmarks.md).
 */
import { dot } from '../../src/recall/vector.ts';
import type { VectorIndex } from '../../src/shard/index/vector-index.ts';
import { turnId, type TurnMemory } from '../lib/retrieval-data.ts';

/**
 * `--ctx-view`: the text of turn i's second view, the turn before it then the turn, when the turn
 * before is in the same conversation within the neighbour gap (an hour); null for a first turn.
 */
export function contextText(turns: readonly TurnMemory[], i: number): string | null {
  const t = turns[i] as TurnMemory;
  const before = turns[i - 1];
  if (before === undefined || t.atMs - before.atMs > 3_600_000) return null;
  return `${before.content}\n${t.content}`;
}

/**
 * `--ctx-view W` (`weight`): the workspace's dense search (after its densities are computed, so they read the
 * turn view alone) becomes the union of the graph's nearest turns and an exact scan's nearest
 * context views, each memory once, its similarity max(cos(turn), W × cos(context view)). The
 * cosine a feature reads for a candidate outside that list stays the turn's own.
 */
export function withContextView(
  weight: number,
  index: VectorIndex,
  turns: readonly TurnMemory[],
  vectors: readonly Float32Array[],
  ctxOf: ReadonlyArray<Float32Array | undefined>,
): void {
  const turnOf = new Map<string, Float32Array>();
  const views: Array<{ id: string; v: Float32Array }> = [];
  turns.forEach((t, i) => {
    const id = turnId(t, i);
    turnOf.set(id, vectors[i] as Float32Array);
    const v = ctxOf[i];
    if (v) views.push({ id, v });
  });
  const own = index.search.bind(index);
  index.search = (query, opts) => {
    const only = opts.only ? new Set(opts.only) : null;
    const hits = own(query, only ? { ...opts, only } : opts);
    const scan = views
      .filter(({ id }) => (only === null || only.has(id)) && (opts.filter?.(id) ?? true))
      .map(({ id, v }) => ({ id, sim: dot(query, v) }))
      .sort((a, b) => b.sim - a.sim)
      .slice(0, opts.k);
    const ids = new Set([...hits.map((h) => h.id), ...scan.map((h) => h.id)]);
    const sims = new Map(scan.map((h) => [h.id, weight * h.sim]));
    return [...ids]
      .map((id) => ({
        id,
        sim: Math.max(dot(query, turnOf.get(id) as Float32Array), sims.get(id) ?? -1),
      }))
      .sort((a, b) => b.sim - a.sim)
      .slice(0, opts.k);
  };
}
