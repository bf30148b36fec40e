/**
 * @module shard/store/pending — a workspace's uncertain contradictions awaiting a verdict, by pending
 * id, also indexed by memory so that "is this pair already pending?" and "drop everything about a
 * forgotten memory" cost the memory's own candidates, not a scan of the whole set.
 */
import type { PendingContradiction } from '../../protocol/reflection.ts';

export class PendingContradictions {
  readonly #byId = new Map<string, PendingContradiction>();
  readonly #byMemory = new Map<string, Set<string>>();

  get size(): number {
    return this.#byId.size;
  }

  get(pendingId: string): PendingContradiction | undefined {
    return this.#byId.get(pendingId);
  }

  has(pendingId: string): boolean {
    return this.#byId.has(pendingId);
  }

  values(): IterableIterator<PendingContradiction> {
    return this.#byId.values();
  }

  set(p: PendingContradiction): void {
    this.delete(p.pending_id);
    this.#byId.set(p.pending_id, p);
    this.#link(p.memory_id_a, p.pending_id);
    this.#link(p.memory_id_b, p.pending_id);
  }

  delete(pendingId: string): boolean {
    const p = this.#byId.get(pendingId);
    if (!p) return false;
    this.#byId.delete(pendingId);
    this.#unlink(p.memory_id_a, pendingId);
    this.#unlink(p.memory_id_b, pendingId);
    return true;
  }

  /** True when a candidate about the pair (either order) is pending. */
  between(a: string, b: string): boolean {
    const ids = this.#byMemory.get(a);
    if (!ids) return false;
    for (const pid of ids) {
      const p = this.#byId.get(pid);
      if (p && (p.memory_id_a === b || p.memory_id_b === b)) return true;
    }
    return false;
  }

  /** Drops every candidate that involves the memory. */
  deleteMemory(id: string): void {
    for (const pid of [...(this.#byMemory.get(id) ?? [])]) this.delete(pid);
  }

  #link(memoryId: string, pendingId: string): void {
    const set = this.#byMemory.get(memoryId);
    if (set) set.add(pendingId);
    else this.#byMemory.set(memoryId, new Set([pendingId]));
  }

  #unlink(memoryId: string, pendingId: string): void {
    const set = this.#byMemory.get(memoryId);
    if (!set) return;
    set.delete(pendingId);
    if (set.size === 0) this.#byMemory.delete(memoryId);
  }
}
