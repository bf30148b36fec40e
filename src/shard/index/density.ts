/**
 * @module shard/index/density — how crowded the stretch of embedding space a memory was written into
 * is: the mean of its DENSITY_K highest cosines with the last WINDOW.n live memories written before it
 * (ids sort by creation). Records written from one template (a daily health summary, a shipping notice, "haha
 * yes!") sit in crowds and come close to many cues; hybrid recall takes part of a memory's density
 * off its cosine (recall/hybrid.ts). Only earlier memories count, so a memory's density never
 * changes once computed, whenever that is (at write, in the background, after a restart): it is a
 * function of what came before it. The memo per workspace is derived state that snapshots keep
 * (a stored memory's `density`), so a restart does not compute a million of them again.
 */
import type { MemoryRecord } from '../../model/memory.ts';
import type { VectorIndex } from './vector-index.ts';

/** What a density reads of its workspace: the vector index, and the ids written before a memory. */
export interface Earlier {
  vectors: VectorIndex;
  /** How many ids sort before `id` (deleted ones not yet compacted may count). */
  countBefore(id: string): number;
  /** The ids sorting before `id`, newest first. */
  idsBefore(id: string): Iterable<string>;
}

/** How many of the nearest earlier memories a density averages (the usual k of CSLS, Conneau et al. 2018). */
export const DENSITY_K = 10;
/**
 * How many of the memories written just before a memory its density compares it with (an exact
 * scan: ~0.1 ms quiet, ~0.5 ms at load 9 on two cores). Measured on LifeBench development (8,700
 * records a person) with recall-lab: R@10 0.694 at 512, 0.696 at 2,048, 0.698 at 8,192, at 1/7 and
 * 1/16 of the cost; LoCoMo's conversations are shorter than any of them.
 */
export const WINDOW = { n: 512 };

function* take(ids: Iterable<string>, n: number): Generator<string> {
  let i = 0;
  for (const id of ids) {
    if (i++ >= n) return;
    yield id;
  }
}

export class Densities {
  readonly #of = new Map<string, number | null>();
  /** Ids written since the background last looked, whose density may still be missing. */
  #queue: string[] = [];

  get backlog(): number {
    return this.#queue.length;
  }

  /** A memory written (live): its density is computed later, in the background or when asked for. */
  written(id: string): void {
    this.#queue.push(id);
  }

  /** The density of `id` when it is known (null: nothing before it), without computing it. */
  known(id: string): number | null | undefined {
    return this.#of.get(id);
  }

  /** A density read back from a snapshot (of the memory's current vector: a later change forgets it). */
  restore(id: string, density: number): void {
    this.#of.set(id, density);
  }

  /** A memory removed or changed: its memo goes (a changed vector is another memory's neighbourhood). */
  forget(id: string): void {
    this.#of.delete(id);
  }

  /**
   * The density of `m` (null when nothing was written before it), computed once and remembered.
   * `m` must be live in the workspace `w` reads.
   */
  of(m: MemoryRecord, w: Earlier): number | null {
    const known = this.#of.get(m.id);
    if (known !== undefined) return known;
    const d = densityOf(m, w);
    this.#of.set(m.id, d);
    return d;
  }

  /** Computes queued densities for about `budgetMs`; true when some remain. */
  fillSome(
    budgetMs: number,
    memory: (id: string) => MemoryRecord | undefined,
    w: Earlier,
  ): boolean {
    const start = performance.now();
    let i = 0;
    for (; i < this.#queue.length && performance.now() - start < budgetMs; i++) {
      const m = memory(this.#queue[i] as string);
      if (m !== undefined && m.supersededBy === null) this.of(m, w);
    }
    this.#queue = i >= this.#queue.length ? [] : this.#queue.slice(i);
    return this.#queue.length > 0;
  }
}

function densityOf(m: MemoryRecord, w: Earlier): number | null {
  if (w.countBefore(m.id) < DENSITY_K) return null;
  const near = w.vectors.search(m.embedding, {
    k: DENSITY_K,
    ef: DENSITY_K,
    only: take(w.idsBefore(m.id), WINDOW.n),
  });
  if (near.length < DENSITY_K) return null;
  let sum = 0;
  for (const n of near) sum += n.sim;
  return sum / near.length;
}
