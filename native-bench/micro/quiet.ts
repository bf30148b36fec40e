/**
 * @module native-bench/micro/quiet — waits for a quiet machine before a measurement. This box has
 * two cores shared with other people's work, so each measurement first waits (up to a limit)
 * until the 1-minute load average is low, and says so when it had to measure on a busy machine.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface Quiet {
  /** 1-minute load average when the measurement started. */
  load1: number;
  waitedS: number;
  busy: boolean;
}

/** Quiet means a 1-minute load average at or below half the cores (1.0 on this machine). */
const MAX_LOAD = availableParallelism() / 2;
let maxWaitS = 120;
/** After a wait ran out, later waits are this short until the machine is quiet again. */
const BUSY_RETRY_S = 20;
let lastTimedOut = false;

/** Sets how long waitForQuiet waits at most (the `--max-wait-s` flag). */
export function setMaxWait(seconds: number): void {
  maxWaitS = seconds;
}

export function load1(): number {
  const first = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  return Number(first ?? Number.NaN);
}

/**
 * Waits until the load is low or `maxWaitS` has passed (20 s while the machine stays busy); logs one
 * line when it is still busy.
 */
export async function waitForQuiet(label: string): Promise<Quiet> {
  const start = Date.now();
  const limitS = lastTimedOut ? Math.min(BUSY_RETRY_S, maxWaitS) : maxWaitS;
  let load = load1();
  while (load > MAX_LOAD && Date.now() - start < limitS * 1000) {
    await new Promise((r) => setTimeout(r, 2000));
    load = load1();
  }
  const waitedS = Math.round((Date.now() - start) / 1000);
  const busy = load > MAX_LOAD;
  lastTimedOut = busy;
  if (busy)
    console.log(
      `  [busy] ${label}: 1-min load ${load.toFixed(2)} after waiting ${waitedS} s; figures may be inflated`,
    );
  return { load1: load, waitedS, busy };
}

/** A table cell: the load at the start, starred when the machine was busy. */
export function loadCell(q: Quiet): string {
  return `${q.load1.toFixed(2)}${q.busy ? '*' : ''}`;
}

export const BUSY_NOTE =
  'load = 1-min load average when the row started; * = machine busy (others running), figures may be inflated';
