/**
 * @module shard/store/records — the store's vocabulary: the records it applies (live, carrying the
 * memory objects the state keeps) and their stored form, which the log and snapshots hold
 * (shard/persist frames them); one converts to the other only at a frame. Every record is idempotent (it carries absolute
 * state; `unsource` states its one delta as a removal, which applied twice removes the same ids),
 * so a fuzzy snapshot plus the log replays exactly.
 */
import { cutAtDepth, withinDepth } from '../../model/json-shape.ts';
import type { Edge, EdgeType } from '../../model/edge.ts';
import {
  MEMORY_KINDS,
  type JsonObject,
  type JsonValue,
  type MemoryKind,
  type MemoryRecord,
} from '../../model/memory.ts';
import type { VectorSlab } from './vector-slab.ts';
import type { PendingContradiction } from '../../protocol/reflection.ts';

/** A memory as persisted: the embedding travels as raw little-endian float32 bytes. */
export interface StoredMemory {
  id: string;
  content: string;
  importance: number;
  context: JsonObject;
  entityId: string | null;
  kind: MemoryKind;
  createdAt: number;
  updatedAt: number;
  lastAccessedAt: number;
  accessCount: number;
  logicalClock: number;
  sourceMemoryIds: string[] | null;
  supersededBy: string | null;
  /** Absent in files written before expiry existed. */
  expiresAt?: number | null;
  /**
   * Written only when they differ from their defaults (occurredAt: createdAt; the others: null),
   * so a memory without them is stored as before they existed, and files written before then load
   * unchanged.
   */
  occurredAt?: number;
  speaker?: string | null;
  conversationId?: string | null;
  messageId?: string | null;
  embedding: Uint8Array;
  /**
   * Written by snapshots only, when known: the memory's density (shard/index/density), so that a
   * restart does not compute it again (at 1M memories, an exact scan of 512 vectors each: ~100 s
   * of CPU, and every recall meanwhile computing its candidates'). Absent in the log and in files
   * written before it; a memory without it has its density computed as before.
   */
  density?: number;
}

/** What forget leaves behind: never the content, only its SHA-256. */
export interface Tombstone {
  memory_id: string;
  forgotten_at: number;
  criteria: JsonObject;
  content_sha256: string;
}

/** Records that read the same live and in a frame (no memory inside). */
export type PlainRecord =
  | { t: 'del'; ws: string; id: string }
  | { t: 'edge'; ws: string; e: Edge }
  | { t: 'unedge'; ws: string; s: string; d: string; y: EdgeType }
  | { t: 'tomb'; ws: string; tomb: Tombstone }
  | { t: 'access'; ws: string; id: string; n: number; at: number }
  | { t: 'drop'; ws: string }
  | { t: 'pending'; ws: string; p: PendingContradiction }
  | { t: 'unpending'; ws: string; id: string };

/**
 * What ops produce and state applies: memories as the live records the state keeps. Encoded to
 * a {@link LogRecord} only when a frame is written (log, snapshot, stream), never decoded back.
 */
export type LiveRecord =
  | PlainRecord
  | { t: 'put'; ws: string; m: MemoryRecord; density?: number }
  /**
   * A memory written again with some of its sources removed (an insight that lost sources): `m`
   * is its whole new state except `m.sourceMemoryIds`, which is not read; its sources become the
   * current ones less `lost`. So the record costs the sources lost, not every source kept.
   */
  | { t: 'unsource'; ws: string; m: MemoryRecord; lost: string[] };

/** What a frame holds (the log, snapshots, the cluster stream): memories in their stored form. */
export type LogRecord =
  | PlainRecord
  | { t: 'put'; ws: string; m: StoredMemory }
  /** See {@link LiveRecord}; `m.sourceMemoryIds` is written as null. */
  | { t: 'unsource'; ws: string; m: StoredMemory; lost: string[] };

/** The frame form of a live record (the vector viewed as bytes, not copied). */
export function encodeRecord(r: LiveRecord): LogRecord {
  if (r.t === 'put') return { t: 'put', ws: r.ws, m: toStored(r.m) };
  if (r.t === 'unsource')
    return {
      t: 'unsource',
      ws: r.ws,
      m: { ...toStored(r.m), sourceMemoryIds: null },
      lost: r.lost,
    };
  return r;
}

/** The live form of a record read from a frame; `slab` (recovery) packs vectors together. */
export function decodeRecord(r: LogRecord, slab: VectorSlab | null = null): LiveRecord {
  if (r.t === 'put') {
    const m = fromStored(r.m, slab);
    const d = r.m.density;
    return typeof d === 'number'
      ? { t: 'put', ws: r.ws, m, density: d }
      : { t: 'put', ws: r.ws, m };
  }
  if (r.t === 'unsource')
    return {
      t: 'unsource',
      ws: r.ws,
      m: fromStored({ ...r.m, sourceMemoryIds: null }, slab),
      lost: r.lost,
    };
  return r;
}

export interface SnapshotHeader {
  t: 'snap';
  format: 1;
  shard: number;
  /** The first log segment that must be replayed on top of this snapshot. */
  walSeq: number;
  createdAt: number;
}

export interface SnapshotFooter {
  t: 'end';
  records: number;
}

/** The memory as frames store it, its vector viewed as bytes (not copied). */
export function toStored(m: MemoryRecord): StoredMemory {
  const e = m.embedding;
  const s: StoredMemory = {
    id: m.id,
    content: m.content,
    importance: m.importance,
    context: m.context,
    entityId: m.entityId,
    kind: m.kind,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    lastAccessedAt: m.lastAccessedAt,
    accessCount: m.accessCount,
    logicalClock: m.logicalClock,
    sourceMemoryIds: m.sourceMemoryIds,
    supersededBy: m.supersededBy,
    expiresAt: m.expiresAt,
    embedding: new Uint8Array(e.buffer, e.byteOffset, e.byteLength),
  };
  if (m.occurredAt !== m.createdAt) s.occurredAt = m.occurredAt;
  if (m.speaker !== null) s.speaker = m.speaker;
  if (m.conversationId !== null) s.conversationId = m.conversationId;
  if (m.messageId !== null) s.messageId = m.messageId;
  return s;
}

/** The record a stored memory decodes to; `slab` (recovery) packs the vector with others. */
export function fromStored(s: StoredMemory, slab: VectorSlab | null = null): MemoryRecord {
  const bytes = s.embedding;
  let embedding: Float32Array;
  if (slab) embedding = slab.copy(bytes);
  else {
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    embedding = new Float32Array(copy.buffer);
  }
  // Contexts stored before nesting was limited may be thousands of levels deep; no reply could
  // carry them (structured clone and JSON recurse), so they are cut at the limit on load.
  const context = detachJson(
    withinDepth(s.context) ? s.context : (cutAtDepth(s.context) as JsonObject),
  ) as JsonObject;
  // The kind is one of a few strings: share the constant instead of keeping one decoded copy per memory.
  const kind = MEMORY_KINDS.find((k) => k === s.kind) ?? s.kind;
  // Every field written out (not spread): the record keeps them all in the object itself, with no
  // separate property store, and fields of other versions' files are not carried along.
  return {
    id: detach(s.id),
    content: detach(s.content),
    importance: s.importance,
    context,
    entityId: s.entityId === null ? null : detach(s.entityId),
    kind,
    createdAt: s.createdAt,
    occurredAt: s.occurredAt ?? s.createdAt,
    updatedAt: s.updatedAt,
    lastAccessedAt: s.lastAccessedAt,
    accessCount: s.accessCount,
    logicalClock: s.logicalClock,
    sourceMemoryIds: s.sourceMemoryIds === null ? null : s.sourceMemoryIds.map(detach),
    supersededBy: s.supersededBy === null ? null : detach(s.supersededBy),
    expiresAt: s.expiresAt ?? null,
    speaker: s.speaker == null ? null : detach(s.speaker),
    conversationId: s.conversationId == null ? null : detach(s.conversationId),
    messageId: s.messageId == null ? null : detach(s.messageId),
    embedding,
  };
}

/**
 * V8 keeps a substring of 13 or more characters as a slice of its parent, and msgpackr decodes a
 * frame's strings as slices of one string holding all of them (field names, the workspace, the
 * kind...): a kept slice keeps that whole parent alive. A copy is a string of its own. Pure ASCII
 * (nearly every id and most text) is copied through a Buffer; anything else through JSON, which
 * round-trips every JS string exactly (lone surrogates included).
 */
export function detach(s: string): string {
  if (s.length < 13) return s;
  if (Buffer.byteLength(s, 'utf8') === s.length) return Buffer.from(s, 'latin1').toString('latin1');
  return JSON.parse(JSON.stringify(s)) as string;
}

/** The JSON value with its strings (keys are interned by the decoder) detached; see {@link detach}. */
function detachJson(v: JsonValue): JsonValue {
  if (typeof v === 'string') return detach(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = detachJson(v[i] as JsonValue);
    return v;
  }
  for (const k of Object.keys(v)) v[k] = detachJson(v[k] as JsonValue);
  return v;
}
