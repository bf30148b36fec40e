/**
 * @module native-bench/lib/closed-loop — N clients that each send one request, wait for its reply
 * and send the next, for a fixed time or a fixed number of operations; every latency is kept.
 */

/**
 * One operation; resolves true on success (its latency is the whole call), false on an error
 * reply, or a number: success, with the latency in ms of the part the operation timed itself
 * (when the call includes untimed set-up).
 */
export type Operation = () => Promise<boolean | number>;

export interface LoopOptions {
  concurrency: number;
  /** Stop after this long (ms), unless `ops` is given. */
  durationMs: number;
  /** Stop after this many operations in total. */
  ops?: number;
  /** Stop every client after the first failed operation (bulk loading). */
  stopOnError?: boolean;
}

export interface LoopResult {
  latenciesMs: number[];
  errors: number;
  seconds: number;
  firstError: string | null;
}

export async function runClosedLoop(op: Operation, opts: LoopOptions): Promise<LoopResult> {
  const result: LoopResult = { latenciesMs: [], errors: 0, seconds: 0, firstError: null };
  const start = performance.now();
  const deadline = start + opts.durationMs;
  let issued = 0;
  const more = (): boolean =>
    !(opts.stopOnError === true && result.errors > 0) &&
    (opts.ops === undefined ? performance.now() < deadline : issued < opts.ops);
  const client = async (): Promise<void> => {
    while (more()) {
      issued += 1;
      const t0 = performance.now();
      const ok = await op().catch((err: unknown) => {
        result.firstError ??= err instanceof Error ? err.message : String(err);
        return false;
      });
      if (ok === true) result.latenciesMs.push(performance.now() - t0);
      else if (typeof ok === 'number') result.latenciesMs.push(ok);
      else result.errors += 1;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, client));
  result.seconds = (performance.now() - start) / 1000;
  return result;
}
