/**
 * @module shard/storage — the port a shard needs of its storage: the state it recovered, a log
 * to append to (a write is acknowledged once `append` resolves), the failure it latched, and
 * snapshots; backup and erasure in place where the storage has files of its own. Two
 * implementations: the shard's own files (shard/local-storage) and, in cluster mode, a JetStream
 * stream with snapshots in an object store (cluster/stream-storage).
 */
import type { BackupResult } from '../protocol/shard.ts';
import type { ErasurePlan } from './erasure.ts';
import type { ShardState } from './store/apply.ts';
import type { LogRecord } from './store/records.ts';

/** What a shard starts from: the state its storage recovered, and what the recovery found. */
export interface RecoveredState {
  state: ShardState;
  /** Log records applied after the snapshot (a crash's log: it may hold forgotten content). */
  replayedRecords: number;
  /** A torn frame cut off the end of the log, when there was one. */
  truncatedTail: { file: string; offset: number; reason: string } | null;
  /** Files a finished snapshot should have deleted (a crash came in between). */
  staleFiles: boolean;
  /** Files kept from before hold content forgotten before a crash (a saved graph's vectors). */
  erasureDue?: boolean;
  /** Milliseconds of each step of the recovery, in order (the start-up log names them). */
  phasesMs?: RecoveryPhases;
}

/** The steps of a recovery: the snapshot read and applied, its graphs, the log, the edge check. */
export interface RecoveryPhases {
  snapshot: number;
  graphs: number;
  log: number;
  edges: number;
}

/** Options of one snapshot. */
export interface SnapshotOptions {
  /** The shutdown's snapshot: nothing changes under it any more (graphs may be saved with it). */
  final: boolean;
  /** True when a request is waiting on the shard: long work ends its slice at once. */
  requestWaiting: () => boolean;
}

export interface ShardStorage {
  readonly recovered: RecoveredState;
  /** Set once the log can no longer take appends; the shard then refuses every request. */
  readonly failed: Error | null;
  /** The log's segment number (the shard's stats); absent where the log has no segments. */
  readonly seq?: number;
  /** Bytes logged since the last snapshot, when the storage counts them (a snapshot is due past a limit). */
  readonly logBytes?: number;
  append(records: readonly LogRecord[]): Promise<void>;
  /**
   * Stores a snapshot of `state` and drops the log it covers; absent where the log keeps its
   * whole history. The shard runs one at a time, never beside a backup or an erasure.
   */
  snapshot?(state: ShardState, opts: SnapshotOptions): Promise<void>;
  /** Writes a consistent copy into `dir` while the shard keeps serving (local files only). */
  backup?(dir: string, state: ShardState): Promise<BackupResult>;
  /** Whether `eraseInPlace` can erase now (every file indexed); when not, a snapshot rewrites the store. */
  canEraseInPlace?(): boolean;
  /** Pads the frames that hold what `plan` erases; returns how many. */
  eraseInPlace?(state: ShardState, plan: ErasurePlan): Promise<number>;
  /** Removes the vectors `plan` erases from saved graph files (run first by every erasure). */
  eraseGraphs?(state: ShardState, plan: ErasurePlan): Promise<void>;
  /**
   * At shutdown, with no request in flight: writes the final snapshot where the storage keeps one,
   * and closes the log; rejects when the log failed (it still holds every acknowledged write).
   */
  close(state: ShardState, requestWaiting: () => boolean): Promise<void>;
}
