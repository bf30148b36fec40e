/**
 * @module verbs/activity-log — the activity log's ring: the newest {@link ACTIVITY_CAPACITY}
 * entries in this process, each with a sequence number that pages survive (newest first, older
 * than a cursor). What goes in and how it is listed: verbs/activity.
 */
import type { ActivityAction } from '../model/activity.ts';

export const ACTIVITY_CAPACITY = 10_000;
/** Memory ids an entry keeps (a large import keeps the first ones and its count). */
const IDS_KEPT = 20;

export interface ActivityEntry {
  seq: number;
  atUs: number;
  action: ActivityAction;
  workspace: string;
  keyId: string | null;
  keyLabel: string | null;
  /** How many memories (or keys) the change touched. */
  count: number;
  memoryIds: string[];
  /** What else says what happened (criteria, a key id, a file count), never memory content. */
  detail: string | null;
}

export class ActivityLog {
  readonly #ring: Array<ActivityEntry | undefined>;
  #next = 1;

  constructor(capacity = ACTIVITY_CAPACITY) {
    this.#ring = new Array<ActivityEntry | undefined>(capacity);
  }

  get capacity(): number {
    return this.#ring.length;
  }

  add(e: Omit<ActivityEntry, 'seq'>): void {
    const seq = this.#next++;
    this.#ring[seq % this.#ring.length] = { ...e, seq, memoryIds: e.memoryIds.slice(0, IDS_KEPT) };
  }

  /** Entries older than `before` (a seq; null: from the newest), newest first, that `keep` accepts. */
  page(
    before: number | null,
    limit: number,
    keep: (e: ActivityEntry) => boolean,
  ): { entries: ActivityEntry[]; next: number | null } {
    const out: ActivityEntry[] = [];
    const newest = this.#next - 1;
    const oldest = Math.max(1, this.#next - this.#ring.length);
    for (let seq = Math.min(newest, before === null ? newest : before - 1); seq >= oldest; seq--) {
      const e = this.#ring[seq % this.#ring.length];
      if (!e || e.seq !== seq || !keep(e)) continue;
      if (out.length === limit) return { entries: out, next: out[out.length - 1]?.seq ?? null };
      out.push(e);
    }
    return { entries: out, next: null };
  }
}
