/**
 * @module native-bench/lib/proc — what Linux's /proc says about a process (CPU time, resident
 * memory) and how many bytes a directory holds.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Clock ticks per second of /proc's CPU times (CLK_TCK). */
export const CLOCK_TICKS = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** User + system CPU seconds of a process, all its threads included (/proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 overall.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** CPU seconds the whole machine spent busy (not idle, not waiting for I/O), from /proc/stat. */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}

/**
 * Waits until the machine is nearly idle (under `maxCores` busy over a 1 s window) so a phase does
 * not start while other work runs; gives up after `limitS`. Resolves with the last busy reading.
 */
export async function waitForQuiet(opts: { maxCores: number; limitS: number }): Promise<number> {
  const deadline = performance.now() + opts.limitS * 1000;
  for (;;) {
    const before = machineBusySeconds();
    await new Promise((r) => setTimeout(r, 1000));
    const busy = machineBusySeconds() - before;
    if (busy <= opts.maxCores || performance.now() >= deadline) return busy;
  }
}

/**
 * Waits until a process uses under `maxCores` over a 0.5 s window (its background work is done);
 * gives up after `limitS`. Resolves with the seconds waited.
 */
export async function waitForIdleProcess(
  pid: number,
  opts: { maxCores: number; limitS: number },
): Promise<number> {
  const start = performance.now();
  for (;;) {
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 500));
    const cores = (cpuSeconds(pid) - before) / 0.5;
    const waited = (performance.now() - start) / 1000;
    if (cores <= opts.maxCores || waited >= opts.limitS) return waited;
  }
}

/** Resident set size in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match?.[1] === undefined ? Number.NaN : Number(match[1]) * 1024;
}

/** Total size of the regular files under `dir`. */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += dirBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

export interface CpuShare {
  /** The server process, all threads. */
  serverCores: number;
  /** This benchmark process. */
  clientCores: number;
  /** Everything else on the machine (other processes, kernel work not charged to either). */
  otherCores: number;
}

/** Measures the CPU the server, this client and the rest of the machine use over an interval, in cores. */
/**
 * CPU shares over a window. `pid` null: the server is not a process here (or its id is unknown);
 * server cores are NaN and its CPU counts as other cores.
 */
export class CpuMeter {
  readonly #pid: number | null;
  readonly #server0: number;
  readonly #machine0 = machineBusySeconds();
  readonly #client0 = process.cpuUsage();
  readonly #wall0 = performance.now();

  constructor(pid: number | null) {
    this.#pid = pid;
    this.#server0 = pid === null ? 0 : cpuSeconds(pid);
  }

  read(): CpuShare {
    const wallS = (performance.now() - this.#wall0) / 1000;
    const usage = process.cpuUsage(this.#client0);
    const server = this.#pid === null ? 0 : cpuSeconds(this.#pid) - this.#server0;
    const client = (usage.user + usage.system) / 1e6;
    const machine = machineBusySeconds() - this.#machine0;
    return {
      serverCores: this.#pid === null ? Number.NaN : server / wallS,
      clientCores: client / wallS,
      otherCores: Math.max(0, machine - server - client) / wallS,
    };
  }
}
