/**
 * @module api/views — the JSON shapes of replies and the REST-to-verb conversion of a recall
 * request, shared by the REST routes and the MCP tools so both answer alike.
 */
import { invalid } from '../errors/codes.ts';
import { memoryToJson, nowUs, type JsonObject, type MemoryJson, type MemoryView } from '../model/memory.ts';
import type { RecallHit } from '../recall/types.ts';
import type { RecallRequest, TimeRangeInput } from '../verbs/recall.ts';
import type { Static } from '@sinclair/typebox';
import type { RecallBody } from './requests.ts';

export function memoryJson(m: MemoryView): MemoryJson {
  return memoryToJson(m, nowUs());
}

/** The hit with its memory as JSON (fields written out: V8's `{ ...h, memory }` is a slow path). */
export function hitJson(h: RecallHit): unknown {
  const out: Record<string, unknown> = { memory: memoryJson(h.memory), score: h.score, relevance: h.relevance, strategy_details: h.strategy_details };
  if (h.contradicted_by !== undefined) out['contradicted_by'] = h.contradicted_by;
  return out;
}

type RecallBodyT = Static<typeof RecallBody>;

/** Validated recall body → verb input: plain-string strategies, `strategy` alias, `{start, end}` ranges. */
export function recallRequest(b: RecallBodyT): RecallRequest {
  const names = b.strategies ?? (b.strategy === undefined ? undefined : [b.strategy]);
  if (names === undefined) throw invalid('strategies is required (one or more of similarity, temporal, causal, analogical)');
  const range = (t: RecallBodyT['time_range']): TimeRangeInput | undefined =>
    t === undefined ? undefined : { start_us: t.start_us ?? t.start, end_us: t.end_us ?? t.end };
  return {
    ...b,
    cue_context: b.cue_context as string | JsonObject | undefined,
    time_range: range(b.time_range),
    strategies: names.map((s) => (typeof s === 'string' ? { strategy: s } : { ...s, time_range: range(s.time_range) })),
  };
}
