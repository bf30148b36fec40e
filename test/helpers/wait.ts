/**
 * Waiting in tests: for a condition, never for a stretch of time. `until` polls a predicate until
 * it holds or a deadline passes (and then fails naming what it waited for); `untilIdle` waits until
 * the server reports no background work (contradiction checks, vector indexing) left, which is
 * what a "nothing happened" check must wait for before asserting; `sleep` is the one fixed pause,
 * for the few places that need time itself to pass (each says why).
 */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One turn of the event loop: callbacks already due (settled promises, I/O done) run first. Not a wait for time. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface UntilOptions {
  /** What is awaited, for the failure message; a function is read at the deadline (the last state seen). */
  what: string | (() => string);
  /** How long to keep trying (default 10 s). */
  deadlineMs?: number;
  /** Pause between tries (default 20 ms). */
  everyMs?: number;
  /** A check that throws counts as not yet (a cluster recovering, a server restarting) instead of failing the wait. */
  retryErrors?: boolean;
  /** A check still running at the deadline (or 1 s on, if later) counts as not yet: a request that never answers cannot outlive the wait. */
  cutAtDeadline?: boolean;
}

/** Resolves with the first truthy value of `check`; rejects naming `what` once the deadline passes. */
export async function until<T>(
  check: () => T | Promise<T>,
  opts: UntilOptions,
): Promise<NonNullable<T>> {
  const deadlineMs = opts.deadlineMs ?? 10_000;
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await attempt(check, opts, deadline);
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      const what = typeof opts.what === 'string' ? opts.what : opts.what();
      throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    }
    await sleep(opts.everyMs ?? 20);
  }
}

/** One try of `check`: a throw is a miss with `retryErrors`, a check still running at the deadline one with `cutAtDeadline`. */
async function attempt<T>(
  check: () => T | Promise<T>,
  opts: UntilOptions,
  deadline: number,
): Promise<T | false> {
  const tried = Promise.resolve().then(check);
  const settled = opts.retryErrors ? tried.catch(() => false as const) : tried;
  if (!opts.cutAtDeadline) return settled;
  let timer: NodeJS.Timeout | undefined;
  const bound = Math.max(1000, deadline - Date.now());
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), bound)));
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Proves a subscriber has every push it will get for what it was fed so far, instead of waiting a
 * while and hoping none is late: `produced` is the server's own count (the registry's `pushed`),
 * which is final once the feed or write that caused the pushes has been answered, or once any
 * push of a chunk has arrived (a chunk's pushes are produced together). Waits until `received`
 * reaches it; an extra push the server should not have made is then seen by the caller's asserts.
 */
export async function untilAllPushes(
  produced: () => number,
  received: () => number,
  opts: { deadlineMs?: number } = {},
): Promise<void> {
  await until(() => received() >= produced(), {
    what: 'every push the server produced',
    deadlineMs: opts.deadlineMs ?? 5_000,
    everyMs: 10,
  });
}

/**
 * Waits until the wall clock (the server's, in-process or on this machine) has passed `us` µs since
 * the epoch, so the next write gets a later timestamp than one already made. The condition is the
 * clock itself, read, not a pause guessed to be long enough.
 */
export async function untilClockPasses(us: number): Promise<void> {
  await until(() => Date.now() * 1000 > us, {
    what: `the clock to pass ${us} µs`,
    deadlineMs: 5_000,
    everyMs: 1,
  });
}

/** The sum of `flashbulb_background_backlog` over shards and kinds of work, from Prometheus text. */
export function backlogOf(metricsText: string): number {
  let total = 0;
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('flashbulb_background_backlog{')) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Shards report their backlog about once a second; two zero readings a report apart mean idle. */
const REPORT_MS = 1100;

/**
 * Waits until the server has no background work left: the backlog gauges read zero twice, one
 * shard report apart (a single zero may predate the report of work just queued).
 */
export async function untilIdle(
  metrics: () => Promise<string>,
  opts: { deadlineMs?: number } = {},
): Promise<void> {
  const deadline = opts.deadlineMs ?? 30_000;
  await until(async () => backlogOf(await metrics()) === 0, {
    what: 'an empty background backlog',
    deadlineMs: deadline,
    everyMs: 50,
  });
  await sleep(REPORT_MS); // one shard report: no condition tells that a report has happened
  await until(async () => backlogOf(await metrics()) === 0, {
    what: 'an empty background backlog (confirmed)',
    deadlineMs: deadline,
    everyMs: 50,
  });
}
