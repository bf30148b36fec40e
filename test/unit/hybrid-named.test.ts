/**
 * The `named` feature of hybrid similarity (recall/hybrid.ts): a cue that names a memory's entity or
 * a short string value of its context lifts that memory; names are read from those fields, never
 * from the content, and relevance without a name in the cue is the blend without the name weight.
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

const DAY_US = 86_400_000_000;
const NOW = Date.parse('2026-11-25T12:00:00Z') * 1000;
const ONLY_RELEVANCE = {
  ...DEFAULT_WEIGHTS,
  w_relevance: 1,
  w_recency: 0,
  w_importance: 0,
  w_reinforcement: 0,
};

const memory = memoryRecord;

const SPEC = similaritySpec();

function recall(
  w: Workspace,
  cue: string,
): Array<{ content: string; relevance: number; named: number | undefined }> {
  const input: RecallInput = {
    cue: hashEmbedBatch([cue], 384),
    cueText: cue,
    similarityMode: 'hybrid',
    cueContext: null,
    strategies: [SPEC],
    weights: ONLY_RELEVANCE,
    withEmbedding: false,
  };
  return runRecall(recallSource(w), input, NOW).hits.map((h) => {
    const d = h.details[0];
    return {
      content: h.memory.content,
      relevance: h.relevance,
      named: d?.strategy === 'similarity' ? d.named : undefined,
    };
  });
}

/** Two speakers saying the same words, a day apart (so neither is the other's neighbour). */
function twoSpeakers(put: (speaker: string, at: number) => Partial<MemoryRecord>): Workspace {
  const w = new Workspace('n');
  w.put(
    memory('we went hiking in the mountains last weekend', NOW - 2 * DAY_US, put('Melanie', 0)),
  );
  w.put(memory('we went hiking in the mountains last weekend!', NOW - DAY_US, put('Caroline', 1)));
  return w;
}

describe('a cue naming who a memory is attributed to', () => {
  it('lifts the memory whose context speaker the cue names, whichever was written first', () => {
    const said = {
      Melanie: 'we went hiking in the mountains last weekend',
      Caroline: 'we went hiking in the mountains last weekend!',
    };
    for (const asked of ['Caroline', 'Melanie'] as const) {
      const got = recall(
        twoSpeakers((speaker) => ({ context: { speaker } })),
        `Where did ${asked}'s family go hiking?`,
      );
      expect(got.map((h) => [h.content, h.named])).toEqual([
        [said[asked], 1],
        [said[asked === 'Caroline' ? 'Melanie' : 'Caroline'], 0],
      ]);
    }
  });

  it('reads the entity id too, and multi-word names as whole words', () => {
    const w = twoSpeakers((speaker) => ({
      entityId: speaker === 'Caroline' ? 'ada-lovelace' : 'alan-turing',
    }));
    for (const [cue, first] of [
      ['where did Ada Lovelace go hiking', 'we went hiking in the mountains last weekend!'],
      ['where did Alan Turing go hiking', 'we went hiking in the mountains last weekend'],
    ] as const) {
      expect(recall(w, cue).map((h) => [h.content, h.named])[0]).toEqual([first, 1]);
    }
    // One word of a two-word name is not the name (and a cue that names nobody adds no `named` detail).
    expect(recall(w, 'where did Ada go hiking').map((h) => h.named)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('never reads names from the content; a long context value, or one not written like a name, is not a name', () => {
    const w = new Workspace('c');
    w.put(
      memory('Caroline: we went hiking', NOW - DAY_US, {
        context: {
          notes: 'Caroline wrote this down while we went hiking in the hills that day',
          mood: 'happy',
        },
      }),
    );
    for (const cue of ['where did Caroline go hiking', 'was Caroline happy hiking']) {
      const [hit] = recall(w, cue);
      expect(hit?.content).toBe('Caroline: we went hiking');
      expect(hit?.named).toBeUndefined();
    }
    w.put(memory('we went hiking', NOW, { context: { with: ['Bob', 'Ada Lovelace'] } }));
    expect(
      recall(w, 'did we go hiking with ada lovelace').find((h) => h.content === 'we went hiking')
        ?.named,
    ).toBe(1);
  });

  it('without a name in the cue, relevance is the blend without the name weight', () => {
    const f = { cosine: 0.8, lexical: 0.5, context: 0.6, thread: 0.7, named: 0, reply: 0, time: 0 };
    const w = HYBRID_WEIGHTS;
    const plain =
      (w.cosine * 0.8 + w.lexical * 0.5 + w.context * 0.6 + w.thread * 0.7) /
      (w.cosine + w.lexical + w.context + w.thread);
    expect(hybridRelevance(f, { time: false, named: false })).toBeCloseTo(plain, 12);
    expect(hybridRelevance({ ...f, named: 1 }, { time: false, named: true })).toBeGreaterThan(
      hybridRelevance(f, { time: false, named: true }),
    );
    for (const named of [0, 1]) {
      const r = hybridRelevance(
        { cosine: 1, lexical: 1, context: 1, thread: 1, named, reply: 0, time: 1 },
        { time: true, named: true },
      );
      expect(r).toBeGreaterThan(0);
      expect(r).toBeLessThanOrEqual(1);
    }
  });
});
