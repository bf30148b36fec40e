/**
 * @module native-bench/lib/threads — a process's CPU by thread from Linux's /proc/<pid>/task:
 * user and system time and context switches (voluntary ones are the thread going to sleep, so
 * each is one wake-up later). Threads are grouped by role: the main thread (the router), V8's
 * platform threads (garbage collection helpers, compilers), libuv's pool, and worker threads
 * (shards, the embedder, reflection), numbered in the order they started.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { CLOCK_TICKS } from './proc.ts';

export interface ThreadSample {
  tid: number;
  name: string;
  /** Start time in clock ticks after boot (orders threads by creation). */
  start: number;
  userS: number;
  systemS: number;
  voluntary: number;
  involuntary: number;
}

/** Every thread of `pid` now; a thread that ended between listing and reading is left out. */
export function sampleThreads(pid: number): ThreadSample[] {
  const ticks = CLOCK_TICKS;
  const out: ThreadSample[] = [];
  for (const entry of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${entry}/stat`, 'utf8');
      const status = readFileSync(`/proc/${pid}/task/${entry}/status`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({
        tid: Number(entry),
        name,
        start: Number(f[19]),
        userS: Number(f[11]) / ticks,
        systemS: Number(f[12]) / ticks,
        voluntary: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0),
        involuntary: Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0),
      });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out.sort((a, b) => a.start - b.start || a.tid - b.tid);
}

/** Threads that started this soon after the main one are Node's own (V8's platform, the inspector's). */
const PLATFORM_TICKS = 20;

/** A role: `main`, `v8` (platform threads), `libuv` (the pool), `worker 1…` (in order of start). */
export function roles(pid: number, threads: readonly ThreadSample[]): Map<number, string> {
  const out = new Map<number, string>();
  const mainStart = threads.find((t) => t.tid === pid)?.start ?? 0;
  let workers = 0;
  for (const t of threads) {
    if (t.tid === pid) out.set(t.tid, 'main');
    else if (t.name === 'libuv-worker') out.set(t.tid, 'libuv');
    else if (t.start - mainStart <= PLATFORM_TICKS) out.set(t.tid, 'v8');
    else out.set(t.tid, `worker ${++workers}`);
  }
  return out;
}

export interface ThreadDelta {
  role: string;
  userS: number;
  systemS: number;
  voluntary: number;
  involuntary: number;
}

/** What each role used between two samples (threads that started meanwhile count from zero). */
export function threadDeltas(
  pid: number,
  before: readonly ThreadSample[],
  after: readonly ThreadSample[],
): ThreadDelta[] {
  const named = roles(pid, after);
  const first = new Map(before.map((t) => [t.tid, t]));
  const byRole = new Map<string, ThreadDelta>();
  for (const t of after) {
    const role = named.get(t.tid) ?? '?';
    const b = first.get(t.tid);
    const d = byRole.get(role) ?? { role, userS: 0, systemS: 0, voluntary: 0, involuntary: 0 };
    d.userS += t.userS - (b?.userS ?? 0);
    d.systemS += t.systemS - (b?.systemS ?? 0);
    d.voluntary += t.voluntary - (b?.voluntary ?? 0);
    d.involuntary += t.involuntary - (b?.involuntary ?? 0);
    byRole.set(role, d);
  }
  return [...byRole.values()];
}
