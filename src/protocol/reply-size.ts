/**
 * @module protocol/reply-size — the small answer a shard sends instead of a reply larger than the
 * caller allowed (`tooLarge`, with the size by model/json-size `replyBytes`): the caller learns
 * the size without the reply being copied across threads or the network (router/reply-budget).
 * A reply the caller said it would probably make room for (`parkBelow`) is kept by its owner for
 * a moment (`ParkedReplies`) and handed over when the caller asks again with its token, so the
 * read runs once: computing it again cost a whole second recall (and counted its accesses twice).
 */
import { randomInt } from 'node:crypto';
import { replyBytes } from '../model/json-size.ts';

export { replyBytes };

/** The keys of a too-large answer; shard outputs are typed objects, none with these keys. */
const TOO_LARGE_KEY = '__flashbulbReplyTooLarge';
const PARKED_KEY = '__flashbulbReplyParked';

/** What a shard answers instead of a reply over `maxReplyBytes`: its size, and its token if kept. */
export type TooLarge = { readonly [TOO_LARGE_KEY]: number; readonly [PARKED_KEY]?: number };

export function tooLarge(bytes: number, token?: number): TooLarge {
  return token === undefined
    ? { [TOO_LARGE_KEY]: bytes }
    : { [TOO_LARGE_KEY]: bytes, [PARKED_KEY]: token };
}

/** The size a too-large answer reports, or null for any other value. */
export function tooLargeBytes(value: unknown): number | null {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, TOO_LARGE_KEY))
    return null;
  const bytes = (value as Record<string, unknown>)[TOO_LARGE_KEY];
  return typeof bytes === 'number' ? bytes : null;
}

/** The token under which the owner keeps a too-large reply, or undefined when it kept none. */
export function parkedToken(value: unknown): number | undefined {
  if (tooLargeBytes(value) === null) return undefined;
  const token = (value as Record<string, unknown>)[PARKED_KEY];
  return typeof token === 'number' ? token : undefined;
}

/** How long a kept reply waits for its second ask (which comes within a millisecond or two). */
export const PARKED_TTL_MS = 2_000;
/** At most this many bytes of replies kept per owner; past it a reply is not kept (asked again). */
export const PARKED_MAX_BYTES = 64 * 1024 * 1024;
const PARKED_MAX_ENTRIES = 64;

interface Parked {
  key: string;
  value: unknown;
  bytes: number;
  atMs: number;
}

/**
 * Replies over their first ask kept by their owner (a shard worker, a cluster node) for the
 * caller's second ask. Bounded in bytes and entries, each for {@link PARKED_TTL_MS}; expired ones
 * are dropped whenever one is kept or claimed (no timer wakes the owner). A token is random, is
 * claimed once, and only with the method and workspace it was kept for.
 */
export class ParkedReplies {
  readonly #byToken = new Map<number, Parked>();
  readonly #now: () => number;
  #bytes = 0;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Bytes kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Keeps `value`; its token, or undefined when the bounds leave no room for it. */
  park(key: string, value: unknown, bytes: number): number | undefined {
    this.#sweep();
    if (this.#byToken.size >= PARKED_MAX_ENTRIES || this.#bytes + bytes > PARKED_MAX_BYTES)
      return undefined;
    // Random, not counted: a second ask may reach another owner (a restarted shard, a cluster
    // node that took the partition over), which must not hand over a reply of its own.
    let token = randomInt(1, 2 ** 48);
    while (this.#byToken.has(token)) token = randomInt(1, 2 ** 48);
    this.#byToken.set(token, { key, value, bytes, atMs: this.#now() });
    this.#bytes += bytes;
    return token;
  }

  /** The kept reply of `token` if it is still kept for `key`; it is kept no longer. */
  claim(key: string, token: number): { value: unknown; bytes: number } | undefined {
    this.#sweep();
    const p = this.#byToken.get(token);
    if (p === undefined || p.key !== key) return undefined;
    this.#drop(token, p);
    return { value: p.value, bytes: p.bytes };
  }

  #sweep(): void {
    const before = this.#now() - PARKED_TTL_MS;
    // Kept in insertion order, so the expired ones come first.
    for (const [token, p] of this.#byToken) {
      if (p.atMs > before) break;
      this.#drop(token, p);
    }
  }

  #drop(token: number, p: Parked): void {
    this.#byToken.delete(token);
    this.#bytes -= p.bytes;
  }
}

/** The caller's offer to make room: a reply up to `below` bytes is kept in `parked` under `key`. */
export interface ParkOffer {
  readonly below: number;
  readonly parked: ParkedReplies;
  readonly key: string;
}

/** What a parked reply is kept under: one method of one workspace. */
export function parkKey(method: string, ws: string): string {
  return `${method}\u0000${ws}`;
}

/**
 * `value` and its size, or the too-large answer (with the whole size, for the caller to reserve)
 * when it is over `maxBytes`; no limit, and no size, when absent. With `park`, a too-large reply
 * within its offer is kept and the answer carries its token.
 */
export function withinBudget(
  value: unknown,
  maxBytes: number | undefined,
  park?: ParkOffer,
): { value: unknown; bytes?: number } {
  if (maxBytes === undefined) return { value };
  const bytes = replyBytes(value);
  if (bytes <= maxBytes) return { value, bytes };
  const token =
    park !== undefined && bytes <= park.below
      ? park.parked.park(park.key, value, bytes)
      : undefined;
  return { value: tooLarge(bytes, token) };
}

/**
 * The reply kept under `claim` for this call, re-measured against the second ask's `maxBytes`
 * (it was measured when kept); undefined when none is kept (expired, or never kept), and the call
 * is to be run again.
 */
function claimParked(
  parked: ParkedReplies,
  key: string,
  claim: number | undefined,
  maxBytes: number | undefined,
): { value: unknown; bytes?: number } | undefined {
  if (claim === undefined) return undefined;
  const got = parked.claim(key, claim);
  if (got === undefined) return undefined;
  if (maxBytes === undefined) return { value: got.value };
  return got.bytes <= maxBytes
    ? { value: got.value, bytes: got.bytes }
    : { value: tooLarge(got.bytes) };
}

/** How a call asks for its reply: the bounds of router/router `CallOptions`, as they cross. */
export interface ReplyAsk {
  readonly maxReplyBytes?: number | undefined;
  readonly parkBelow?: number | undefined;
  readonly claim?: number | undefined;
}

/**
 * The reply of one call at an owner: the one kept under `ask.claim` if it is still there, else
 * `run()`'s, measured against `ask.maxReplyBytes` and kept when too large but within `parkBelow`.
 */
export async function answerWithin(
  parked: ParkedReplies,
  key: string,
  ask: ReplyAsk,
  run: () => Promise<unknown>,
): Promise<{ value: unknown; bytes?: number }> {
  const kept = claimParked(parked, key, ask.claim, ask.maxReplyBytes);
  if (kept !== undefined) return kept;
  const value = await run();
  const offer = ask.parkBelow === undefined ? undefined : { below: ask.parkBelow, parked, key };
  return withinBudget(value, ask.maxReplyBytes, offer);
}
