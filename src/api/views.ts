/**
 * @module api/views — the JSON shapes of replies and the REST-to-verb conversion of a recall
 * request, shared by the REST routes and the MCP tools so both answer alike. Every time a reply
 * holds as integer microseconds has an ISO 8601 twin beside it, named with `_iso` in place of
 * `_us` (or after the name: `created_at_iso`), so an agent reads dates without arithmetic.
 */
import type { Edge } from '../model/edge.ts';
import {
  memoryToJson,
  nowUs,
  type JsonObject,
  type MemoryJson,
  type MemoryView,
} from '../model/memory.ts';
import { isoFromUs } from '../model/time.ts';
import type { RecallHit } from '../recall/types.ts';
import type { RecallRequest } from '../verbs/recall.ts';
import type { Static } from '@sinclair/typebox';
import type { RecallBody } from './recall-requests.ts';

/** A memory in a reply: its JSON, and the ISO twins of its five times. */
export interface MemoryReply extends MemoryJson {
  created_at_iso: string;
  occurred_at_iso: string;
  updated_at_iso: string;
  last_accessed_at_iso: string;
  expires_at_iso: string | null;
}

export function memoryJson(m: MemoryView): MemoryReply {
  const out = memoryToJson(m, nowUs()) as MemoryReply;
  out.created_at_iso = isoFromUs(m.createdAt);
  out.occurred_at_iso = isoFromUs(m.occurredAt);
  out.updated_at_iso = isoFromUs(m.updatedAt);
  out.last_accessed_at_iso = isoFromUs(m.lastAccessedAt);
  out.expires_at_iso = m.expiresAt === null ? null : isoFromUs(m.expiresAt);
  return out;
}

/** An edge in a reply, with `timestamp_iso`. */
export function edgeJson(e: Edge): Edge & { timestamp_iso: string } {
  return { ...e, timestamp_iso: isoFromUs(e.timestamp_us) };
}

/** A reply object whose named µs fields get their `<name>_iso` twins (null stays null). */
export function withIso<O extends object>(o: O, fields: ReadonlyArray<keyof O & string>): O {
  const out: Record<string, unknown> = { ...(o as Record<string, unknown>) };
  for (const f of fields) {
    const v = out[f];
    if (typeof v === 'number') out[`${f}_iso`] = isoFromUs(v);
    else if (v === null) out[`${f}_iso`] = null;
  }
  return out as O;
}

/** The hit with its memory as JSON (fields written out: V8's `{ ...h, memory }` is a slow path). */
export function hitJson(h: RecallHit): unknown {
  const details = h.strategy_details.map((d) =>
    d.strategy === 'temporal' ? { ...d, timestamp_iso: isoFromUs(d.timestamp) } : d,
  );
  const out: Record<string, unknown> = {
    memory: memoryJson(h.memory),
    score: h.score,
    relevance: h.relevance,
    strategy_details: details,
  };
  if (h.contradicted_by !== undefined) out['contradicted_by'] = h.contradicted_by;
  return out;
}

type RecallBodyT = Static<typeof RecallBody>;

/**
 * Validated recall body → verb input: plain-string strategies, the `strategy` alias, and
 * `["similarity"]` when neither is given (as MCP, gRPC and the HEBBS SDK default).
 */
export function recallRequest(b: RecallBodyT): RecallRequest {
  const names = b.strategies ?? [b.strategy ?? 'similarity'];
  return {
    ...b,
    cue_context: b.cue_context as string | JsonObject | undefined,
    strategies: names.map((s) => (typeof s === 'string' ? { strategy: s } : s)),
  };
}
