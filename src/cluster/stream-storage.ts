/**
 * @module cluster/stream-storage — a partition's shard storage (shard/storage) in cluster mode:
 * the state its takeover recovered (cluster/takeover), its log on a JetStream stream
 * (cluster/stream-log) and its snapshots in the object store, through which the stream is
 * trimmed (cluster/snapshots, cluster/trim). No local files: no backup, no erasure in place
 * (forgotten content leaves the stream when it is trimmed below a snapshot without it).
 */
import type { LogRecord, ShardState } from '../shard/persist/codec.ts';
import type { RecoveredState, ShardStorage } from '../shard/storage.ts';
import type { StreamLog } from './stream-log.ts';

export class StreamStorage implements ShardStorage {
  readonly recovered: RecoveredState;
  readonly #log: StreamLog;

  constructor(recovered: RecoveredState, log: StreamLog) {
    this.recovered = recovered;
    this.#log = log;
  }

  get failed(): Error | null {
    return this.#log.failed;
  }

  append(records: readonly LogRecord[]): Promise<void> {
    return this.#log.append(records);
  }

  snapshot(state: ShardState): Promise<void> {
    return this.#log.snapshot(state);
  }

  /** The partition's log is closed by whoever gives the partition up (cluster/partitions). */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
