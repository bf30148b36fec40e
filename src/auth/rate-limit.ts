/** @module auth/rate-limit — per-workspace token buckets, reads and writes counted separately. */
import { FlashbulbError } from '../errors/codes.ts';
import { steadyClock, type Clock } from '../model/clock.ts';

export type RateClass = 'read' | 'write';

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #rates: Record<RateClass, number>;
  readonly #buckets = new Map<string, Bucket>();
  readonly #clock: Clock;

  /** Rates are requests per second; bursts of one second's worth are allowed. 0 disables. `clock`: what refills the buckets. */
  constructor(rates: Record<RateClass, number>, clock: Clock = steadyClock) {
    this.#rates = rates;
    this.#clock = clock;
  }

  /** Takes one token or throws rate_limited with the seconds until one is available. */
  take(workspace: string, cls: RateClass, now: number = this.#clock.nowUs() / 1000): void {
    const rate = this.#rates[cls];
    if (rate === 0) return;
    const key = `${cls}:${workspace}`;
    const b = this.#buckets.get(key) ?? { tokens: rate, at: now };
    // A clock set back (a test's ManualClock) refills nothing rather than draining the bucket.
    b.tokens = Math.min(rate, b.tokens + (Math.max(0, now - b.at) / 1000) * rate);
    b.at = now;
    this.#buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const retryAfterS = Math.max(1, Math.ceil((1 - b.tokens) / rate));
    throw new FlashbulbError(
      'rate_limited',
      `workspace '${workspace}' exceeded its ${cls} rate limit of ${rate}/s`,
      { retryAfterS },
    );
  }
}
