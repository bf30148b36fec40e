/**
 * @module protocol/reply-size — the small answer a shard sends instead of a reply larger than the
 * caller allowed (`tooLarge`, with the size by model/json-size `replyBytes`): the caller learns
 * the size without the reply being copied across threads or the network (router/reply-budget).
 */
import { replyBytes } from '../model/json-size.ts';

export { replyBytes };

/** The one key of a too-large answer; shard outputs are typed objects, none with this key. */
const TOO_LARGE_KEY = '__flashbulbReplyTooLarge';

/** What a shard answers instead of a reply over `maxReplyBytes`: the reply's size. */
export type TooLarge = { readonly [TOO_LARGE_KEY]: number };

export function tooLarge(bytes: number): TooLarge {
  return { [TOO_LARGE_KEY]: bytes };
}

/** The size a too-large answer reports, or null for any other value. */
export function tooLargeBytes(value: unknown): number | null {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, TOO_LARGE_KEY))
    return null;
  const bytes = (value as Record<string, unknown>)[TOO_LARGE_KEY];
  return typeof bytes === 'number' ? bytes : null;
}

/**
 * `value` and its size, or the too-large answer (with the whole size, for the caller to reserve)
 * when it is over `maxBytes`; no limit, and no size, when absent.
 */
export function withinBudget(
  value: unknown,
  maxBytes: number | undefined,
): { value: unknown; bytes?: number } {
  if (maxBytes === undefined) return { value };
  const bytes = replyBytes(value);
  return bytes > maxBytes ? { value: tooLarge(bytes) } : { value, bytes };
}
