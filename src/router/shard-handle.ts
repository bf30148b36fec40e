/**
 * @module router/shard-handle — what the router knows of one shard: its lifecycle (one union,
 * changed only through guarded transitions), the worker running it now (a restart starts
 * another), its requests in flight (per workspace too), why it is down (its log failed, it
 * crashed) until it is restarted; and how readiness, the log and a refused request word a shard
 * that cannot answer.
 */
import type { Worker } from 'node:worker_threads';
import { FlashbulbError } from '../errors/codes.ts';
import { Lifecycle, type Transitions } from '../model/lifecycle.ts';
import { BatchPoster } from '../protocol/batch-post.ts';
import type { ShardRequest } from '../protocol/shard.ts';
import type { Took } from '../tracing/index.ts';

export interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  ws: string;
  sentAt: number;
  /** Tracing on: records the shard's own span from the `took` its reply carries. */
  took?: (took: Took) => void;
  /** Told the reply's size when the shard measured it (router/router CallOptions). */
  bytes?: (bytes: number) => void;
}

/**
 * A shard that has been silent this long (it sends metrics every second) is blocked, and one whose
 * oldest request has waited this long with no reply since is not answering: readiness says so.
 */
export const UNRESPONSIVE_MS = 5000;

/** Why a shard is down until it is restarted from its files: its log failed, or its worker ended on its own. */
export interface Down {
  cause: 'storage' | 'crash';
  why: string;
}

/**
 * The router's view of one shard, as one union (ARCHITECTURE.md draws it): starting (its first
 * worker recovering), ready, log failed (its worker refuses every request; a restart is due),
 * crashed (its worker ended on its own; a restart is due), restarting (the old worker stopped, a
 * new one recovering on the files), stopping (asked to stop), stopped.
 */
export type HandlePhase =
  | 'starting'
  | 'ready'
  | 'log-failed'
  | 'crashed'
  | 'restarting'
  | 'stopping'
  | 'stopped';

export const HANDLE_TRANSITIONS: Transitions<HandlePhase> = {
  starting: ['ready', 'stopping'],
  ready: ['log-failed', 'crashed', 'stopping'],
  'log-failed': ['restarting', 'stopping'],
  crashed: ['restarting', 'stopping'],
  restarting: ['ready', 'log-failed', 'crashed', 'stopping'],
  stopping: ['stopped'],
  stopped: [],
};

/**
 * Entered without a line of the handle's own: the app logs a start, a crash and a stop, and the
 * shard its failed log; a restart is what only the handle sees begin.
 */
export const HANDLE_ROUTINE: readonly HandlePhase[] = [
  'ready',
  'log-failed',
  'crashed',
  'stopping',
  'stopped',
];

/** One worker thread of a shard, from its start to its exit (a restart starts another). */
export class WorkerRun {
  readonly worker: Worker;
  /** Requests sent in one turn of the event loop cross as one message. */
  readonly requests: BatchPoster<ShardRequest>;
  readonly startedAt = performance.now();
  /** Set when the thread has ended. */
  exited = false;
  /** The error the worker ended with, when it ended on its own. */
  crashError: string | null = null;
  /** Why its final snapshot failed, or that it did not stop in time. */
  stopError: string | null = null;
  /** Its stop, once asked for (asked once): resolves to stopError. */
  stopping: Promise<string | null> | null = null;

  constructor(worker: Worker) {
    this.worker = worker;
    this.requests = new BatchPoster(worker);
  }
}

export class ShardHandle {
  readonly pending = new Map<number, Pending>();
  /** In-flight requests per workspace. */
  readonly perWorkspace = new Map<string, number>();
  readonly #phase: Lifecycle<HandlePhase>;
  #run: WorkerRun;
  /** Why the shard is down (log failed, crashed), kept while it restarts: readiness says it. */
  #down: Down | null = null;
  /** When it is to be restarted (performance.now()), while it waits for that. */
  restartAt: number | null = null;
  /** Restarts in a row, each after the last one went down within RESTART_RESET_MS (the wait doubles with each). */
  restarts = 0;
  /** When the shard last sent anything, and last replied (performance.now()). */
  lastHeardAt = performance.now();
  lastReplyAt = performance.now();

  readonly #shard: number;

  constructor(shard: number, worker: Worker, log: (line: string) => void) {
    this.#shard = shard;
    this.#run = new WorkerRun(worker);
    this.#phase = new Lifecycle(HANDLE_TRANSITIONS, {
      name: `shard ${shard}`,
      initial: 'starting',
      log,
      routine: HANDLE_ROUTINE,
    });
  }

  get phase(): HandlePhase {
    return this.#phase.state;
  }

  /** The worker running now (or the one that ended, until a restart starts the next). */
  get run(): WorkerRun {
    return this.#run;
  }

  get down(): Down | null {
    return this.#down;
  }

  /** Whether requests go to the worker: ready, or refusing them itself because its log failed (while it runs). */
  get accepting(): boolean {
    return this.#phase.is('ready', 'log-failed') && !this.#run.exited;
  }

  /** Whether its worker is recovering (a start or a restart). */
  get recovering(): boolean {
    return this.#phase.is('starting', 'restarting');
  }

  /** The worker recovered: it serves, and the reason it was down is over. */
  ready(): void {
    if (!this.#phase.transition('ready')) return;
    this.#down = null;
    this.restartAt = null;
  }

  /** Its log failed or its worker ended on its own: false when that changes nothing now (stopping, down already). */
  wentDown(down: Down): boolean {
    if (!this.#phase.transition(down.cause === 'storage' ? 'log-failed' : 'crashed', down.why))
      return false;
    this.#down = down;
    return true;
  }

  /** The restart begins: the old worker is stopped, then `attach` hands over the next. */
  restarting(): boolean {
    this.restartAt = null;
    return this.#phase.transition('restarting', this.#down?.why ?? '');
  }

  attach(worker: Worker): void {
    this.#run = new WorkerRun(worker);
    this.lastHeardAt = performance.now();
    this.lastReplyAt = performance.now();
  }

  /** Asked to stop: false when it is stopping or stopped already. */
  stopping(): boolean {
    return this.#phase.transition('stopping');
  }

  stopped(): void {
    this.#phase.transition('stopped');
  }

  add(id: number, p: Pending): void {
    this.pending.set(id, p);
    this.perWorkspace.set(p.ws, (this.perWorkspace.get(p.ws) ?? 0) + 1);
  }

  take(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    const n = (this.perWorkspace.get(p.ws) ?? 1) - 1;
    if (n === 0) this.perWorkspace.delete(p.ws);
    else this.perWorkspace.set(p.ws, n);
    return p;
  }

  /** Why this shard cannot answer now, as readiness says it; null when it can. */
  problem(now: number, maxInflight: number): string | null {
    const oldest = this.pending.values().next();
    const at = {
      ready: this.accepting,
      down: this.#down,
      pendingSize: this.pending.size,
      lastHeardAt: this.lastHeardAt,
      lastReplyAt: this.lastReplyAt,
    };
    return shardProblem(
      { ...at, oldestSentAt: oldest.done ? null : oldest.value.sentAt },
      now,
      maxInflight,
    );
  }

  /**
   * The error a request for workspace `ws` gets now, or null when it may be sent: the shard is
   * down (in the words of readiness), at its in-flight limit, or the workspace at its own.
   */
  refusal(
    ws: string,
    limits: { maxInflight: number; perWorkspace: number },
  ): FlashbulbError | null {
    const shard = this.#shard;
    if (!this.accepting) {
      if (!this.#down) return new FlashbulbError('unavailable', `shard ${shard} is not available`);
      const why = shardProblem(
        {
          ready: false,
          down: this.#down,
          pendingSize: 0,
          oldestSentAt: null,
          lastHeardAt: this.lastHeardAt,
          lastReplyAt: this.lastReplyAt,
        },
        0,
        1,
      );
      return new FlashbulbError('unavailable', `shard ${shard} ${why}`, {
        retryAfterS: secondsToRestart(this, performance.now()),
      });
    }
    if (this.pending.size >= limits.maxInflight)
      return new FlashbulbError('unavailable', `shard ${shard} is overloaded; retry shortly`);
    if (ws !== '' && (this.perWorkspace.get(ws) ?? 0) >= limits.perWorkspace) {
      return new FlashbulbError(
        'unavailable',
        `workspace '${ws}' has ${limits.perWorkspace} requests in flight on shard ${shard} (its limit); retry shortly`,
        { retryAfterS: 1 },
      );
    }
    return null;
  }
}

/** Whole seconds until a down shard's restart (at least 1: one that is recovering is nearly back), for Retry-After. */
export function secondsToRestart(h: { restartAt: number | null }, now: number): number {
  return h.restartAt === null ? 1 : Math.max(1, Math.ceil((h.restartAt - now) / 1000));
}

/** Why a shard cannot answer now, or null when it can. Pure, for the readiness probe and its tests. */
export function shardProblem(
  h: {
    ready: boolean;
    down: Down | null;
    pendingSize: number;
    oldestSentAt: number | null;
    lastHeardAt: number;
    lastReplyAt: number;
  },
  now: number,
  maxInflight: number,
): string | null {
  if (h.down?.cause === 'storage')
    return `cannot write its log (${h.down.why}); it refuses requests and is restarted from its files until that works`;
  if (h.down?.cause === 'crash')
    return `crashed (${h.down.why}); it is restarted from its files until that works`;
  if (!h.ready) return 'is not running';
  if (now - h.lastHeardAt > UNRESPONSIVE_MS)
    return `has sent nothing for ${Math.round((now - h.lastHeardAt) / 1000)} s`;
  if (h.pendingSize >= maxInflight) return `is at its in-flight limit of ${maxInflight} requests`;
  if (h.oldestSentAt !== null && now - Math.max(h.oldestSentAt, h.lastReplyAt) > UNRESPONSIVE_MS) {
    return `has not answered for ${Math.round((now - Math.max(h.oldestSentAt, h.lastReplyAt)) / 1000)} s`;
  }
  return null;
}

/** Why a shard's worker ended, as readiness and the log say it. */
export function crashReason(err: Error, heapMb: number | undefined): string {
  if ((err as NodeJS.ErrnoException).code !== 'ERR_WORKER_OUT_OF_MEMORY') return err.message;
  const limit = heapMb ? `FLASHBULB_SHARD_HEAP_MB=${heapMb}` : "the process's heap limit";
  return `its JavaScript heap is full (${limit}; see docs/operations/limits.md): ${err.message}`;
}
