/**
 * Issue 26 item 6: what a forget does grows with what is forgotten, not with the store. Checked
 * by counting (the sources an insight rewrite reads, the sources a log record names) and by order
 * (a request answered between slices of a long criteria scan), never by timing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { distinguishingTerms } from '../../src/analysis/summarize.ts';
import {
  INCREMENTAL_MIN_SOURCES,
  insightsAfterLoss,
  rewrittenInsight,
} from '../../src/shard/ops/insight-sources.ts';
import {
  encodeRecord,
  toStored,
  type LiveRecord,
  type LogRecord,
  type StoredMemory,
} from '../../src/shard/store/records.ts';
import { Wal } from '../../src/shard/persist/wal.ts';
import { Shard } from '../../src/shard/shard.ts';
import { applyLive, applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import type { Workspace } from '../../src/shard/store/workspace.ts';
import { storedMemory } from '../helpers/memory-record.ts';

const DIM = 16;
const WORDS = [
  'garden',
  'tomato',
  'watering',
  'compost',
  'basil',
  'harvest',
  'seedling',
  'trellis',
  'mulch',
  'pepper',
];

/** A seeded generator, so every run sees the same vectors and texts. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function stored(
  id: string,
  content: string,
  vector: Float32Array,
  extra: Partial<StoredMemory> = {},
): StoredMemory {
  return storedMemory(id, content, { embedding: new Uint8Array(vector.buffer), ...extra });
}

const idOf = (i: number): string => i.toString(16).padStart(32, '0');

/** A workspace of `n` episodes on one theme and one extractive insight drawn from all of them. */
function themed(n: number): { state: ShardState; w: Workspace; insight: string } {
  const r = rng(n);
  const state = new ShardState();
  const sources: string[] = [];
  for (let i = 1; i <= n; i++) {
    const v = new Float32Array(DIM).map(() => r() + 0.2);
    const words = Array.from({ length: 4 }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
    applyRecord(state, { t: 'put', ws: 'w', m: stored(idOf(i), `Note ${i}: ${words} today.`, v) });
    sources.push(idOf(i));
  }
  const insight = idOf(n + 1);
  const w = state.workspace('w');
  const draft: MemoryRecord = {
    ...(w.memories.get(idOf(1)) as MemoryRecord),
    id: insight,
    kind: 'insight',
    sourceMemoryIds: sources,
  };
  applyRecord(state, { t: 'put', ws: 'w', m: toStored(rewrittenInsight(w, draft, sources, 2)) });
  for (const s of sources)
    applyRecord(state, {
      t: 'edge',
      ws: 'w',
      e: {
        source_id: insight,
        target_id: s,
        edge_type: 'insight_from',
        confidence: 1,
        timestamp_us: 2,
      },
    });
  return { state, w, insight };
}

/** Forgets `ids` as ops/forget does (the insight's records, then the deletions); returns the sources read. */
function lose(
  state: ShardState,
  w: Workspace,
  ids: string[],
  now: number,
): { visited: number; scored: number; records: LiveRecord[] } {
  const loss = insightsAfterLoss(w, 'w', new Set(ids), { now, criteria: {} });
  for (const r of [...ids.map((id): LiveRecord => ({ t: 'del', ws: 'w', id })), ...loss.records])
    applyLive(state, r);
  return { visited: loss.visited, scored: loss.scored, records: loss.records };
}

describe('an insight losing sources', () => {
  it('costs the sources lost, at any number of sources kept', () => {
    const visits: number[] = [];
    for (const n of [2 * INCREMENTAL_MIN_SOURCES, 8 * INCREMENTAL_MIN_SOURCES]) {
      const { state, w } = themed(n);
      // The first loss builds the running totals (one pass); the next ones read what they lose.
      lose(state, w, [idOf(1)], 10);
      const { visited, records } = lose(state, w, [idOf(2), idOf(3)], 11);
      visits.push(visited);
      // The log record names the sources lost, not the thousands kept.
      expect(records).toHaveLength(1);
      const r = records[0];
      expect(r?.t).toBe('unsource');
      if (r?.t === 'unsource') {
        expect(r.lost).toEqual([idOf(2), idOf(3)]);
        // As written to the log: the sources kept are not in it.
        const frame = encodeRecord(r);
        expect(
          frame.t === 'unsource' ? frame.m.sourceMemoryIds : 'not an unsource frame',
        ).toBeNull();
      }
    }
    // Two lost plus a bounded set of candidates to quote, the same at 1k and 4k sources.
    expect(visits[0]).toBeLessThanOrEqual(2 + 24);
    expect(visits[1]).toBe(visits[0]);
  });

  it('a small insight (rewritten from every source kept) is logged as the sources lost too, and replays to the same sources', () => {
    const { state, w, insight } = themed(40);
    const before = w.memories.get(insight) as MemoryRecord;
    const { records } = lose(state, w, [idOf(7), idOf(9)], 10);
    expect(records.map((r) => r.t)).toEqual(['unsource']);
    const r = records[0];
    if (r?.t !== 'unsource') throw new Error('not an unsource record');
    expect(r.lost).toEqual([idOf(7), idOf(9)]);
    expect((w.memories.get(insight) as MemoryRecord).sourceMemoryIds).toEqual(
      (before.sourceMemoryIds ?? []).filter((s) => s !== idOf(7) && s !== idOf(9)),
    );
  });

  it('writes the same insight as a rewrite from every remaining source', () => {
    const n = 2 * INCREMENTAL_MIN_SOURCES;
    const { state, w, insight } = themed(n);
    lose(state, w, [idOf(1)], 10);
    const gone = [idOf(5), idOf(6), idOf(7)];
    const before = w.memories.get(insight) as MemoryRecord;
    const remaining = (before.sourceMemoryIds ?? []).filter((s) => !gone.includes(s));
    const full = rewrittenInsight(w, before, remaining, 11);
    lose(state, w, gone, 11);
    const after = w.memories.get(insight) as MemoryRecord;
    expect(after.sourceMemoryIds).toEqual(remaining);
    expect(after.context['source_count']).toBe(n - 4);
    expect(after.context['tags']).toEqual(
      distinguishingTerms(
        remaining.map((id) => (w.memories.get(id) as MemoryRecord).content),
        remaining.map((id) => (w.memories.get(id) as MemoryRecord).content),
      ),
    );
    expect(after.content).toBe(full.content);
    for (const id of gone) expect(after.content).not.toContain(`Note ${parseInt(id, 16)}:`);
    let cos = 0;
    for (let i = 0; i < DIM; i++)
      cos += (after.embedding[i] as number) * (full.embedding[i] as number);
    expect(cos).toBeGreaterThan(0.99999);
    expect(after.logicalClock).toBe(before.logicalClock + 1);
  });

  it('one loss after another quotes what a rewrite from every source would, scanning the sources seldom', () => {
    const n = 2 * INCREMENTAL_MIN_SOURCES;
    const { state, w, insight } = themed(n);
    lose(state, w, [idOf(1)], 10);
    const losses = 60;
    let scored = 0;
    for (let i = 0; i < losses; i++) {
      // The sources nearest the centroid go first: each such loss changes what is quoted.
      const before = w.memories.get(insight) as MemoryRecord;
      const quoted = (before.sourceMemoryIds ?? []).find((id) =>
        before.content.includes(`Note ${parseInt(id, 16)}:`),
      );
      const gone = i % 2 === 0 && quoted ? quoted : idOf(2 + i);
      const remaining = (before.sourceMemoryIds ?? []).filter((s) => s !== gone);
      const full = rewrittenInsight(w, before, remaining, 11 + i);
      scored += lose(state, w, [gone], 11 + i).scored;
      expect((w.memories.get(insight) as MemoryRecord).content, `loss ${i + 1}`).toBe(full.content);
    }
    // Most losses rescore the nearest sources kept (96), not the ~1,000 sources.
    expect(scored).toBeLessThan((losses * n) / 4);
  });

  it('a source written again since the totals were built is counted as it is now', () => {
    const { state, w, insight } = themed(2 * INCREMENTAL_MIN_SOURCES);
    lose(state, w, [idOf(1)], 10);
    // Revised in place (as revise keeps the live id): new text and vector.
    const v = new Float32Array(DIM).fill(0);
    v[0] = 1;
    applyRecord(state, {
      t: 'put',
      ws: 'w',
      m: stored(idOf(20), 'Note 20: pepper pepper trellis mulch today.', v),
    });
    const before = w.memories.get(insight) as MemoryRecord;
    const remaining = (before.sourceMemoryIds ?? []).filter((s) => s !== idOf(21));
    const full = rewrittenInsight(w, before, remaining, 11);
    lose(state, w, [idOf(21)], 11);
    const after = w.memories.get(insight) as MemoryRecord;
    expect(after.content).toBe(full.content);
    // One source of ~1000 moves the centroid by ~1e-3; summation order alone by ~1e-7.
    const drift = Math.max(
      ...Array.from(full.embedding, (x, i) => Math.abs(x - (after.embedding[i] as number))),
    );
    expect(drift).toBeLessThan(1e-5);
  });

  it('looks for the statements to quote among the sources kept, not through the rest of the workspace', () => {
    const { state, w, insight } = themed(2 * INCREMENTAL_MIN_SOURCES);
    // Sixteen times as many memories that are no source, nearer the theme than any source, in the graph.
    const r = rng(99);
    const others = new Set<string>();
    for (let i = 1; i <= 16 * INCREMENTAL_MIN_SOURCES; i++) {
      others.add(idOf(1_000_000 + i));
      applyRecord(state, {
        t: 'put',
        ws: 'w',
        m: stored(
          idOf(1_000_000 + i),
          `Other ${i}.`,
          new Float32Array(DIM).map(() => r() + 0.6),
        ),
      });
    }
    while (w.vectors.indexSome(1000));
    const examined: string[] = [];
    const search = w.vectors.search.bind(w.vectors);
    w.vectors.search = (query, opts) => {
      const filter = opts.filter;
      const counted = (id: string): boolean => {
        examined.push(id);
        return filter === undefined || filter(id);
      };
      return search(query, { ...opts, filter: counted });
    };
    lose(state, w, [idOf(1)], 10);
    const after = w.memories.get(insight) as MemoryRecord;
    expect(after.content).toContain('Note ');
    expect(after.content).not.toContain('Other ');
    // Each source kept is looked at once at most; none of the others.
    expect(examined.filter((id) => others.has(id))).toEqual([]);
    expect(examined.length).toBeLessThanOrEqual(2 * INCREMENTAL_MIN_SOURCES - 1);
  });

  it('replays from the log to the same state (the unsource record applied to the insight as it was)', () => {
    const { state, w, insight } = themed(2 * INCREMENTAL_MIN_SOURCES);
    const { records } = lose(state, w, [idOf(9)], 10);
    const copy = themed(2 * INCREMENTAL_MIN_SOURCES);
    const frames = records.map(encodeRecord);
    for (const r of [{ t: 'del', ws: 'w', id: idOf(9) } as LogRecord, ...frames, ...frames])
      applyRecord(copy.state, r);
    const a = w.memories.get(insight) as MemoryRecord;
    const b = copy.w.memories.get(insight) as MemoryRecord;
    expect(b.sourceMemoryIds).toEqual(a.sourceMemoryIds);
    expect(b.content).toBe(a.content);
  });
});

describe('a forget by criteria over a large workspace', () => {
  const dirs: string[] = [];
  const shards: Shard[] = [];
  afterEach(async () => {
    for (const s of shards.splice(0)) await s.shutdown();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('lets a get through between the slices of its scan', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-forget-cost-'));
    dirs.push(dir);
    const wal = new Wal({ dir, seq: 1, durability: 'os' });
    const n = 100_000;
    for (let at = 1; at <= n; at += 10_000) {
      await wal.append(
        Array.from(
          { length: 10_000 },
          (_, i): LogRecord => ({
            t: 'put',
            ws: 'w',
            m: stored(idOf(at + i), `memory ${at + i}`, new Float32Array(4)),
          }),
        ),
      );
    }
    await wal.close();
    const shard = new Shard({
      shard: 0,
      dir,
      durability: 'os',
      snapshotIntervalS: 3600,
      snapshotWalBytes: 1 << 30,
      eraseWithinS: 60,
    });
    shards.push(shard);
    const done: string[] = [];
    // Matches nothing, so the scan reads all 100k memories (tens of ms): it must not do so in one go.
    const forgetting = shard
      .handle('forget', 'w', { memoryKind: 'insight' })
      .then((r) => done.push(`forget ${r.forgotten_count}`));
    const getting = new Promise((resolve) => setImmediate(resolve))
      .then(() => shard.handle('get', 'w', { id: idOf(7), withEmbedding: false }))
      .then((m) => done.push(`get ${m.content}`));
    await Promise.all([forgetting, getting]);
    expect(done).toEqual(['get memory 7', 'forget 0']);
  });
});
