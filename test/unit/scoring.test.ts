/**
 * The composite score (src/recall/scoring.ts) stays a finite number whatever weights a request
 * accepts: a reinforcement cap so small that 1 + cap rounds to 1 once made 0/0 (NaN, sent as JSON
 * null; schemathesis found it through prime), and weights large enough to overflow the sum gave
 * Infinity (also null on the wire).
 */
import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { compositeScore, reinforcement } from '../../src/recall/scoring.ts';
import { DEFAULT_WEIGHTS } from '../../src/recall/types.ts';

const NOW = 1_800_000_000_000_000;

function memory(accessCount: number): MemoryRecord {
  return {
    id: '0'.repeat(32),
    content: 'x',
    importance: 0.5,
    context: {},
    entityId: null,
    kind: 'episode',
    createdAt: NOW - 1000,
    occurredAt: NOW - 1000,
    updatedAt: NOW,
    lastAccessedAt: NOW,
    accessCount,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    speaker: null,
    conversationId: null,
    messageId: null,
    embedding: new Float32Array(4),
  };
}

describe('composite score', () => {
  it('reinforcement with a vanishing cap: no access 0, any access 1 (the limit), never NaN', () => {
    for (const cap of [1.782715466013097e-128, Number.MIN_VALUE, 1e-17]) {
      expect(reinforcement(memory(0), cap)).toBe(0);
      expect(reinforcement(memory(3), cap)).toBe(1);
    }
    expect(reinforcement(memory(3), 100)).toBeCloseTo(Math.log2(4) / Math.log2(101), 12);
    expect(reinforcement(memory(1000), 100)).toBe(1);
  });

  it('is finite for the weights of the failing request and for weights that overflow the sum', () => {
    const fuzzed = {
      ...DEFAULT_WEIGHTS,
      reinforcement_cap: 1.782715466013097e-128,
      w_relevance: 3.747327575168025e16,
    };
    expect(Number.isFinite(compositeScore(memory(0), 0, fuzzed, NOW))).toBe(true);
    const huge = {
      ...DEFAULT_WEIGHTS,
      w_relevance: 1.7e308,
      w_recency: 1.7e308,
      w_importance: 1.7e308,
      w_reinforcement: 1.7e308,
    };
    expect(compositeScore(memory(5), 1, huge, NOW)).toBe(Number.MAX_VALUE);
    expect(JSON.stringify({ s: compositeScore(memory(5), 1, huge, NOW) })).not.toContain('null');
  });

  it('is the weighted sum otherwise', () => {
    const w = {
      ...DEFAULT_WEIGHTS,
      w_relevance: 1,
      w_recency: 0,
      w_importance: 2,
      w_reinforcement: 0,
    };
    expect(compositeScore(memory(0), 0.25, w, NOW)).toBeCloseTo(0.25 + 2 * 0.5, 12);
  });
});
