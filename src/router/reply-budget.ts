/**
 * @module router/reply-budget — replies are bounded (issue 48): the replies of one request may
 * hold at most `perRequest` bytes (an MCP batch is one request), those of one workspace in flight
 * at most `perWorkspace`, and all of them `total`. A request's `ReplyLease` counts what its shard
 * calls return until the transport has sent the reply and releases it. Each read first asks its
 * shard for a reply of at most 64 KiB; a larger one is not copied but answered with its size
 * (protocol/reply-size), which is then reserved, or refused naming the limit, before it is asked
 * for again. The shard keeps such a reply for that second ask when it fitted the room the first
 * ask offered, so the read runs once. So nothing over a budget crosses from a shard, and
 * concurrent calls cannot overshoot it: reservations are taken on this thread before the shard is
 * asked.
 */
import { FlashbulbError } from '../errors/codes.ts';
import { parkedToken, replyBytes, tooLargeBytes } from '../protocol/reply-size.ts';
import type { BackupResult, ShardInput, ShardMethod, ShardOutput } from '../protocol/shard.ts';
import type { CallOptions, ShardRouter } from './router.ts';

export interface ReplyLimits {
  /** Bytes the replies of one request may hold (FLASHBULB_MAX_REPLY_BYTES). */
  perRequest: number;
  /** Bytes of replies one workspace may have in flight (FLASHBULB_MAX_REPLY_BYTES_PER_WORKSPACE). */
  perWorkspace: number;
  /** Bytes of replies in flight in all (FLASHBULB_MAX_REPLY_BYTES_IN_FLIGHT). */
  total: number;
}

/** Methods whose replies grow with what is stored; the others answer a few hundred bytes. */
const BUDGETED: ReadonlySet<ShardMethod> = new Set<ShardMethod>([
  'get',
  'batchGet',
  'list',
  'recall',
  'prime',
  'entities',
  'insights',
  'edges',
  'graph',
  'pendingContradictions',
]);

/** What a read may take before its shard has said how large its reply is. */
const FIRST_ASK = 64 * 1024;

/** The process's reply bytes in flight, per workspace and in all. */
export class ReplyBudget {
  readonly limits: Readonly<ReplyLimits>;
  readonly #byWorkspace = new Map<string, number>();
  #total = 0;

  constructor(limits: ReplyLimits) {
    this.limits = Object.freeze({ ...limits });
  }

  /** Bytes held now by `ws`'s replies, or by all. */
  held(ws?: string): number {
    return ws === undefined ? this.#total : (this.#byWorkspace.get(ws) ?? 0);
  }

  lease(): ReplyLease {
    return new ReplyLease(this);
  }

  /** Room for one more reply of `ws` under the workspace and total limits. */
  room(ws: string): number {
    return Math.min(this.limits.perWorkspace - this.held(ws), this.limits.total - this.#total);
  }

  /** Moves `delta` bytes (negative: gives them back) onto `ws`'s account. */
  add(ws: string, delta: number): void {
    const now = this.held(ws) + delta;
    if (now <= 0) this.#byWorkspace.delete(ws);
    else this.#byWorkspace.set(ws, now);
    this.#total += delta;
  }
}

/** One request's share: what its replies hold until `release`. */
export class ReplyLease {
  readonly #budget: ReplyBudget;
  readonly #held = new Map<string, number>();
  #used = 0;
  #released = false;

  constructor(budget: ReplyBudget) {
    this.#budget = budget;
  }

  /** Bytes this request's replies hold (or have reserved). */
  get used(): number {
    return this.#used;
  }

  /** Room for one more reply: what this request, the workspace and the process have left. */
  room(ws: string): number {
    return Math.min(this.#budget.limits.perRequest - this.#used, this.#budget.room(ws));
  }

  /** Takes `bytes` for a reply of `ws`, or throws naming the limit it would pass. */
  take(ws: string, bytes: number): void {
    if (bytes <= 0 || bytes > this.room(ws)) throw this.refusal(ws, bytes > 0 ? bytes : null);
    this.#move(ws, bytes);
  }

  /** Gives back `bytes` taken for `ws`. */
  give(ws: string, bytes: number): void {
    this.#move(ws, -bytes);
  }

  /** Gives every byte back: the reply has been sent (or abandoned). Later calls do nothing. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    for (const [ws, bytes] of this.#held) this.#budget.add(ws, -bytes);
    this.#held.clear();
    this.#used = 0;
  }

  #move(ws: string, delta: number): void {
    if (this.#released) return;
    this.#used += delta;
    this.#held.set(ws, (this.#held.get(ws) ?? 0) + delta);
    this.#budget.add(ws, delta);
  }

  /** The error for a reply of about `bytes` (null: of any size) that does not fit, naming the limit it passes. */
  refusal(ws: string, size: number | null): FlashbulbError {
    const { perRequest, perWorkspace, total } = this.#budget.limits;
    const about =
      size === null
        ? 'no room is left for another reply'
        : `the reply would be about ${size} bytes`;
    const bytes = size ?? 1;
    const tooLarge = (message: string, limit: string): FlashbulbError =>
      new FlashbulbError('payload_too_large', message, { limit });
    const later = (message: string, limit: string): FlashbulbError =>
      new FlashbulbError('rate_limited', message, { limit, retryAfterS: 1 });
    if (bytes > perRequest) {
      return tooLarge(
        `${about}, over the limit of ${perRequest} bytes per request (${PER_REQUEST}): ask for fewer results (limit, top_k, depth) or page with the cursor`,
        PER_REQUEST,
      );
    }
    if (this.#used + bytes > perRequest) {
      return tooLarge(
        `${about}, and the replies before it in this request hold (or have reserved) ${this.#used} bytes: together over the limit of ${perRequest} bytes per request (${PER_REQUEST}); ask for it in a request of its own`,
        PER_REQUEST,
      );
    }
    if (bytes > perWorkspace)
      return tooLarge(
        `${about}, over the limit of ${perWorkspace} bytes of replies in flight per workspace (${PER_WORKSPACE}): ask for fewer results`,
        PER_WORKSPACE,
      );
    if (bytes > total)
      return tooLarge(
        `${about}, over the limit of ${total} bytes of replies in flight (${TOTAL}): ask for fewer results`,
        TOTAL,
      );
    const held = this.#budget.held(ws);
    if (held + bytes > perWorkspace) {
      return later(
        `${about}, and workspace '${ws}' has ${held} bytes of replies in flight: together over its limit of ${perWorkspace} (${PER_WORKSPACE}); retry once they are sent`,
        PER_WORKSPACE,
      );
    }
    return later(
      `${about}, and the server has ${this.#budget.held()} bytes of replies in flight: together over its limit of ${total} (${TOTAL}); retry shortly`,
      TOTAL,
    );
  }
}

const PER_REQUEST = 'FLASHBULB_MAX_REPLY_BYTES';
const PER_WORKSPACE = 'FLASHBULB_MAX_REPLY_BYTES_PER_WORKSPACE';
const TOTAL = 'FLASHBULB_MAX_REPLY_BYTES_IN_FLIGHT';

/** A router whose reads count against one request's lease (verbs/context `budgeted`). */
export class BudgetedRouter implements ShardRouter {
  readonly #inner: ShardRouter;
  readonly #lease: ReplyLease;
  readonly backup?: (to: string) => Promise<Array<{ shard: number } & BackupResult>>;

  constructor(inner: ShardRouter, lease: ReplyLease) {
    this.#inner = inner;
    this.#lease = lease;
    if (inner.backup)
      this.backup = (to) => (inner.backup as NonNullable<ShardRouter['backup']>).call(inner, to);
  }

  async call<M extends ShardMethod>(
    ws: string,
    method: M,
    input: ShardInput<M>,
    transfer: ArrayBuffer[] = [],
    opts: CallOptions = {},
  ): Promise<ShardOutput<M>> {
    if (!BUDGETED.has(method)) return this.#inner.call(ws, method, input, transfer, opts);
    // Buffers are copied rather than moved: the call may be made twice.
    const room = this.#lease.room(ws);
    const out = await this.#ask(ws, method, input, Math.min(FIRST_ASK, room), { parkBelow: room });
    const size = tooLargeBytes(out);
    if (size === null) return out;
    // The owner keeps a reply that fitted the room when it answered: the second ask takes it (the
    // read is not run twice). If it is gone, the read runs again, and data may have grown since:
    // a little room is taken for that.
    const second = Math.min(size + Math.max(FIRST_ASK, Math.ceil(size / 16)), this.#lease.room(ws));
    if (second < size) throw this.#lease.refusal(ws, size);
    const token = parkedToken(out);
    const again = await this.#ask(
      ws,
      method,
      input,
      second,
      token === undefined ? {} : { claim: token },
    );
    const grown = tooLargeBytes(again);
    if (grown !== null) throw this.#lease.refusal(ws, grown);
    return again;
  }

  /** One ask with `bytes` reserved; what the reply holds stays reserved, the rest is given back. */
  async #ask<M extends ShardMethod>(
    ws: string,
    method: M,
    input: ShardInput<M>,
    bytes: number,
    opts: Pick<CallOptions, 'parkBelow' | 'claim'>,
  ): Promise<ShardOutput<M>> {
    this.#lease.take(ws, bytes);
    let kept = 0;
    try {
      let measured: number | null = null;
      const out = await this.#inner.call(ws, method, input, [], {
        ...opts,
        maxReplyBytes: bytes,
        replyBytes: (n) => (measured = n),
      });
      // The owner measured it (a router that does not say is measured here).
      if (tooLargeBytes(out) === null) kept = Math.min(bytes, measured ?? replyBytes(out));
      return out;
    } finally {
      this.#lease.give(ws, bytes - kept);
    }
  }

  broadcast<M extends ShardMethod>(method: M, input: ShardInput<M>): Promise<ShardOutput<M>[]> {
    return this.#inner.broadcast(method, input);
  }

  inflight(): number {
    return this.#inner.inflight();
  }

  problems(): string[] {
    return this.#inner.problems();
  }

  shutdown(deadlineMs?: number): Promise<void> {
    return this.#inner.shutdown(deadlineMs);
  }
}
