/** @module verbs/recall-options — turning recall/prime options into validated shard inputs. */
import { invalid } from '../errors/codes.ts';
import type { JsonObject, JsonValue } from '../model/memory.ts';
import { DEFAULT_WEIGHTS, type ScoringWeights } from '../recall/types.ts';
import { checkNonNegative } from './validate.ts';

export type WeightsInput = Partial<Record<keyof ScoringWeights, number | undefined>>;

/** Weights default field by field; `max_age_us` / `reinforcement_cap` of 0 mean "default". */
export function scoringWeights(input: WeightsInput | undefined): ScoringWeights {
  const w = { ...DEFAULT_WEIGHTS };
  if (!input) return w;
  for (const key of ['w_relevance', 'w_recency', 'w_importance', 'w_reinforcement'] as const) {
    const v = input[key];
    if (v !== undefined) w[key] = checkNonNegative(`scoring_weights.${key}`, v);
  }
  for (const key of ['max_age_us', 'reinforcement_cap'] as const) {
    const v = input[key];
    if (v !== undefined && v !== 0) w[key] = positive(`scoring_weights.${key}`, v);
  }
  return w;
}

function positive(field: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw invalid(`${field} must be a positive number, got ${v}`);
  return v;
}

/** Renders cue context as `key: value` pairs (objects) or passes text through (strings). */
export function renderContext(ctx: string | JsonObject | undefined | null): string {
  if (ctx === undefined || ctx === null) return '';
  if (typeof ctx === 'string') return ctx;
  return Object.entries(ctx)
    .map(([k, v]) => `${k}: ${renderValue(v)}`)
    .join('; ');
}

function renderValue(v: JsonValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function intInRange(
  field: string,
  v: number | undefined,
  def: number,
  min: number,
  max: number,
  opts: { cap?: boolean } = {},
): number {
  if (v === undefined) return def;
  if (!Number.isInteger(v) || v < min)
    throw invalid(`${field} must be an integer ≥ ${min}, got ${v}`);
  if (v > max) {
    if (opts.cap) return max;
    throw invalid(`${field} must be at most ${max}, got ${v}`);
  }
  return v;
}
