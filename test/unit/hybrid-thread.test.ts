/**
 * Threads in hybrid similarity (recall/hybrid.ts `thread`, RecallSource.thread): the memories a
 * conversation's neighbour rule chains together form a thread, and a thread's best match lifts its
 * other members, beyond the memory's immediate neighbours.
 */
import { describe, expect, it } from 'vitest';
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { HYBRID_WEIGHTS, hybridRelevance } from '../../src/recall/hybrid.ts';
import { runRecall } from '../../src/recall/recall.ts';
import { DEFAULT_WEIGHTS, type RecallInput } from '../../src/recall/types.ts';
import { recallSource } from '../../src/shard/ops/recall-source.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { memoryRecord } from '../helpers/memory-record.ts';
import { similaritySpec } from '../helpers/strategy-spec.ts';

const MINUTE_US = 60_000_000;
const DAY_US = 86_400_000_000;
const NOW = Date.parse('2026-11-25T12:00:00Z') * 1000;
const ONLY_RELEVANCE = {
  ...DEFAULT_WEIGHTS,
  w_relevance: 1,
  w_recency: 0,
  w_importance: 0,
  w_reinforcement: 0,
};
const SPEC = similaritySpec();

const memory = memoryRecord;

/** Puts the texts a minute apart from `start`; returns the records. */
function session(
  w: Workspace,
  start: number,
  texts: readonly string[],
  extra: Partial<MemoryRecord> = {},
): MemoryRecord[] {
  return texts.map((t, i) => {
    const m = memory(t, start + i * MINUTE_US, extra);
    w.put(m);
    return m;
  });
}

/** `crowds: false`: without densities (a repeated text is in a crowd of its earlier copies), to see the thread alone. */
function recall(
  w: Workspace,
  cue: string,
  o: { crowds: boolean } = { crowds: true },
): Array<{ content: string; relevance: number }> {
  const input: RecallInput = {
    cue: hashEmbedBatch([cue], 384),
    cueText: cue,
    similarityMode: 'hybrid',
    cueContext: null,
    strategies: [SPEC],
    weights: ONLY_RELEVANCE,
    withEmbedding: false,
  };
  const src = o.crowds ? recallSource(w) : { ...recallSource(w), density: () => null };
  return runRecall(src, input, NOW).hits.map((h) => ({
    content: h.memory.content,
    relevance: h.relevance,
  }));
}

const FILLER = [
  'the weather was lovely on the coast',
  'we cooked pasta with basil for dinner',
  'my dog chased the neighbour cat twice',
];

describe('threads', () => {
  it('chain the neighbour rule: one key per session, a new one after a gap over an hour, other entities neither join nor break them', () => {
    const w = new Workspace('t');
    const a = session(w, NOW - 2 * DAY_US, ['one', 'two', 'three', 'four', 'five']);
    // 50-minute steps: each within an hour of the one before, the ends over three hours apart.
    const b = [0, 50, 100, 150, 200].map((min, i) => {
      const m = memory(`slow ${i}`, NOW - DAY_US + min * MINUTE_US);
      w.put(m);
      if (i === 2)
        w.put(memory('someone else', NOW - DAY_US + (min + 1) * MINUTE_US, { entityId: 'other' }));
      return m;
    });
    const c = session(w, NOW - 3 * 60 * MINUTE_US, ['later', 'still later']);
    const src = recallSource(w);
    const keys = (ms: MemoryRecord[]): Set<string | null> =>
      new Set([...ms].sort((x, y) => (x.id < y.id ? -1 : 1)).map((m) => src.thread(m)));
    expect(keys(a).size).toBe(1);
    expect(keys(b).size).toBe(1);
    expect(keys(c).size).toBe(1);
    expect(keys([...a, ...b, ...c]).size).toBe(3);
    expect(keys([...a, ...b, ...c]).has(null)).toBe(false);
    // Asked newest first, in a fresh recall, the answer is the same.
    const fresh = recallSource(w);
    expect(new Set([...b].reverse().map((m) => fresh.thread(m)))).toEqual(
      new Set([src.thread(b[0] as MemoryRecord)]),
    );
  });

  it("lift a turn that its thread's best match makes relevant above the same words in another thread", () => {
    const w = new Workspace('l');
    // The other session comes first, so every tie (relevance, cosine, id) favours its turn.
    session(w, NOW - 3 * DAY_US, [
      FILLER[0] as string,
      'we picked the one downtown',
      FILLER[1] as string,
    ]);
    session(w, NOW - DAY_US, [
      'Caroline: I am researching adoption agencies',
      ...FILLER,
      'we picked the one downtown!',
    ]);
    const got = recall(w, 'which adoption agency did Caroline pick?');
    const picked = got.filter((h) => h.content.startsWith('we picked'));
    expect(picked.map((h) => h.content)).toEqual([
      'we picked the one downtown!',
      'we picked the one downtown',
    ]);
    expect((picked[0]?.relevance ?? 0) > (picked[1]?.relevance ?? 1)).toBe(true);
  });

  it('a stream written without pauses is no thread: longer than 64 memories, it gives no evidence either way', () => {
    const w = new Workspace('s');
    const stream = session(
      w,
      NOW - 2 * DAY_US,
      Array.from({ length: 100 }, (_, i) => `stream message ${i}`),
    );
    const short = session(
      w,
      NOW - DAY_US,
      Array.from({ length: 60 }, (_, i) => `short message ${i}`),
    );
    const src = recallSource(w);
    expect(new Set(stream.map((m) => src.thread(m)))).toEqual(new Set([null]));
    expect(new Set(short.map((m) => src.thread(m)))).toEqual(new Set([short[0]?.id]));
    // Inside the stream, the turn after the topic is not lifted over the same words elsewhere in it.
    const v = new Workspace('v');
    session(v, NOW - 2 * DAY_US, [
      ...Array.from({ length: 40 }, (_, i) => `filler ${i}`),
      'Caroline: I am researching adoption agencies',
      ...FILLER,
      'we picked the one downtown!',
      ...Array.from({ length: 40 }, (_, i) => `more ${i}`),
      'we picked the one downtown',
    ]);
    const got = recall(v, 'which adoption agency did we pick downtown?', { crowds: false }).filter(
      (h) => h.content.startsWith('we picked'),
    );
    expect(got[0]?.relevance).toBeCloseTo(got[1]?.relevance ?? 0, 1);
  });

  it('no thread evidence leaves the thread weight out of the relevance', () => {
    const w = HYBRID_WEIGHTS;
    const f = {
      cosine: 0.8,
      lexical: 0.5,
      context: 0.6,
      thread: null,
      named: 0,
      reply: 0,
      time: 0,
    };
    const without =
      (w.cosine * 0.8 + w.lexical * 0.5 + w.context * 0.6) / (w.cosine + w.lexical + w.context);
    expect(hybridRelevance(f, { time: false, named: false })).toBeCloseTo(without, 12);
    expect(hybridRelevance({ ...f, thread: 0.9 }, { time: false, named: false })).toBeGreaterThan(
      without,
    );
  });

  it('a memory with no neighbour has no thread evidence: repeating the cue, it has relevance 1', () => {
    const w = new Workspace('s');
    w.put(memory('the printer on floor three is broken', NOW - 2 * DAY_US));
    w.put(memory('the coffee machine needs descaling', NOW - DAY_US));
    const [hit] = recall(w, 'the printer on floor three is broken');
    expect(hit?.content).toBe('the printer on floor three is broken');
    expect(hit?.relevance).toBeCloseTo(1, 5);
  });
});
