/**
 * Conversation evidence in hybrid similarity (recall/hybrid.ts): `reply` lifts an answer toward the
 * question written just before it; a thread's match reads its candidates as one text, so a cue whose
 * words are spread over several turns of a session finds that session; the lexical index's union
 * share behind it (shard/index/lexical.ts).
 */
import { describe, expect, it } from 'vitest';
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { FeatureScorer, HYBRID_WEIGHTS, hybridRelevance } from '../../src/recall/hybrid.ts';
import { runRecall } from '../../src/recall/recall.ts';
import { DEFAULT_WEIGHTS, type RecallInput } from '../../src/recall/types.ts';
import { dot } from '../../src/recall/vector.ts';
import { LexicalIndex } from '../../src/shard/index/lexical.ts';
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

/** Puts the texts a minute apart from `start`; returns the records. */
function session(w: Workspace, start: number, texts: readonly string[]): MemoryRecord[] {
  return texts.map((t, i) => {
    const m = memoryRecord(t, start + i * MINUTE_US);
    w.put(m);
    return m;
  });
}

function recall(
  w: Workspace,
  cue: string,
): Array<{ content: string; relevance: number; reply: number | undefined }> {
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
      reply: d?.strategy === 'similarity' ? d.reply : undefined,
    };
  });
}

const ANSWER = 'yeah the clarinet since I was young';

describe('reply: an answer is lifted toward the question before it', () => {
  it('ranks the answer to a question above the same words after the same words said as a statement', () => {
    const w = new Workspace('r');
    // The statement's session comes first, so every tie (relevance, cosine, id) favours its turn:
    // both answers have the same words, neighbours and threads; only the question mark differs.
    session(w, NOW - 3 * DAY_US, ['you play any instruments.', ANSWER]);
    session(w, NOW - DAY_US, ['you play any instruments?', `${ANSWER}!`]);
    const got = recall(w, 'which instruments do you play');
    const answers = got.filter((h) => h.content.startsWith('yeah'));
    expect(answers.map((h) => h.content)).toEqual([`${ANSWER}!`, ANSWER]);
    expect(answers[0]?.reply ?? 0).toBeGreaterThan(0);
    expect(answers[1]?.reply).toBe(0);
    expect((answers[0]?.relevance ?? 0) > (answers[1]?.relevance ?? 1)).toBe(true);
  });

  it('lifts only the turn after the question, and only toward a question that matches better', () => {
    const w = new Workspace('o');
    session(w, NOW - DAY_US, ['before anything else', 'do you play any instruments?', ANSWER]);
    const got = new Map(
      recall(w, 'which instruments do you play').map((h) => [h.content, h.reply]),
    );
    expect(got.get(ANSWER) ?? 0).toBeGreaterThan(0);
    // The question itself follows a statement; the first turn follows nothing.
    expect(got.get('do you play any instruments?')).toBe(0);
    expect(got.get('before anything else')).toBe(0);
  });

  it('adds no `reply` detail when no candidate follows a question', () => {
    const w = new Workspace('n');
    session(w, NOW - DAY_US, ['we talked about instruments at the party', ANSWER]);
    expect(recall(w, 'which instruments do you play').map((h) => h.reply)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('keeps relevance in [0, 1]: reply moves the own match toward the question, never past 1', () => {
    const base = { cosine: 0.2, lexical: 0.1, context: 1, thread: 1, named: 0, time: 0 };
    const own = HYBRID_WEIGHTS.cosine * base.cosine + HYBRID_WEIGHTS.lexical * base.lexical;
    const without = hybridRelevance({ ...base, reply: 0 }, { time: false, named: false });
    const lifted = hybridRelevance({ ...base, reply: 1 - own }, { time: false, named: false });
    expect(lifted).toBeGreaterThan(without);
    expect(lifted).toBeLessThanOrEqual(1);
    expect(HYBRID_WEIGHTS.reply).toBeLessThanOrEqual(
      HYBRID_WEIGHTS.cosine + HYBRID_WEIGHTS.lexical,
    );
  });
});

/** Puts the (speaker, text) messages a minute apart from `start`, each speaker in its context. */
function chat(
  w: Workspace,
  start: number,
  messages: ReadonlyArray<readonly [string, string]>,
): void {
  messages.forEach(([speaker, text], i) => {
    w.put(memoryRecord(text, start + i * MINUTE_US, { context: { speaker } }));
  });
}

describe('reply: an answer split over several messages by one speaker', () => {
  const CUE = 'which instruments do you play';

  it('lifts every message of the run toward the question by someone else before it', () => {
    const w = new Workspace('s');
    chat(w, NOW - DAY_US, [
      ['Ben', 'do you play any instruments?'],
      ['Ann', 'yeah'],
      ['Ann', 'the clarinet since I was young'],
      ['Ann', 'and a bit of piano'],
    ]);
    const got = new Map(recall(w, CUE).map((h) => [h.content, h.reply]));
    for (const part of ['yeah', 'the clarinet since I was young', 'and a bit of piano'])
      expect(got.get(part) ?? 0).toBeGreaterThan(0);
    expect(got.get('do you play any instruments?')).toBe(0);
  });

  it('ranks the second message of a split answer above the same words said after a statement', () => {
    const w = new Workspace('t');
    // The statement's chat comes first, so every tie favours its message.
    chat(w, NOW - 3 * DAY_US, [
      ['Ben', 'you play any instruments.'],
      ['Ann', 'yeah'],
      ['Ann', ANSWER],
    ]);
    chat(w, NOW - DAY_US, [
      ['Ben', 'you play any instruments?'],
      ['Ann', 'yeah'],
      ['Ann', `${ANSWER}!`],
    ]);
    const answers = recall(w, CUE).filter((h) => h.content.startsWith(ANSWER));
    expect(answers.map((h) => h.content)).toEqual([`${ANSWER}!`, ANSWER]);
    expect(answers[0]?.reply ?? 0).toBeGreaterThan(0);
    expect(answers[1]?.reply).toBe(0);
  });

  it("does not lift a message toward its own speaker's question", () => {
    const w = new Workspace('q');
    // The same question and the same words after it, first by its asker, then by someone else.
    chat(w, NOW - 3 * DAY_US, [
      ['Ann', 'you play any instruments?'],
      ['Ann', ANSWER],
    ]);
    chat(w, NOW - DAY_US, [
      ['Ann', 'you play any instruments?'],
      ['Ben', `${ANSWER}!`],
    ]);
    const got = new Map(recall(w, CUE).map((h) => [h.content, h.reply]));
    expect(got.get(`${ANSWER}!`) ?? 0).toBeGreaterThan(0);
    expect(got.get(ANSWER)).toBe(0);
  });

  it('does not walk past a question of the run itself, nor without speakers', () => {
    const own = new Workspace('o');
    // Ben's run asks a question of its own: the messages after it answer nobody.
    chat(own, NOW - DAY_US, [
      ['Ann', 'do you play any instruments?'],
      ['Ben', 'do you?'],
      ['Ben', 'I mean any at all'],
      ['Ben', ANSWER],
    ]);
    const ownGot = new Map(recall(own, CUE).map((h) => [h.content, h.reply]));
    expect(ownGot.get(ANSWER)).toBe(0);
    // The same messages with no speaker: no run is known, only the message after a question is lifted.
    const anon = new Workspace('a');
    session(anon, NOW - DAY_US, ['do you play any instruments?', 'yeah', ANSWER]);
    const anonGot = new Map(recall(anon, CUE).map((h) => [h.content, h.reply]));
    expect(anonGot.get('yeah') ?? 0).toBeGreaterThan(0);
    expect(anonGot.get(ANSWER)).toBe(0);
  });
});

describe('a thread read as one text', () => {
  it("gives a session whose turns hold the cue's words between them more than one turn holding a third of them", () => {
    const w = new Workspace('t');
    // One turn of the first session holds two of the cue's six words; no turn of the second holds
    // more than one, but together they hold all six.
    const first = session(w, NOW - 3 * DAY_US, [
      'the weather was lovely',
      'violin lessons',
      'we cooked pasta for dinner',
    ]);
    const second = session(w, NOW - DAY_US, [
      'the weather was lovely',
      'my violin',
      'her lessons',
      'in august',
      'near lisbon',
      'by tram',
      'on mondays',
    ]);
    const cue = 'violin lessons august lisbon tram mondays';
    const src = recallSource(w);
    const vector = hashEmbedBatch([cue], 384);
    const scorer = new FeatureScorer(
      src,
      cue,
      (m) => Math.max(0, dot(vector, m.embedding)),
      src.lexical(cue),
    );
    const threads = scorer.threads([...first, ...second]);
    const threadOf = (m: MemoryRecord | undefined): number =>
      m === undefined ? Number.NaN : (threads.get(m.id) ?? Number.NaN);
    // Each session's best turn alone: the first's holds more of the cue.
    expect(Math.max(...first.map((m) => scorer.match(m)))).toBeGreaterThan(
      Math.max(...second.map((m) => scorer.match(m))),
    );
    // Read as one text, the second session matches more.
    expect(threadOf(second[0])).toBeGreaterThan(threadOf(first[0]));
    expect(new Set(second.map(threadOf)).size).toBe(1);
  });
});

describe('LexicalIndex union share', () => {
  const idx = new LexicalIndex();
  idx.add('a', { content: 'violin lessons', entityId: null, context: {} });
  idx.add('b', { content: 'august in lisbon', entityId: null, context: {} });
  idx.add('c', { content: 'pasta for dinner', entityId: null, context: {} });

  it('is the IDF share of the terms any of the memories holds, each term counted once', () => {
    const q = idx.query('violin lessons august lisbon');
    const scores = idx.score(q);
    expect(scores.union(['a'])).toBeCloseTo(scores.norm('a'), 12);
    expect(scores.union(['a', 'b'])).toBeCloseTo(1, 12);
    expect(scores.union(['a', 'a', 'c'])).toBeCloseTo(scores.norm('a'), 12);
    expect(scores.union([])).toBe(0);
    expect(scores.union(['missing'])).toBe(0);
  });

  it('holds for queries of more than 32 terms (several mask words per memory)', () => {
    const many = Array.from(
      { length: 40 },
      (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`,
    );
    const big = new LexicalIndex();
    big.add('x', { content: many.slice(0, 20).join(' '), entityId: null, context: {} });
    big.add('y', { content: many.slice(20).join(' '), entityId: null, context: {} });
    const scores = big.score(big.query(many.join(' ')));
    expect(scores.union(['x']) + scores.union(['y'])).toBeCloseTo(1, 12);
    expect(scores.union(['x', 'y'])).toBeCloseTo(1, 12);
    // A second query reuses the scratch space: nothing of the first stays behind.
    const again = big.score(big.query(many[0] as string));
    expect(again.union(['y'])).toBe(0);
    expect(again.union(['x'])).toBeCloseTo(1, 12);
  });
});
