import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { view } from '../../src/shard/ops/context.ts';

const record = (): MemoryRecord => ({
  id: '0190abcdef0123456789abcdef012345',
  content: 'Alice moved to Lisbon in May',
  importance: 0.7,
  context: { speaker: 'Alice', tags: ['move'] },
  entityId: 'alice',
  kind: 'revision',
  createdAt: 1_700_000_000_000_001,
  occurredAt: 1_690_000_000_000_000,
  updatedAt: 1_700_000_000_000_002,
  lastAccessedAt: 1_700_000_000_000_003,
  accessCount: 4,
  logicalClock: 5,
  sourceMemoryIds: ['0190abcdef0123456789abcdef012346'],
  supersededBy: '0190abcdef0123456789abcdef012347',
  expiresAt: 1_800_000_000_000_000,
  speaker: 'Alice',
  conversationId: 'chat-7',
  messageId: 'msg-3',
  embedding: Float32Array.from([0.1, 0.2, 0.3]),
});

describe('view', () => {
  it('carries every field of the record but the embedding, with the same values', () => {
    const m = record();
    const { embedding: _embedding, ...rest } = m;
    const v = view(m);
    expect(v).toStrictEqual(rest);
    expect(Object.keys(v).sort()).toEqual(
      Object.keys(m)
        .filter((k) => k !== 'embedding')
        .sort(),
    );
  });

  it('adds a copy of the embedding when asked for it', () => {
    const m = record();
    const v = view(m, true);
    expect(v.embedding).toEqual(m.embedding);
    expect(v.embedding).not.toBe(m.embedding);
    (v.embedding as Float32Array)[0] = 9;
    expect(m.embedding[0]).toBeCloseTo(0.1);
  });
});
