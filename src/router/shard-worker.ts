/**
 * @module router/shard-worker — a shard's worker thread, started and stopped: started on its
 * entry with its heap limit; stopped by asking it to drain and write its final snapshot, and
 * terminated when it has not exited by the deadline, or at once while it still recovers (it has
 * served nothing then).
 */
import type { Worker } from 'node:worker_threads';
import type { ShardWorkerData } from '../protocol/shard.ts';
import { startWorker } from '../threads/worker-url.ts';
import type { ShardHandle, WorkerRun } from './shard-handle.ts';

/** How long a shard may take to drain and write its final snapshot before it is terminated. */
export const SHUTDOWN_DEADLINE_MS = 60_000;

export function startShardWorker(
  data: ShardWorkerData,
  opts: { heapMb?: number; workerEntry?: string },
): Worker {
  const limits = opts.heapMb ? { resourceLimits: { maxOldGenerationSizeMb: opts.heapMb } } : {};
  return startWorker(opts.workerEntry ?? 'shard/worker', { workerData: data, ...limits });
}

/**
 * Stops `run`, the handle's current worker: resolves when it has exited, to why its final snapshot
 * failed (null when it did not).
 */
export function stopRun(
  h: ShardHandle,
  run: WorkerRun,
  o: { deadlineMs: number; recovering: boolean },
): Promise<string | null> {
  const { deadlineMs } = o;
  if (run.exited)
    return Promise.resolve(
      h.down?.cause === 'crash' ? `no final snapshot, since it crashed (${h.down.why})` : null,
    );
  const { worker } = run;
  if (o.recovering) {
    // Still recovering (a restart): it has served nothing, and recovery may stop anywhere.
    return new Promise((resolve) => {
      worker.once('exit', () => resolve(null));
      void worker.terminate();
    });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      run.stopError ??= `did not stop within ${deadlineMs} ms`;
      void worker.terminate();
    }, deadlineMs);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve(run.stopError);
    });
    run.requests.flush();
    worker.postMessage({ kind: 'shutdown' });
  });
}
