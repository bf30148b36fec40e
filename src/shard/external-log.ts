/**
 * @module shard/external-log — what a shard needs of a log kept outside its directory (cluster
 * mode: a JetStream stream, cluster/stream-log.ts), and the backend a caller hands a shard instead
 * of its own files.
 */
import type { Recovered } from './persist/recovery.ts';
import type { LogRecord } from './store/records.ts';
import type { ShardState } from './store/apply.ts';

/**
 * A log kept elsewhere than the shard's directory (cluster mode: a JetStream stream). The shard
 * applies records, then awaits `append`; a write is acknowledged only once it resolves.
 */
export interface ExternalLog {
  /** Set once the log can no longer take appends; the shard then refuses requests. */
  readonly failed: Error | null;
  append(records: readonly LogRecord[]): Promise<void>;
  close(): Promise<void>;
  /**
   * Stores a snapshot of `state` wherever the log keeps them and trims the log below it; called
   * on the snapshot interval and when forgotten content must leave storage.
   */
  snapshot?(state: ShardState): Promise<void>;
}

/** State recovered by the caller and the log to write to, instead of the shard's own files. */
export interface ShardBackend {
  recovered: Recovered;
  log: ExternalLog;
}
