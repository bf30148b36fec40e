/**
 * Memories for tests: a live `MemoryRecord` for tests that build a Workspace by hand: hash-embedded content, an id that
 * orders by creation time (12 hex digits of milliseconds, then a counter) as the service's ids do,
 * and every other field at its default unless `extra` says otherwise; and a `StoredMemory`, the
 * log's form, for tests that write frames themselves.
 */
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import type { StoredMemory } from '../../src/shard/store/records.ts';

let seq = 0;

export function memoryRecord(
  content: string,
  createdAt: number,
  extra: Partial<MemoryRecord> = {},
): MemoryRecord {
  const ms = Math.floor(createdAt / 1000);
  const id = `${ms.toString(16).padStart(12, '0')}${(++seq).toString(16).padStart(20, '0')}`;
  return {
    id,
    content,
    importance: 0.5,
    context: {},
    entityId: null,
    kind: 'episode',
    createdAt,
    updatedAt: createdAt,
    lastAccessedAt: createdAt,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    occurredAt: createdAt,
    speaker: null,
    conversationId: null,
    messageId: null,
    embedding: hashEmbedBatch([content], 384),
    ...extra,
  };
}

/** A stored memory (the log's form) with a 4-dimensional zero vector. */
export function storedMemory(
  id: string,
  content: string,
  extra: Partial<StoredMemory> = {},
): StoredMemory {
  return {
    id,
    content,
    importance: 0.5,
    context: {},
    entityId: null,
    kind: 'episode',
    createdAt: 1,
    updatedAt: 1,
    lastAccessedAt: 1,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    embedding: new Uint8Array(16),
    ...extra,
  };
}
