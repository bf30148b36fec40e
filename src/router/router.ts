/**
 * @module router/router — what the verbs need from the layer that owns state: a typed command to
 * the owner of a workspace. The single-process ShardPool (worker threads) implements it, and so
 * does the cluster node (src/cluster), which forwards to the node that owns the partition.
 */
import type { BackupResult, ShardInput, ShardMethod, ShardOutput } from '../protocol/shard.ts';

/** How one call is made. */
export interface CallOptions {
  /** The owner answers a reply larger than this with protocol/reply-size `tooLarge` (router/reply-budget). */
  maxReplyBytes?: number;
  /** With `maxReplyBytes`: told the size of a reply within it, as the owner measured it. */
  replyBytes?: (bytes: number) => void;
  /** With `maxReplyBytes`: a reply over it but within this is kept by its owner (protocol/reply-size). */
  parkBelow?: number;
  /** Asks for the reply kept under this token (a too-large answer's `parkedToken`). */
  claim?: number;
}

export interface ShardRouter {
  /** Sends a command to the owner of `ws`; `transfer` buffers may be detached. */
  call<M extends ShardMethod>(
    ws: string,
    method: M,
    input: ShardInput<M>,
    transfer?: ArrayBuffer[],
    opts?: CallOptions,
  ): Promise<ShardOutput<M>>;
  /** Runs `method` on every shard this process owns (workspace-independent stats). */
  broadcast<M extends ShardMethod>(method: M, input: ShardInput<M>): Promise<ShardOutput<M>[]>;
  /** Commands sent and not yet answered. */
  inflight(): number;
  /** What keeps this process from answering now (readiness lists it); empty when nothing does. */
  problems(): string[];
  /** Drains, writes final snapshots and stops; rejects when a snapshot could not be written or took longer than `deadlineMs`. */
  shutdown(deadlineMs?: number): Promise<void>;
  /**
   * Writes a consistent copy of the data directory into `to` (new or empty) while serving. Absent
   * where state lives in no local data directory (cluster mode snapshots to JetStream instead).
   */
  backup?(to: string): Promise<Array<{ shard: number } & BackupResult>>;
}
