/**
 * @module threads/worker-url — starts a worker entry next to the running code. From `dist/` the
 * entry is `.js`; from the TypeScript sources (tests, tsx) it is `.ts`, loaded through a small
 * bootstrap that registers tsx, since Node 20 cannot start a worker from a `.ts` file by itself.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startWorker(
  relativeToSrc: string,
  opts: WorkerOptions & { workerData?: object },
): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL(`../${relativeToSrc}.js`, import.meta.url), opts);
  const entry = new URL(`../${relativeToSrc}.ts`, import.meta.url).href;
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), {
    ...opts,
    workerData: { ...opts.workerData, __tsEntry: entry },
  });
}

/** Piscina `filename` and extra `workerData` for a task module next to the running code. */
export function taskModule(relativeToSrc: string): {
  filename: string;
  workerData: { __tsEntry?: string };
} {
  if (!import.meta.url.endsWith('.ts'))
    return { filename: new URL(`../${relativeToSrc}.js`, import.meta.url).href, workerData: {} };
  const entry = new URL(`../${relativeToSrc}.ts`, import.meta.url).href;
  return {
    filename: new URL('./ts-task.mjs', import.meta.url).href,
    workerData: { __tsEntry: entry },
  };
}

/**
 * Starts an entry next to the running code in a child process with an IPC channel (through tsx
 * when running from the sources). For work whose memory must leave with it: a thread's freed
 * native memory stays in this process's allocator, a process's goes back to the system.
 */
export function forkEntry(relativeToSrc: string, args: readonly string[]): ChildProcess {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(
    new URL(`../${relativeToSrc}.${fromSources ? 'ts' : 'js'}`, import.meta.url),
  );
  return fork(entry, [...args], {
    execArgv: fromSources ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}
