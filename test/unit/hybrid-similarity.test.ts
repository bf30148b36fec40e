/**
 * Hybrid similarity and the strategy merge inside the shard (recall/strategies.ts, recall/recall.ts
 * over a real Workspace): creation-time windows, conversation neighbours, the merged order, and a
 * workspace rebuilt from its log answering exactly as the live one.
 */
import { describe, expect, it } from 'vitest';
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { timeCueOf } from '../../src/recall/dates.ts';
import { runRecall } from '../../src/recall/recall.ts';
import { datedIn } from '../../src/recall/strategies.ts';
import { dot } from '../../src/recall/vector.ts';
import { DEFAULT_WEIGHTS, type RecallInput, type StrategySpec } from '../../src/recall/types.ts';
import { recallSource } from '../../src/shard/ops/recall-source.ts';
import { toStored, type LogRecord } from '../../src/shard/store/records.ts';
import { applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import { Workspace } from '../../src/shard/store/workspace.ts';
import { memoryRecord } from '../helpers/memory-record.ts';

const DAY_US = 86_400_000_000;
const NOW = Date.parse('2026-11-18T15:00:00Z') * 1000;
const ONLY_RELEVANCE = {
  ...DEFAULT_WEIGHTS,
  w_relevance: 1,
  w_recency: 0,
  w_importance: 0,
  w_reinforcement: 0,
};

const memory = memoryRecord;

function spec(
  strategy: StrategySpec['strategy'],
  topK = 10,
  more: Partial<StrategySpec> = {},
): StrategySpec {
  return {
    strategy,
    topK,
    efSearch: 50,
    entityId: null,
    timeRange: null,
    seedId: null,
    edgeTypes: null,
    maxDepth: 3,
    alpha: 0.5,
    ...more,
  };
}

function input(
  cue: string,
  strategies: StrategySpec[],
  mode: RecallInput['similarityMode'] = 'hybrid',
): RecallInput {
  return {
    cue: hashEmbedBatch([cue], 384),
    cueText: cue,
    similarityMode: mode,
    cueContext: null,
    strategies,
    weights: ONLY_RELEVANCE,
    withEmbedding: false,
  };
}

const contents = (
  w: Workspace,
  cue: string,
  strategies: StrategySpec[],
  mode?: RecallInput['similarityMode'],
): string[] =>
  runRecall(recallSource(w), input(cue, strategies, mode), NOW).hits.map((h) => h.memory.content);

describe('time-aware cues by creation time', () => {
  it('"yesterday" and "last week" prefer memories created then over the same words written at another time', () => {
    const w = new Workspace('t');
    w.put(memory('the printer is broken again', NOW - 20 * DAY_US));
    w.put(memory('the printer is broken again!', NOW - DAY_US));
    w.put(memory('the printer is broken again.', NOW - 8 * DAY_US));
    expect(contents(w, 'was the printer broken yesterday?', [spec('similarity')])[0]).toBe(
      'the printer is broken again!',
    );
    expect(contents(w, 'was the printer broken last week?', [spec('similarity')])[0]).toBe(
      'the printer is broken again.',
    );
    // Dense mode ignores time words: the plain wording wins there.
    expect(
      contents(w, 'was the printer broken yesterday?', [spec('similarity')], 'dense')[0],
    ).not.toBe('the printer is broken again!');
  });
});

describe('a cue whose time holds nearly the whole store', () => {
  const HOUR_US = 3_600_000_000;
  const topics = ['printer', 'invoice', 'deploy', 'lunch', 'backup', 'laptop', 'meeting', 'badge'];
  /** `inside` memories created this month (two hours apart, so no thread), `outside` in an earlier year. */
  function store(inside: number, outside: number): Workspace {
    const w = new Workspace('t');
    for (let i = 0; i < outside; i++)
      w.put(
        memory(
          `the ${topics[i % 8]} note ${i} from long ago`,
          NOW - 400 * DAY_US + i * 2 * HOUR_US,
        ),
      );
    for (let i = 0; i < inside; i++)
      w.put(
        memory(
          `the ${topics[i % 8]} note ${i} of the ${topics[(i * 3) % 8]} team`,
          NOW - 17 * DAY_US + i * 2 * HOUR_US,
        ),
      );
    return w;
  }
  const cues = [
    'what broke with the printer this month?',
    'who paid the invoice this month',
    'the deploy of the backup team this month',
  ];
  const ranked = (w: Workspace, cue: string, force: boolean): Array<[string, number]> => {
    const src = recallSource(w);
    const source = force ? { ...src, countOutside: () => Number.POSITIVE_INFINITY } : src;
    return runRecall(source, input(cue, [spec('similarity', 20)]), NOW).hits.map((h) => [
      h.memory.content,
      h.score,
    ]);
  };

  it('ranks the same through the dense search as by reading every memory in the window', () => {
    for (const [inside, outside] of [
      [200, 10],
      [300, 80],
      [60, 5],
    ] as const) {
      const w = store(inside, outside);
      expect(
        recallSource(w).countOutside(NOW - 17 * DAY_US, NOW + DAY_US, null),
      ).toBeGreaterThanOrEqual(outside);
      for (const cue of cues) expect(ranked(w, cue, false)).toEqual(ranked(w, cue, true));
    }
  });

  it("takes the window's most similar memories, exactly, from the dense search", () => {
    for (const [inside, outside] of [
      [200, 10],
      [300, 80],
      [20, 3],
      [40, 0],
    ] as const) {
      const w = store(inside, outside);
      const cue = 'what broke with the printer this month?';
      const vector = hashEmbedBatch([cue], 384);
      const time = timeCueOf(cue, NOW);
      if (time === null) throw new Error('the cue names no time');
      const cosine = (m: MemoryRecord): number => Math.max(0, dot(vector, m.embedding));
      const q = { vector, text: cue, mode: 'hybrid' as const, time };
      const dense = recallSource(w)
        .nearest(vector, { k: 30, ef: 50, entityId: null })
        .map((h) => h.id);
      const wide = datedIn(recallSource(w), q, spec('similarity'), { depth: 30, dense, cosine });
      const read = datedIn(
        { ...recallSource(w), countOutside: () => Number.POSITIVE_INFINITY },
        q,
        spec('similarity'),
        { depth: 30, dense, cosine },
      );
      const inWindow = [...w.memories.values()].filter(
        (m) => m.createdAt >= time.startUs && m.createdAt < time.endUs,
      );
      const expected = inWindow
        .map((m) => ({ id: m.id, sim: cosine(m) }))
        .sort((a, b) => b.sim - a.sim)
        .slice(0, 30);
      // The same similarities as reading the whole window (the hash embedder ties often: which of
      // two equal memories comes first is the order each path met them in).
      const sims = (ids: string[]): number[] =>
        ids.map((id) => cosine(w.memories.get(id) as MemoryRecord));
      expect(sims(wide.best)).toEqual(expected.map((h) => h.sim));
      expect(sims(read.best)).toEqual(expected.map((h) => h.sim));
      for (const m of w.memories.values()) expect(wide.dated(m)).toBe(read.dated(m));
    }
  });

  it('counts at least the memories created outside the window, whatever ids share its edge milliseconds', () => {
    const w = new Workspace('t');
    const start = NOW - DAY_US;
    for (const at of [
      start - 1000,
      start - 1,
      start,
      start + 999,
      start + 5000,
      NOW,
      NOW + 1,
      NOW + 1000,
    ])
      w.put(memory(`at ${at}`, at));
    const outsideByTime = [...w.memories.values()].filter(
      (m) => m.createdAt < start || m.createdAt >= NOW,
    ).length;
    expect(recallSource(w).countOutside(start, NOW, null)).toBeGreaterThanOrEqual(outsideByTime);
    expect(recallSource(w).countOutside(start, NOW, null)).toBeLessThanOrEqual(w.memories.size);
  });
});

describe('conversation neighbours', () => {
  it('a turn next to one that names the topic is lifted above an unrelated turn with a similar match', () => {
    const w = new Workspace('n');
    const t0 = NOW - DAY_US;
    w.put(memory('Melanie: what are you researching these days?', t0));
    w.put(memory('Caroline: adoption agencies, it has been a dream of mine', t0 + 1_000_000));
    w.put(memory('Caroline: agencies called back about the lease', t0 + 5 * DAY_US));
    const got = contents(w, 'what is Caroline researching?', [spec('similarity')]);
    expect(got.indexOf('Caroline: adoption agencies, it has been a dream of mine')).toBeLessThan(
      got.indexOf('Caroline: agencies called back about the lease'),
    );
  });

  it('neighbours are the same kind and entity, created within an hour', () => {
    const w = new Workspace('k');
    const a = memory('first', NOW);
    w.put(a);
    w.put(memory('an insight', NOW + 1, { kind: 'insight' }));
    w.put(memory('other entity', NOW + 2, { entityId: 'x' }));
    const b = memory('second', NOW + 3);
    w.put(b);
    w.put(memory('much later', NOW + 2 * 3_600_000_000));
    const src = recallSource(w);
    expect(src.neighbours(a).map((m) => m.content)).toEqual(['second']);
    expect(src.neighbours(b).map((m) => m.content)).toEqual(['first']);
  });
});

describe('several strategies', () => {
  it("similarity's results lead in similarity's order; the others' follow by rank fusion", () => {
    const w = new Workspace('m');
    for (let i = 0; i < 12; i++)
      w.put(
        memory(`harbour note ${i}: a boat with ${i} crates of apples`, NOW - (12 - i) * 60_000_000),
      );
    w.put(memory('unrelated newest memory about violins', NOW));
    const cue = 'boat with 7 crates of apples';
    const alone = contents(w, cue, [spec('similarity', 3)]);
    const merged = contents(w, cue, [
      spec('temporal', 3),
      spec('similarity', 3),
      spec('analogical', 3),
    ]);
    expect(merged.slice(0, 3)).toEqual(alone);
    expect(merged).toContain('unrelated newest memory about violins');
    expect(new Set(merged).size).toBe(merged.length);
  });
});

describe('recovery', () => {
  it('a workspace rebuilt from its log answers lexical and hybrid queries exactly as the live one', () => {
    const live = new ShardState();
    const log: LogRecord[] = [];
    const write = (r: LogRecord): void => {
      log.push(r);
      applyRecord(live, r);
    };
    const words = ['harbour', 'lantern', 'orchard', 'violin', 'glacier', 'saffron'];
    const ms: MemoryRecord[] = [];
    for (let i = 0; i < 40; i++) {
      const m = memory(
        `note ${i}: ${words[i % 6]} by the ${words[(i * 5 + 1) % 6]}`,
        NOW - (40 - i) * 1_000_000,
      );
      ms.push(m);
      write({ t: 'put', ws: 'r', m: toStored(m) });
    }
    for (const m of ms.slice(0, 4)) write({ t: 'del', ws: 'r', id: m.id });
    const revised = ms[9] as MemoryRecord;
    write({
      t: 'put',
      ws: 'r',
      m: toStored({
        ...revised,
        content: 'note 9: a comet',
        embedding: hashEmbedBatch(['note 9: a comet'], 384),
      }),
    });
    const replayed = new ShardState();
    for (const r of log) applyRecord(replayed, r);
    const a = live.workspace('r');
    const b = replayed.workspace('r');
    expect(b.lexical.size).toBe(a.lexical.size);
    expect(b.lexical.termCount).toBe(a.lexical.termCount);
    for (const cue of [...words, 'comet', 'note 9', 'harbour lantern']) {
      for (const mode of ['lexical', 'hybrid'] as const) {
        const ask = (w: Workspace): unknown =>
          runRecall(recallSource(w), input(cue, [spec('similarity', 15)], mode), NOW).hits.map(
            (h) => [h.memory.id, h.relevance],
          );
        expect(ask(b), `${mode} ${cue}`).toEqual(ask(a));
      }
    }
  });
});

describe('spelling', () => {
  it("a memory that misspells a cue word is found at half the word's weight, below the one that spells it right; words under five letters match only themselves", () => {
    const w = new Workspace('s');
    const t0 = NOW - 30 * DAY_US;
    w.put(memory('we joined the suport group downtown', t0));
    w.put(memory('a quiet evening at home', t0 + DAY_US));
    w.put(memory('we joined the support group downtown', t0 + 2 * DAY_US));
    w.put(memory('my cap is blue', t0 + 3 * DAY_US));
    const hits = (cue: string, mode: RecallInput['similarityMode']) =>
      runRecall(recallSource(w), input(cue, [spec('similarity')], mode), NOW).hits;
    const lexical = hits('support', 'lexical');
    expect(lexical.map((h) => h.memory.content)).toEqual([
      'we joined the support group downtown',
      'we joined the suport group downtown',
    ]);
    expect(lexical.map((h) => h.relevance)).toEqual([1, 0.5]);
    const detail = hits('support', 'hybrid').find((h) => h.memory.content.includes('suport'))
      ?.details[0];
    expect(detail?.strategy === 'similarity' ? detail.lexical : null).toBe(0.5);
    expect(hits('my cat', 'lexical').map((h) => h.memory.content)).toEqual([]);
  });
});
