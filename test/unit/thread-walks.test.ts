/**
 * Recall's walks along the event order (shard/ops/recall-source.ts `neighbours` and `thread`),
 * which read the orders' tags and times instead of records: on random workspaces (entities, kinds,
 * conversations, gaps, event times apart from write times, memories written out of order, revised,
 * superseded and deleted, enough deletes to compact the order) they give exactly what the same
 * rules give walked over the records themselves, for candidates asked in any order within one recall.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/analysis/cluster.ts';
import { eventOrder, type MemoryKind, type MemoryRecord } from '../../src/model/memory.ts';
import { recallSource } from '../../src/shard/ops/recall-source.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { memoryRecord } from '../helpers/memory-record.ts';

const MINUTE_US = 60_000_000;
const GAP_US = 3_600_000_000;
const START = Date.parse('2026-11-25T12:00:00Z') * 1000;

/** Seeded (analysis/cluster.ts), so a failure can be replayed. */
const rng = mulberry32;

/**
 * The rules as they are written over records: the live memories a memory walks among (a turn: its
 * conversation's; another: those that are not turns), sorted by event time, walked one by one.
 */
class Reference {
  readonly memo = new Map<string, string | null>();
  constructor(private readonly w: Workspace) {}

  /** The order walked: a turn's conversation, else (`entityId` given) an entity's or the workspace's live memories. */
  #sorted(m: MemoryRecord, entityId: string | null | undefined): MemoryRecord[] {
    const live = [...this.w.memories.values()].filter((n) => n.supersededBy === null);
    const mine =
      m.conversationId !== null
        ? live.filter((n) => n.conversationId === m.conversationId)
        : live.filter((n) => entityId === undefined || n.entityId === entityId);
    return mine.sort(eventOrder);
  }

  /** Whether `n` counts as a member of `m`'s stretch. */
  #belongs(m: MemoryRecord, n: MemoryRecord): boolean {
    if (m.conversationId !== null) return n.conversationId === m.conversationId;
    return n.conversationId === null && n.kind === m.kind && n.entityId === m.entityId;
  }

  neighbours(m: MemoryRecord): string[] {
    const ids = this.#sorted(m, undefined);
    const at = ids.findIndex((n) => eventOrder(n, m) >= 0);
    const from = at === -1 ? ids.length : at;
    const out: string[] = [];
    for (const [start, step] of [
      [from - 1, -1],
      [ids[from]?.id === m.id ? from + 1 : from, 1],
    ] as const) {
      let seen = 0;
      for (let i = start; i >= 0 && i < ids.length && seen < 4; i += step) {
        seen += 1;
        const n = ids[i] as MemoryRecord;
        if (this.#belongs(m, n)) {
          if (Math.abs(n.occurredAt - m.occurredAt) <= GAP_US) out.push(n.id);
          break;
        }
      }
    }
    return out;
  }

  thread(m: MemoryRecord): string | null {
    if (this.memo.has(m.id)) return this.memo.get(m.id) ?? null;
    // A turn is walked in its conversation, a memory with an entity in that entity's order, another in the whole order.
    const held =
      m.conversationId !== null ||
      m.entityId === null ||
      [...this.w.memories.values()].some(
        (n) => n.supersededBy === null && n.entityId === m.entityId,
      );
    const ids = !held ? [] : this.#sorted(m, m.entityId === null ? undefined : m.entityId);
    const at = ids.findIndex((n) => eventOrder(n, m) >= 0);
    const from = at === -1 ? ids.length : at;
    const members = [m.id];
    const walk = (
      start: number,
      direction: -1 | 1,
    ): { ended: boolean; first: string; joined?: string | null } => {
      let last = m;
      let scanned = 0;
      for (let i = start; i >= 0 && i < ids.length; i += direction) {
        if (++scanned > 64) return { ended: false, first: last.id };
        const n = ids[i] as MemoryRecord;
        if (!this.#belongs(m, n)) continue;
        if (Math.abs(last.occurredAt - n.occurredAt) > GAP_US)
          return { ended: true, first: last.id };
        if (this.memo.has(n.id))
          return { ended: true, first: last.id, joined: this.memo.get(n.id) ?? null };
        members.push(n.id);
        last = n;
      }
      return { ended: true, first: last.id };
    };
    const back = walk(from - 1, -1);
    const ahead =
      back.joined === undefined && back.ended
        ? walk(ids[from]?.id === m.id ? from + 1 : from, 1)
        : back;
    const key =
      back.joined !== undefined
        ? back.joined
        : ahead.joined !== undefined
          ? ahead.joined
          : back.ended && ahead.ended
            ? back.first
            : null;
    for (const id of members) this.memo.set(id, key);
    return key;
  }
}

/** A workspace of `n` memories in streams with pauses, then revisions, supersessions and deletes. */
function randomWorkspace(seed: number, n: number, deletes: number): Workspace {
  const r = rng(seed);
  const w = new Workspace('walks');
  const entities = [null, null, 'ada', 'bo'];
  const kinds: MemoryKind[] = ['episode', 'episode', 'episode', 'revision', 'insight'];
  const conversations = [null, null, null, 'chat-1', 'chat-2'];
  let t = START;
  const written: MemoryRecord[] = [];
  for (let i = 0; i < n; i++) {
    t += r() < 0.08 ? 2 * GAP_US : r() < 0.03 ? GAP_US : MINUTE_US * (1 + Math.floor(r() * 5));
    // Some memories are written with a time before the newest (an import): inserted mid-order;
    // some happened well before they were written (back-filled history).
    const at = r() < 0.05 ? t - Math.floor(r() * 200) * MINUTE_US : t;
    const occurredAt = r() < 0.1 ? at - Math.floor(r() * 400) * MINUTE_US : at;
    const m = memoryRecord(`memory ${i}`, at, {
      occurredAt,
      entityId: entities[Math.floor(r() * entities.length)] ?? null,
      kind: kinds[Math.floor(r() * kinds.length)] as MemoryKind,
      conversationId: conversations[Math.floor(r() * conversations.length)] ?? null,
    });
    w.put(m);
    written.push(m);
  }
  for (let i = 0; i < n / 10; i++) {
    const m = written[Math.floor(r() * written.length)] as MemoryRecord;
    if (!w.memories.has(m.id)) continue;
    // Revised in place (a new kind) or superseded (no longer live).
    w.put(r() < 0.5 ? { ...m, kind: 'revision' } : { ...m, supersededBy: 'f'.repeat(32) });
  }
  for (let i = 0; i < deletes; i++)
    w.delete((written[Math.floor(r() * written.length)] as MemoryRecord).id);
  return w;
}

function check(w: Workspace, seed: number): void {
  const r = rng(seed);
  const all = [...w.memories.values()];
  for (let round = 0; round < 6; round++) {
    const source = recallSource(w);
    const reference = new Reference(w);
    const candidates = all.filter(() => r() < 0.3).sort(() => r() - 0.5);
    // Ask some twice: the second answer comes from what the recall already found.
    for (const m of [...candidates, ...candidates.slice(0, 5)]) {
      expect(source.thread(m), `thread of ${m.id}`).toBe(reference.thread(m));
      expect(
        source.neighbours(m).map((x) => x.id),
        `neighbours of ${m.id}`,
      ).toEqual(reference.neighbours(m));
    }
  }
}

describe('walks along the event order', () => {
  it('give what the rules give over the records, for random workspaces and candidates in any order', () => {
    for (const seed of [1, 2, 3, 4, 5]) check(randomWorkspace(seed, 400, 40), seed);
  });

  it('stay exact after the order compacts its deleted ids', () => {
    // Over 1,024 deleted ids and a quarter of the order: the arrays are rewritten together.
    check(randomWorkspace(7, 4000, 2600), 7);
  });

  it('a stream without pauses longer than the walk has no thread; a bounded one is keyed by its first memory', () => {
    const w = new Workspace('walks');
    const long = Array.from({ length: 200 }, (_, i) =>
      memoryRecord(`long ${i}`, START + i * MINUTE_US),
    );
    const short = Array.from({ length: 5 }, (_, i) =>
      memoryRecord(`short ${i}`, START + 200 * MINUTE_US + 3 * GAP_US + i * MINUTE_US),
    );
    for (const m of [...long, ...short]) w.put(m);
    const source = recallSource(w);
    expect(source.thread(long[100] as MemoryRecord)).toBeNull();
    expect(source.thread(short[3] as MemoryRecord)).toBe((short[0] as MemoryRecord).id);
    // Deleting the first memory of the session moves the key to the next one (a new recall).
    w.delete((short[0] as MemoryRecord).id);
    expect(recallSource(w).thread(short[3] as MemoryRecord)).toBe((short[1] as MemoryRecord).id);
  });
});
