/**
 * @module model/clock — the time source for code whose behaviour depends on "now" (expiry, time
 * scopes, prime windows, contradiction edges, the reflection scheduler, reflect sessions, rate
 * limits). It is passed in rather than read from `Date.now()`, so tests can set the time by hand
 * instead of waiting for it to pass.
 */

export interface Clock {
  /** Microseconds since the Unix epoch. */
  nowUs(): number;
}

/** The real time. */
export const wallClock: Clock = { nowUs: () => Date.now() * 1000 };

/** The real time that never steps back (the process's monotonic clock from its start), for measuring intervals. */
export const steadyClock: Clock = {
  nowUs: () => (performance.timeOrigin + performance.now()) * 1000,
};
