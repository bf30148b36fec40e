/**
 * @module shard/erasure — when the snapshot that erases forgotten content starts. That snapshot
 * rewrites the whole store, so it starts as late as FLASHBULB_ERASE_WITHIN_S safely allows: a
 * quarter of the window after the first forget, less twice the last snapshot's duration, and never
 * sooner than `min(1 s, window / 4)`. One snapshot then erases every forget before it: under
 * steady forgets the store is rewritten once per window, not once a second.
 */
export class ErasureTimer {
  readonly #windowMs: number;
  readonly #run: () => void;
  #timer: NodeJS.Timeout | null = null;
  /** How long the last snapshot took (set by the shard after each one). */
  lastSnapshotMs = 0;

  constructor(windowS: number, run: () => void) {
    this.#windowMs = windowS * 1000;
    this.#run = run;
  }

  /** Asks for an erasure snapshot; one already asked for and not yet started covers this request too. */
  request(): void {
    if (this.#timer) return;
    const quarter = this.#windowMs / 4;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#run();
      },
      Math.max(Math.min(1000, quarter), quarter - 2 * this.lastSnapshotMs),
    );
  }

  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
