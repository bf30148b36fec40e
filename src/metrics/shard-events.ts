/**
 * @module metrics/shard-events — what the shards (or a cluster's partitions) tell the router
 * unasked, turned into metrics and log lines: memory counts, log-sync and snapshot times,
 * contradictions, expiry, background backlogs, heap gauges, a failed log, a crash; and whether
 * any shard holds memories (the model check at start-up reads it).
 */
import type { ShardEvent, ShardHeap } from '../protocol/shard.ts';
import {
  backgroundBacklog,
  contradictionChecksSkipped,
  contradictionsFound,
  logSyncDuration,
  memoriesExpired,
  memoriesGauge,
  shardCrashes,
  shardHeapLimit,
  shardHeapLive,
  shardMemoryFull,
  shardStorageFailed,
  snapshotDuration,
} from './index.ts';

export class ShardEventMetrics {
  readonly #log: (line: string) => void;
  /** Memories per shard, as each last said. */
  readonly #memories: number[] = [];

  constructor(log: (line: string) => void) {
    this.#log = log;
  }

  /** Whether any shard said it holds memories. */
  get anyMemories(): boolean {
    return this.#memories.some((n) => n > 0);
  }

  /** Every event but `push` (subscriptions take those). */
  record(e: Exclude<ShardEvent, { kind: 'push' }>): void {
    if (e.kind === 'ready') {
      this.#memories[e.shard] = e.memories;
      shardStorageFailed.set({ shard: String(e.shard) }, 0);
      const replayed = `${e.replayedRecords} log records replayed`;
      const phases = Object.entries(e.phasesMs ?? {})
        .map(([name, ms]) => `${name} ${ms.toFixed(0)}`)
        .join(', ');
      this.#log(
        `shard ${e.shard}: ${e.memories} memories recovered (${replayed}) in ${e.recoveryMs.toFixed(0)} ms` +
          (phases ? ` (ms: ${phases})` : ''),
      );
      if (e.truncatedTail)
        this.#log(`shard ${e.shard}: truncated a torn log tail: ${e.truncatedTail}`);
    } else if (e.kind === 'metrics') {
      this.#memories[e.shard] = e.memories;
      if (e.heap) heapGauges(e.shard, e.heap);
      for (const ms of e.syncMs) logSyncDuration.observe(ms / 1000);
      for (const ms of e.snapshotMs) snapshotDuration.observe(ms / 1000);
      contradictionsFound.inc(e.contradictions);
      contradictionChecksSkipped.inc(e.checksSkipped);
      memoriesExpired.inc(e.expired);
      backgroundBacklog.set(
        { shard: String(e.shard), work: 'contradiction_checks' },
        e.checkBacklog,
      );
      backgroundBacklog.set({ shard: String(e.shard), work: 'vector_index' }, e.indexBacklog);
    } else if (e.kind === 'fatal') {
      this.#log(`shard ${e.shard}: FATAL ${e.message}`);
    } else if (e.kind === 'heap') {
      this.#heapChanged(e.shard, e);
    } else if (e.kind === 'storage-failed') {
      shardStorageFailed.set({ shard: String(e.shard) }, 1);
    }
    memoriesGauge.set(this.#memories.reduce((a, b) => a + (b ?? 0), 0));
  }

  /** A shard's worker ended on its own; it is restarted on its files in `restartInMs`. */
  crashed(shard: number, why: string, restartInMs: number): void {
    shardCrashes.inc({ shard: String(shard) });
    const restart = `restarting it from its files in ${restartInMs / 1000} s`;
    this.#log(
      `shard ${shard}: CRASHED (${why}); its requests in flight failed with 503; ${restart}`,
    );
  }

  /** A shard's heap started or stopped refusing writes. */
  #heapChanged(shard: number, heap: ShardHeap): void {
    heapGauges(shard, heap);
    const mb = (bytes: number): number => Math.round(bytes / 2 ** 20);
    const live = `${mb(heap.liveBytes)} of ${mb(heap.limitBytes)} MB live`;
    const refused =
      'writes refused until memory is freed (forget) or the heap is raised (FLASHBULB_SHARD_HEAP_MB)';
    if (heap.full) this.#log(`shard ${shard}: memory full (${live}): ${refused}`);
    else this.#log(`shard ${shard}: memory no longer full: writes accepted again`);
  }
}

function heapGauges(shard: number, heap: ShardHeap): void {
  const labels = { shard: String(shard) };
  shardHeapLive.set(labels, heap.liveBytes);
  shardHeapLimit.set(labels, heap.limitBytes);
  shardMemoryFull.set(labels, heap.full ? 1 : 0);
}
