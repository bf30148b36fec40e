/**
 * shard/contradictions: which earlier memories a new one is compared with. Beside its nearest by
 * vector, the memories sharing most of its words (the workspace's lexical index) are compared, so
 * a contradiction is found even when six other memories sit closer to the new one by vector (a
 * workspace full of similar memories; a negation moving the embedding). Embeddings are set by hand
 * here to place the memories exactly.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { checkContradictions, ContradictionChecker } from '../../src/shard/contradictions.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import type { LiveRecord } from '../../src/shard/store/records.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { until } from '../helpers/wait.ts';

const DIM = 384;
const NOW = Date.parse('2026-11-25T12:00:00Z') * 1000;

/** The unit vector along axis 0, tilted towards `axis` by `tilt`. */
function vector(axis: number, tilt: number): Float32Array {
  const v = new Float32Array(DIM);
  v[0] = 1;
  if (axis > 0) v[axis] = tilt;
  const norm = Math.hypot(1, axis > 0 ? tilt : 0);
  return v.map((x) => x / norm);
}

let seq = 0;
function memory(content: string, embedding: Float32Array, at: number): MemoryRecord {
  const id = `${Math.floor(at / 1000)
    .toString(16)
    .padStart(12, '0')}${(++seq).toString(16).padStart(20, '0')}`;
  return {
    id,
    content,
    importance: 0.5,
    context: {},
    entityId: null,
    kind: 'episode',
    createdAt: at,
    occurredAt: at,
    updatedAt: at,
    lastAccessedAt: at,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    speaker: null,
    conversationId: null,
    messageId: null,
    embedding,
  };
}

/** A workspace where the contradicted memory is only 7th nearest to the new one by vector (cosine 0.61). */
function crowded(): { w: Workspace; older: MemoryRecord; newer: MemoryRecord } {
  const w = new Workspace('c');
  const older = memory(
    'The Frankfurt server is running the nightly backup job',
    vector(7, 1.3),
    NOW - 10_000_000,
  );
  w.put(older);
  const others = [
    'Lunch on Friday was pasta',
    'The team meets on Tuesdays',
    'Maria prefers tea',
    'The office plants need water',
    'Parking is free after six',
    'The printer jams often',
  ];
  others.forEach((text, i) => {
    w.put(memory(text, vector(i + 1, 0.1), NOW - 9_000_000 + i));
  });
  const newer = memory(
    'The Frankfurt server is not running the nightly backup job',
    vector(0, 0),
    NOW,
  );
  w.put(newer);
  return { w, older, newer };
}

describe('contradiction candidates beyond the nearest by vector', () => {
  it('a memory sharing the words is compared though six others are nearer by vector', () => {
    const { w, older, newer } = crowded();
    const nearest = w.vectors.search(newer.embedding, { k: 7, ef: 64 }).map((n) => n.id);
    expect(nearest).not.toContain(older.id);
    const { records, found } = checkContradictions(w, [newer], NOW);
    expect(found).toBe(1);
    expect(records).toContainEqual(
      expect.objectContaining({
        t: 'edge',
        e: expect.objectContaining({
          source_id: newer.id,
          target_id: older.id,
          edge_type: 'contradicts',
          reason: expect.stringMatching(/^negation scope: /),
        }),
      }),
    );
  });

  it('a memory sharing words but about something else is not flagged', () => {
    const { w, newer } = crowded();
    w.put(memory('The Frankfurt server is not running the weekly report', vector(8, 1.3), NOW - 1));
    const { found } = checkContradictions(w, [newer], NOW);
    expect(found).toBe(1);
  });
});

describe('a value swapped about one entity', () => {
  const pair = (
    entityId: string | null,
  ): { w: Workspace; older: MemoryRecord; newer: MemoryRecord } => {
    const w = new Workspace('s');
    const older = { ...memory('Alice lives in Paris', vector(1, 0.5), NOW - 10_000_000), entityId };
    const newer = { ...memory('Alice lives in London', vector(1, 0.6), NOW), entityId };
    w.put(older);
    w.put(newer);
    return { w, older, newer };
  };

  it('leaves a pending candidate, not an edge, when both memories name the entity', () => {
    const { w, older, newer } = pair('alice');
    const { records, found } = checkContradictions(w, [newer], NOW);
    expect(found).toBe(1);
    expect(records).toEqual([
      expect.objectContaining({
        t: 'pending',
        p: expect.objectContaining({ reason: "swap: 'paris' versus 'london' about one entity" }),
      }),
    ]);
    expect(JSON.stringify(records)).toContain(older.id);
  });

  it('finds nothing when the memories name no entity', () => {
    const { w, newer } = pair(null);
    expect(checkContradictions(w, [newer], NOW).found).toBe(0);
  });
});

describe('ContradictionChecker gives way to requests', () => {
  it('ends its slice (past MIN_SLICE_MS) after the check during which a request arrived', async () => {
    const state = new ShardState();
    const w = state.workspace('c');
    const records: LiveRecord[] = [];
    for (let i = 0; i < 600; i++) {
      const m = memory(
        `Statement number ${i} about the backup job`,
        vector((i % 5) + 1, 0.2),
        NOW + i,
      );
      w.put(m);
      records.push({ t: 'put', ws: 'c', m });
    }
    // Turns of the event loop, counted in its check phase.
    let turns = 0;
    let done = false;
    const tick = (): void => {
      turns += 1;
      if (!done) setImmediate(tick);
    };
    tick();
    const asks: Array<{ backlog: number; turn: number }> = [];
    const checker: ContradictionChecker = new ContradictionChecker(state, {
      commit: async () => {},
      stopping: () => false,
      requestWaiting: () => {
        asks.push({ backlog: checker.backlog, turn: turns });
        return true;
      },
    });
    checker.enqueue(records);
    await until(() => checker.backlog === 0, {
      what: () => `the backlog checked (${checker.backlog} left, ${asks.length} asks)`,
      deadlineMs: 20_000,
      everyMs: 10,
    });
    done = true;
    expect(checker.backlog).toBe(0);
    // Requests keep coming (every look finds one), so each slice ends at its first look: the next
    // look comes at least a turn of the event loop later, with more of the backlog checked.
    expect(asks.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < asks.length; i++) {
      const [a, b] = [asks[i - 1], asks[i]] as [
        { backlog: number; turn: number },
        { backlog: number; turn: number },
      ];
      expect(b.turn).toBeGreaterThan(a.turn);
      expect(b.backlog).toBeLessThan(a.backlog);
    }
  }, 30_000);
});
