/**
 * @module verbs/validate — value rules shared by every transport (limits of DESIGN.md 14). Types
 * are checked by the transport's schema; these check ranges and sizes and name the field.
 */
import { invalid } from '../errors/codes.ts';
import { parseEdgeType } from '../model/edge.ts';
import { parseId } from '../model/ids.ts';
import { jsonShapeProblem } from '../model/json-shape.ts';
import type { JsonObject } from '../model/memory.ts';
import { isoFromUs, timeFrom, type TimeInput } from '../model/time.ts';
import { LIMITS } from '../model/limits.ts';
import type { EdgeInput } from '../protocol/shard.ts';

export { LIMITS };

export function checkContent(field: string, text: string): string {
  if (text.trim() === '') throw invalid(`${field} must not be empty`);
  const bytes = Buffer.byteLength(text);
  if (bytes > LIMITS.contentBytes)
    throw invalid(`${field} is ${bytes} bytes; the limit is ${LIMITS.contentBytes}`);
  return text;
}

export function checkUnit(field: string, value: number): number {
  if (!Number.isFinite(value) || value < 0 || value > 1)
    throw invalid(`${field} must be between 0.0 and 1.0, got ${value}`);
  return value;
}

/** Nesting depth and keys per object within JSON_LIMITS (model/json-shape.ts). */
export function checkJsonShape<T>(field: string, value: T): T {
  const problem = jsonShapeProblem(field, value);
  if (problem !== null) throw invalid(problem);
  return value;
}

export function checkContext(field: string, value: JsonObject): JsonObject {
  checkJsonShape(field, value);
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > LIMITS.contextBytes)
    throw invalid(`${field} is ${bytes} bytes serialised; the limit is ${LIMITS.contextBytes}`);
  return value;
}

export function checkEntity(field: string, value: string): string {
  if (value === '') throw invalid(`${field} must not be empty`);
  if (value.length > LIMITS.entityChars)
    throw invalid(`${field} is ${value.length} characters; the limit is ${LIMITS.entityChars}`);
  return value;
}

/** How far ahead of the server's clock an event time may be: within it, it counts as now; beyond, a 400. */
export const FUTURE_SKEW_US = 5 * 60 * 1_000_000;

/**
 * An event time (`occurred_at`, µs since the epoch): a non-negative integer, at most
 * FUTURE_SKEW_US ahead of `nowUs` (a client's clock running a little fast); the shard then writes
 * a time ahead of its own clock as its write time, so no memory happened in the future.
 */
export function checkOccurredAt(field: string, value: TimeInput, nowUs: number): number {
  const at = checkTime(field, value);
  if (at > nowUs + FUTURE_SKEW_US) {
    const shown = typeof value === 'string' ? `'${value}'` : `${at} (${isoFromUs(at)})`;
    throw invalid(
      `${field} ${shown} is in the future (the server's clock says ${nowUs}, ${isoFromUs(nowUs)}); an event time may be at most ${FUTURE_SKEW_US / 60_000_000} minutes ahead`,
    );
  }
  return at;
}

/** A speaker, conversation id or message id: like an entity id, not empty and at most 256 characters. */
export function checkName(field: string, value: string): string {
  return checkEntity(field, value);
}

export function checkId(field: string, value: string): string {
  const id = parseId(value);
  if (id === null)
    throw invalid(
      `${field} '${truncate(value)}' is not a memory id (32 hex characters or a 26-character ULID)`,
    );
  return id;
}

export function checkNonNegative(field: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw invalid(`${field} must be a non-negative number, got ${value}`);
  return value;
}

/** A written time (µs, or ISO 8601 text: model/time) → µs since the epoch; a bad one is a 400 naming the field. */
export function checkTime(field: string, value: TimeInput): number {
  const t = timeFrom(value);
  if ('problem' in t) throw invalid(`${field} ${t.problem}`);
  return t.us;
}

/** A field or its alias, each `[name, value]`: the one given (not undefined); both given is a 400. */
export function aliased<V>(
  field: readonly [string, V | undefined],
  alias: readonly [string, V | undefined],
): V | undefined {
  if (field[1] !== undefined && alias[1] !== undefined)
    throw invalid(`give ${field[0]} or its alias ${alias[0]}, not both`);
  return field[1] !== undefined ? field[1] : alias[1];
}

/** Longest TTL accepted: 100 years. */
const MAX_TTL_S = LIMITS.maxTtlS;

export interface ExpiryInput {
  ttl_s?: number | null | undefined;
  expires_at_us?: TimeInput | null | undefined;
  /** An alias of `expires_at_us` (the name replies use). */
  expires_at?: TimeInput | null | undefined;
}

/** An expiry as the shard takes it: a TTL counts from the shard's write time. */
export type ExpiryChoice = { ttlUs: number } | { atUs: number };

/**
 * The expiry that `ttl_s` or `expires_at_us` (alias `expires_at`; µs or ISO 8601) asks for:
 * undefined when neither is given, null when one is given as null (no expiry). Both at once, a TTL
 * that is not positive, or a time that has already passed is a 400.
 */
export function checkExpiry(input: ExpiryInput, nowUs: number): ExpiryChoice | null | undefined {
  const ttl = input.ttl_s;
  const name =
    input.expires_at_us === undefined && input.expires_at !== undefined
      ? 'expires_at'
      : 'expires_at_us';
  const written = aliased(['expires_at_us', input.expires_at_us], ['expires_at', input.expires_at]);
  if (ttl != null && written != null) throw invalid(`give ttl_s or ${name}, not both`);
  if (ttl != null) return { ttlUs: Math.round(checkTtl('ttl_s', ttl) * 1e6) };
  if (written != null) {
    const at = checkTime(name, written);
    const shown = typeof written === 'string' ? `'${written}'` : `${at} (${isoFromUs(at)})`;
    if (at <= nowUs)
      throw invalid(`${name} ${shown} is not in the future (now is ${nowUs}, ${isoFromUs(nowUs)})`);
    if (at > nowUs + MAX_TTL_S * 1e6) throw invalid(`${name} ${shown} is more than 100 years away`);
    return { atUs: at };
  }
  return ttl === null || written === null ? null : undefined;
}

export function checkTtl(field: string, ttl: number): number {
  if (!Number.isFinite(ttl) || ttl <= 0)
    throw invalid(`${field} must be a positive number of seconds, got ${ttl}`);
  if (ttl > MAX_TTL_S) throw invalid(`${field} is ${ttl} s; the limit is ${MAX_TTL_S} (100 years)`);
  return ttl;
}

export interface EdgeSpec {
  target_id: string;
  edge_type: string;
  confidence?: number | undefined;
}

export function checkEdges(field: string, edges: readonly EdgeSpec[]): EdgeInput[] {
  return edges.map((e, i) => {
    const edgeType = parseEdgeType(e.edge_type);
    if (edgeType === null)
      throw invalid(`${field}[${i}].edge_type '${truncate(e.edge_type)}' is not a known edge type`);
    return {
      targetId: checkId(`${field}[${i}].target_id`, e.target_id),
      edgeType,
      confidence:
        e.confidence === undefined ? 1 : checkUnit(`${field}[${i}].confidence`, e.confidence),
    };
  });
}

function truncate(s: string): string {
  return s.length > 64 ? `${s.slice(0, 64)}…` : s;
}
