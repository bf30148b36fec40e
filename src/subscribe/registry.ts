/**
 * @module subscribe/registry — the router's side of subscriptions: ids, the per-workspace limit,
 * chunking fed text, embedding each chunk once, asking the owning shard to match it, and
 * delivering pushes to the subscriber's sink through a bounded queue. A slow reader never grows
 * memory without bound: past QUEUE_MAX undelivered pushes the oldest are dropped (and counted).
 */
import { randomInt } from 'node:crypto';
import { FlashbulbError } from '../errors/codes.ts';
import type { Embedder } from '../embedding/embedder.ts';
import { openSubscriptions, subscriptionDropped, subscriptionPushes } from '../metrics/index.ts';
import { isExpired, type MemoryView } from '../model/memory.ts';
import type { ShardRouter } from '../router/router.ts';
import type { Push, SubscriptionSpec } from '../protocol/shard.ts';
import { Chunker, type Chunk } from './chunker.ts';

export const MAX_PER_WORKSPACE = 100;
export const QUEUE_MAX = 256;
const IDLE_FLUSH_MS = 300;

export interface PushEvent {
  subscription_id: number;
  memory: MemoryView;
  score: number;
  confidence: number;
  strategy: 'similarity';
  chunk_offset: number | null;
  sequence_number: number;
  push_timestamp_us: number;
}

/** A feed or close that arrived at another node for a subscription held here (cluster mode). */
export type RelayedRequest = { op: 'feed'; ws: string; text: string } | { op: 'close'; ws: string };

/**
 * Cluster mode: a subscription's stream is held by the node it was opened on, but feeds and
 * closes may arrive at any node. The holder serves its subscriptions; other nodes send to it.
 */
export interface SubscriptionRelay {
  /** Serves requests for subscription `id` sent from other nodes; returns the function that stops serving. */
  serve(id: number, handler: (req: RelayedRequest) => Promise<void>): () => void;
  /** Sends a request to the node holding `id`; rejects with not_found when no node holds it. */
  send(id: number, req: RelayedRequest): Promise<void>;
}

/**
 * Why a subscription ended: closed (by its reader, its workspace's deletion, a shard restart),
 * shutdown, or revoked (the key that opened it no longer may: revoked, or its role or workspace changed).
 */
export type CloseReason = 'closed' | 'shutdown' | 'revoked';

/** Where pushes go (an SSE stream, a gRPC stream). `send` returns false when the reader lags. */
export interface PushSink {
  send(event: PushEvent): boolean;
  onDrain(cb: () => void): void;
  close(reason: CloseReason): void;
}

/** Who opened a subscription: its key (null with authentication off), that key's role and workspace. */
export interface Holder {
  readonly keyId: string | null;
  readonly role: string;
  readonly workspace: string;
}

class Subscription {
  readonly chunker = new Chunker();
  readonly sink: PushSink;
  readonly queue: PushEvent[] = [];
  seq = 0;
  blocked = false;
  closed = false;
  idle: NodeJS.Timeout | null = null;
  work: Promise<void> = Promise.resolve();
  unserve: (() => void) | null = null;

  constructor(
    readonly id: number,
    readonly workspace: string,
    sink: PushSink,
    readonly holder: Holder | null,
  ) {
    this.sink = sink;
  }
}

export class SubscriptionRegistry {
  readonly #shards: ShardRouter;
  readonly #embedder: Embedder;
  readonly #subs = new Map<number, Subscription>();
  readonly #relay: SubscriptionRelay | null;

  constructor(shards: ShardRouter, embedder: Embedder, relay: SubscriptionRelay | null = null) {
    this.#shards = shards;
    this.#embedder = embedder;
    this.#relay = relay;
  }

  get size(): number {
    return this.#subs.size;
  }

  async open(
    workspace: string,
    spec: Omit<SubscriptionSpec, 'id'>,
    sink: PushSink,
    holder: Holder | null = null,
  ): Promise<number> {
    let count = 0;
    for (const s of this.#subs.values()) if (s.workspace === workspace) count += 1;
    if (count >= MAX_PER_WORKSPACE) {
      throw new FlashbulbError(
        'rate_limited',
        `workspace '${workspace}' already has ${MAX_PER_WORKSPACE} open subscriptions`,
        { retryAfterS: 1 },
      );
    }
    const id = randomInt(1, 2 ** 48) * 32 + randomInt(0, 32);
    const sub = new Subscription(id, workspace, sink, holder);
    this.#subs.set(id, sub);
    openSubscriptions.set(this.#subs.size);
    try {
      await this.#shards.call(workspace, 'subOpen', { ...spec, id });
    } catch (err) {
      this.#forget(sub);
      throw err;
    }
    sink.onDrain(() => this.#drain(sub));
    if (this.#relay && !sub.closed) {
      sub.unserve = this.#relay.serve(id, (req) =>
        req.op === 'feed' ? this.feed(req.ws, id, req.text) : this.close(req.ws, id),
      );
    }
    return id;
  }

  /** Buffers text; complete chunks are embedded and matched in order. */
  feed(workspace: string, id: number, text: string): Promise<void> {
    if (this.#relay && !this.#subs.has(id))
      return this.#relay.send(id, { op: 'feed', ws: workspace, text });
    const sub = this.#find(workspace, id);
    const chunks = sub.chunker.feed(text);
    if (sub.idle) clearTimeout(sub.idle);
    sub.idle = sub.chunker.pending ? setTimeout(() => this.#flushIdle(sub), IDLE_FLUSH_MS) : null;
    const run = sub.work.then(() => this.#match(sub, chunks));
    // A failed match fails this feed only; later feeds start from a settled chain.
    sub.work = run.catch(() => undefined);
    return run;
  }

  async close(workspace: string, id: number, reason: CloseReason = 'closed'): Promise<void> {
    if (this.#relay && !this.#subs.has(id))
      return this.#relay.send(id, { op: 'close', ws: workspace });
    const sub = this.#find(workspace, id);
    this.#forget(sub);
    sub.sink.close(reason);
    await this.#shards.call(workspace, 'subClose', { id }).catch(() => undefined);
  }

  /** Closes a subscription whose reader went away (no error if it is already gone). */
  disconnect(id: number): void {
    const sub = this.#subs.get(id);
    if (sub) void this.close(sub.workspace, id).catch(() => undefined);
  }

  /** Pushes a shard found for new writes. */
  deliverPushes(pushes: readonly Push[]): void {
    for (const p of pushes) {
      const sub = this.#subs.get(p.subscription);
      if (sub) this.#deliver(sub, p);
    }
  }

  /** Closes every subscription (on shutdown), or those of one workspace (when it is deleted). */
  closeAll(workspace?: string): Promise<void> {
    return workspace === undefined
      ? this.closeWhere(() => true, 'shutdown')
      : this.closeWhere((ws) => ws === workspace);
  }

  /** Closes the subscriptions of the workspaces `match` picks (also those of a shard that was restarted). */
  async closeWhere(
    match: (workspace: string) => boolean,
    reason: CloseReason = 'closed',
  ): Promise<void> {
    const subs = [...this.#subs.values()].filter((s) => match(s.workspace));
    await Promise.all(subs.map((s) => this.close(s.workspace, s.id, reason)));
  }

  /**
   * Closes, as `revoked`, the subscriptions held here whose holder `allowed` no longer accepts
   * (the keys changed: auth/store `onChange`). Their streams end at once, before any later push.
   */
  async closeRevoked(allowed: (holder: Holder, workspace: string) => boolean): Promise<void> {
    const subs = [...this.#subs.values()].filter(
      (s) => s.holder !== null && !allowed(s.holder, s.workspace),
    );
    await Promise.all(subs.map((s) => this.close(s.workspace, s.id, 'revoked')));
  }

  #find(workspace: string, id: number): Subscription {
    const sub = this.#subs.get(id);
    if (!sub || sub.workspace !== workspace || sub.closed)
      throw new FlashbulbError('not_found', `subscription ${id} not found`);
    return sub;
  }

  #forget(sub: Subscription): void {
    sub.closed = true;
    sub.unserve?.();
    sub.unserve = null;
    if (sub.idle) clearTimeout(sub.idle);
    this.#subs.delete(sub.id);
    openSubscriptions.set(this.#subs.size);
  }

  #flushIdle(sub: Subscription): void {
    sub.idle = null;
    if (sub.closed) return;
    const chunks = sub.chunker.flush();
    sub.work = sub.work.then(() => this.#match(sub, chunks)).catch(() => undefined);
  }

  async #match(sub: Subscription, chunks: readonly Chunk[]): Promise<void> {
    if (chunks.length === 0 || sub.closed) return;
    const vectors = await this.#embedder.embed(chunks.map((c) => c.text));
    const dim = this.#embedder.dim;
    for (const [i, c] of chunks.entries()) {
      if (sub.closed) return;
      const vector = vectors.slice(i * dim, (i + 1) * dim);
      const pushes = await this.#shards.call(
        sub.workspace,
        'subMatch',
        { id: sub.id, vector, offset: c.offset },
        [vector.buffer as ArrayBuffer],
      );
      for (const p of pushes) this.#deliver(sub, p);
    }
  }

  #deliver(sub: Subscription, p: Push): void {
    if (sub.closed) return;
    sub.seq += 1;
    const event: PushEvent = {
      subscription_id: sub.id,
      memory: p.memory,
      score: p.score,
      confidence: p.confidence,
      strategy: 'similarity',
      chunk_offset: p.chunkOffset,
      sequence_number: sub.seq,
      push_timestamp_us: Date.now() * 1000,
    };
    subscriptionPushes.inc();
    if (sub.blocked || sub.queue.length > 0) return this.#enqueue(sub, event);
    if (!sub.sink.send(event)) sub.blocked = true;
  }

  #enqueue(sub: Subscription, event: PushEvent): void {
    sub.queue.push(event);
    if (sub.queue.length > QUEUE_MAX) {
      sub.queue.shift();
      subscriptionDropped.inc();
    }
  }

  #drain(sub: Subscription): void {
    sub.blocked = false;
    while (sub.queue.length > 0 && !sub.closed) {
      const event = sub.queue.shift() as PushEvent;
      // A memory that expired while its push waited for a slow reader is not delivered.
      if (isExpired(event.memory, Date.now() * 1000)) continue;
      if (!sub.sink.send(event)) {
        sub.blocked = true;
        return;
      }
    }
  }

  /**
   * Pushes produced for subscription `id` so far (the last sequence number; 0 when none or when
   * it is gone). A feed is answered, and a write's reply arrives, only after its pushes are
   * counted here, so tests compare it with what a reader received to prove no push is missing.
   */
  pushed(id: number): number {
    return this.#subs.get(id)?.seq ?? 0;
  }

  /** Pushes waiting for a slow reader (for tests and metrics). */
  queued(id: number): number {
    return this.#subs.get(id)?.queue.length ?? 0;
  }
}
