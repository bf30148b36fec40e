/**
 * @module router/shard-handle — what the router knows of one shard worker: its requests in flight
 * (per workspace too), whether it is ready, and why it is down (its log failed, it crashed) until
 * it is restarted; and how readiness and the log word a shard that cannot answer.
 */
import type { Worker } from 'node:worker_threads';
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

export class ShardHandle {
  readonly worker: Worker;
  /** Requests sent in one turn of the event loop cross as one message. */
  readonly requests: BatchPoster<ShardRequest>;
  readonly pending = new Map<number, Pending>();
  /** In-flight requests per workspace. */
  readonly perWorkspace = new Map<string, number>();
  ready = false;
  stopped = false;
  /** Why the shard's final snapshot failed, when it did. */
  stopError: string | null = null;
  /** Why the shard is down (its log failed: it refuses every request; it crashed) until it is restarted. */
  down: Down | null = null;
  /** When it is to be restarted (performance.now()), while it waits for that. */
  restartAt: number | null = null;
  /** The error the worker ended with, when it ended on its own. */
  crashError: string | null = null;
  /** Set when the worker has exited; `stopping` once it is asked to stop (asked once). */
  exited = false;
  stopping: Promise<string | null> | null = null;
  /** Restarts in a row, each after the last one went down within RESTART_RESET_MS (the wait doubles with each). */
  restarts = 0;
  readonly startedAt = performance.now();
  /** When the shard last sent anything, and last replied (performance.now()). */
  lastHeardAt = performance.now();
  lastReplyAt = performance.now();

  constructor(worker: Worker) {
    this.worker = worker;
    this.requests = new BatchPoster(worker);
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
}

/** Whole seconds until a down shard's restart (at least 1: one that is recovering is nearly back), for Retry-After. */
export function secondsToRestart(h: { restartAt: number | null }, now: number): number {
  return h.restartAt === null ? 1 : Math.max(1, Math.ceil((h.restartAt - now) / 1000));
}

/** Why a shard cannot answer now, or null when it can. Pure, for the readiness probe and its tests. */
export function shardProblem(
  h: { ready: boolean; down: Down | null; pendingSize: number; oldestSentAt: number | null; lastHeardAt: number; lastReplyAt: number },
  now: number,
  maxInflight: number,
): string | null {
  if (h.down?.cause === 'storage') return `cannot write its log (${h.down.why}); it refuses requests and is restarted from its files until that works`;
  if (h.down?.cause === 'crash') return `crashed (${h.down.why}); it is restarted from its files until that works`;
  if (!h.ready) return 'is not running';
  if (now - h.lastHeardAt > UNRESPONSIVE_MS) return `has sent nothing for ${Math.round((now - h.lastHeardAt) / 1000)} s`;
  if (h.pendingSize >= maxInflight) return `is at its in-flight limit of ${maxInflight} requests`;
  if (h.oldestSentAt !== null && now - Math.max(h.oldestSentAt, h.lastReplyAt) > UNRESPONSIVE_MS) {
    return `has not answered for ${Math.round((now - Math.max(h.oldestSentAt, h.lastReplyAt)) / 1000)} s`;
  }
  return null;
}

/** Why a shard's worker ended, as readiness and the log say it. */
export function crashReason(err: Error, heapMb: number | undefined): string {
  if ((err as NodeJS.ErrnoException).code !== 'ERR_WORKER_OUT_OF_MEMORY') return err.message;
  const limit = heapMb ? `FLASHBULB_SHARD_HEAP_MB=${heapMb}` : 'the process\'s heap limit';
  return `its JavaScript heap is full (${limit}; see docs/operations/limits.md): ${err.message}`;
}
