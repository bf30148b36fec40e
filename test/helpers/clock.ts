/**
 * A clock that moves only when a test moves it, for code that takes a `Clock` (model/clock.ts):
 * expiry, time scopes and windows, contradiction edges, the reflection scheduler, reflect sessions,
 * rate limits. Timers and I/O keep real time.
 */
import type { Clock } from '../../src/model/clock.ts';

export class ManualClock implements Clock {
  #us: number;

  constructor(startMs: number) {
    this.#us = startMs * 1000;
  }

  nowUs(): number {
    return this.#us;
  }

  /** Sets the time, in milliseconds since the epoch. */
  setMs(ms: number): void {
    this.#us = ms * 1000;
  }

  /** Moves the time on by `ms` milliseconds. */
  advanceMs(ms: number): void {
    this.#us += ms * 1000;
  }
}
