/**
 * Persisted memory records: decoding keeps every field and every string exactly; a live write puts
 * the op's own memory into state and converts it to the stored form only for a frame.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { encodeFrame, readFrame } from '../../src/shard/persist/frames.ts';
import { applyLive, applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import {
  decodeRecord,
  detach,
  encodeRecord,
  fromStored,
  toStored,
  type LogRecord,
  type StoredMemory,
} from '../../src/shard/store/records.ts';

/** Encodes a stored memory as a frame and decodes it again, as the log and snapshots do. */
function decodeFrameForTest(m: StoredMemory): StoredMemory {
  const f = readFrame(encodeFrame({ t: 'put', ws: 'w', m }), 0);
  if (f.kind !== 'frame') throw new Error(`frame did not decode: ${f.kind}`);
  return (f.value as { m: StoredMemory }).m;
}

function record(over: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id: '0192f0c0a1b2c3d4e5f60718293a4b5c',
    content:
      'The deploy of the payments service failed at 14:05 because the TLS certificate had expired.',
    importance: 0.42,
    context: {
      source: 'pager-duty-incident-channel',
      tags: ['deploy-pipeline-stage', 'x'],
      nested: { who: 'on-call engineer of the week' },
    },
    entityId: 'payments-service-production',
    kind: 'episode',
    createdAt: 1_730_000_000_000_001,
    updatedAt: 1_730_000_000_000_002,
    lastAccessedAt: 1_730_000_000_000_003,
    accessCount: 3,
    logicalClock: 2,
    sourceMemoryIds: ['0192f0c0a1b2c3d4e5f60718293a4b5d'],
    supersededBy: null,
    expiresAt: null,
    occurredAt: 1_730_000_000_000_001,
    speaker: null,
    conversationId: null,
    messageId: null,
    embedding: new Float32Array([0.25, -0.5, 0.125, 1]),
    ...over,
  };
}

describe('detach', () => {
  it('returns an equal string for ASCII, non-Latin text, astral characters and lone surrogates', () => {
    for (const s of [
      'short',
      'a plain ASCII sentence of some length',
      'café au lait, crème brûlée, ÿ',
      'Grüße aus Zürich — 東京 🚀 emoji',
      'lone \ud800 high and \udc00 low surrogates here',
      '',
    ]) {
      expect(detach(s)).toBe(s);
      expect(detach(s).length).toBe(s.length);
    }
  });
});

describe('fromStored', () => {
  it('restores every field of a record through the frame encoding, strings and vector exact', () => {
    const m = record({
      content: 'Grüße aus Zürich — 東京 🚀, long enough to be kept as a slice',
      supersededBy: '0192f0c0a1b2c3d4e5f60718293a4b5e',
      expiresAt: 1_740_000_000_000_000,
    });
    const back = fromStored(decodeFrameForTest(toStored(m)));
    expect(back).toEqual(m);
    expect(Object.keys(back).sort()).toEqual(Object.keys(m).sort());
  });

  it('reads a record written before expiry existed (no expiresAt) as never expiring, and drops fields it does not know', () => {
    const { expiresAt: _, ...old } = toStored(record());
    const back = fromStored(
      decodeFrameForTest({ ...old, somethingElse: 1 } as unknown as StoredMemory),
    );
    expect(back.expiresAt).toBeNull();
    expect('somethingElse' in back).toBe(false);
    expect(back).toEqual(record());
  });
});

describe('event time, speaker, conversation and message id in the stored form', () => {
  const KEYS_BEFORE = [
    'accessCount',
    'content',
    'context',
    'createdAt',
    'embedding',
    'entityId',
    'expiresAt',
    'id',
    'importance',
    'kind',
    'lastAccessedAt',
    'logicalClock',
    'sourceMemoryIds',
    'supersededBy',
    'updatedAt',
  ];

  it('are left out at their defaults, so a memory without them is stored exactly as before they existed', () => {
    expect(Object.keys(toStored(record())).sort()).toEqual(KEYS_BEFORE);
  });

  it('are written when set, and read back exact', () => {
    const m = record({
      occurredAt: 1_600_000_000_000_000,
      speaker: 'Caroline',
      conversationId: 'a conversation id long enough to be a slice',
      messageId: 'msg-0001',
    });
    const stored = toStored(m);
    expect(Object.keys(stored).sort()).toEqual(
      [...KEYS_BEFORE, 'conversationId', 'messageId', 'occurredAt', 'speaker'].sort(),
    );
    expect(fromStored(decodeFrameForTest(stored))).toEqual(m);
  });

  it('a record written before they existed reads as happening when written, said by nobody, in no conversation', () => {
    const back = fromStored(
      decodeFrameForTest(
        toStored(record({ createdAt: 1_700_000_000_000_000, occurredAt: 1_700_000_000_000_000 })),
      ),
    );
    expect(back).toMatchObject({
      occurredAt: 1_700_000_000_000_000,
      speaker: null,
      conversationId: null,
      messageId: null,
    });
  });
});

describe('live records and frames', () => {
  it('a live put leaves the memory the op built in state: no decode, no copy of the vector', () => {
    const state = new ShardState();
    const m = record();
    applyLive(state, { t: 'put', ws: 'w', m });
    const kept = state.workspaces.get('w')?.memories.get(m.id);
    expect(kept).toBe(m);
    expect(kept?.embedding).toBe(m.embedding);
  });

  it('encodes to the stored form only as a view of the same vector bytes, and a frame read back applies to an equal memory', () => {
    const m = record();
    const frame = encodeRecord({ t: 'put', ws: 'w', m });
    if (frame.t !== 'put') throw new Error('not a put');
    expect(frame.m.embedding.buffer).toBe(m.embedding.buffer);
    const read = readFrame(encodeFrame(frame), 0);
    if (read.kind !== 'frame') throw new Error(`frame did not decode: ${read.kind}`);
    const state = new ShardState();
    applyRecord(state, read.value as LogRecord);
    const replayed = state.workspaces.get('w')?.memories.get(m.id);
    expect(replayed).not.toBe(m);
    expect({ ...replayed, embedding: Array.from(replayed?.embedding ?? []) }).toEqual({
      ...m,
      embedding: Array.from(m.embedding),
    });
  });

  it('an unsource record is written without the sources it keeps and decodes with them read from state', () => {
    const m = record({ sourceMemoryIds: ['a', 'b', 'c'] });
    const frame = encodeRecord({ t: 'unsource', ws: 'w', m, lost: ['b'] });
    expect(frame.t === 'unsource' ? frame.m.sourceMemoryIds : 'not an unsource').toBeNull();
    const live = decodeRecord(frame);
    expect(live.t === 'unsource' ? live.lost : null).toEqual(['b']);
    const state = new ShardState();
    applyLive(state, { t: 'put', ws: 'w', m: record({ sourceMemoryIds: ['a', 'b', 'c'] }) });
    applyRecord(state, frame);
    expect(state.workspaces.get('w')?.memories.get(m.id)?.sourceMemoryIds).toEqual(['a', 'c']);
  });
});
