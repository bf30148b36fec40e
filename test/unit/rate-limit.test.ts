/**
 * Per-workspace token buckets on a clock the test sets: a burst of one second's worth, refills with
 * the clock's time, and a clock set back neither refills nor drains a bucket.
 */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/auth/rate-limit.ts';
import { ManualClock } from '../helpers/clock.ts';

describe('rate limiter', () => {
  it('allows a burst of one second’s worth, then refills as the clock moves', () => {
    const clock = new ManualClock(Date.UTC(2001, 0, 1));
    const limiter = new RateLimiter({ read: 0, write: 3 }, clock);
    for (let i = 0; i < 3; i++) limiter.take('w', 'write');
    expect(() => limiter.take('w', 'write')).toThrow(
      expect.objectContaining({ code: 'rate_limited' }),
    );
    limiter.take('w', 'read'); // 0 disables the class
    clock.advanceMs(334);
    limiter.take('w', 'write');
    expect(() => limiter.take('w', 'write')).toThrow(
      expect.objectContaining({ code: 'rate_limited' }),
    );
  });

  it('a clock set back leaves the tokens as they were', () => {
    const clock = new ManualClock(Date.UTC(2001, 0, 1));
    const limiter = new RateLimiter({ read: 2, write: 0 }, clock);
    limiter.take('w', 'read');
    clock.advanceMs(-60_000);
    limiter.take('w', 'read');
    expect(() => limiter.take('w', 'read')).toThrow(
      expect.objectContaining({ code: 'rate_limited' }),
    );
  });
});
