/**
 * @module shard/access-log — accesses by recall and prime. Counters change in place at once; the
 * log records (absolute values, so replay is idempotent) are produced at most once a second, off
 * the request path; a crash may lose about a second of them, never a memory.
 */
import type { MemoryRecord } from '../model/memory.ts';
import type { PlainRecord } from './store/records.ts';
import type { ShardState } from './store/apply.ts';

export class AccessLog {
  readonly #dirty = new Map<string, Set<string>>();

  touch(ws: string, memories: readonly MemoryRecord[], nowUs: number): void {
    if (memories.length === 0) return;
    let ids = this.#dirty.get(ws);
    if (!ids) {
      ids = new Set();
      this.#dirty.set(ws, ids);
    }
    for (const m of memories) {
      m.accessCount += 1;
      m.lastAccessedAt = nowUs;
      ids.add(m.id);
    }
  }

  /** The records for everything touched since the last call. */
  drain(state: ShardState): PlainRecord[] {
    const records: PlainRecord[] = [];
    for (const [ws, ids] of this.#dirty) {
      const w = state.workspaces.get(ws);
      for (const id of ids) {
        const m = w?.memories.get(id);
        if (m) records.push({ t: 'access', ws, id, n: m.accessCount, at: m.lastAccessedAt });
      }
    }
    this.#dirty.clear();
    return records;
  }
}
