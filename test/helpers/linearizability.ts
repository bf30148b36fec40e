/**
 * A recorded key-value history and its checks: Porcupine (tools/linearizability, built with the Go
 * toolchain on first use) and the direct ones: no acknowledged write lost at the end, and no read
 * that goes back behind a write acknowledged before the read began.
 *
 * Each key is a memory written by one client, in order, with values `v0`, `v1`… (the create, then
 * revisions), so versions say what "older" means. A write whose outcome is unknown (a timeout, a
 * 5xx) is recorded as such: it may take effect at any time after its call.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './child.ts';

export interface Op {
  client: number;
  op: 'write' | 'read';
  key: string;
  /** The value written, or the value read ("" when absent). */
  value: string;
  /** Nanoseconds (`now`), at the call and at the answer. */
  call: number;
  ret: number;
  /** The outcome is not known (the write may or may not have happened). */
  unknown: boolean;
  /** Which node served it, for the visualisation's reader. */
  via?: string;
}

const T0 = process.hrtime.bigint();
/** Nanoseconds since this module loaded (small enough for a double, and for Go's int64). */
export const now = (): number => Number(process.hrtime.bigint() - T0);

export function versionOf(value: string): number {
  const m = /^v(\d+)$/.exec(value);
  return m ? Number(m[1]) : -1;
}

/**
 * Reads that go back in time: a read that began after version v was acknowledged, or after another
 * read had returned v, and returned an older version whose own write was acknowledged (a write of
 * unknown outcome may land late; once a read saw it, it has landed).
 */
export function staleReads(history: readonly Op[]): string[] {
  const out: string[] = [];
  const writes = history.filter((o) => o.op === 'write');
  const ackedOf = new Map<string, Op[]>();
  for (const w of writes) if (!w.unknown) ackedOf.set(w.key, [...(ackedOf.get(w.key) ?? []), w]);
  for (const r of history) {
    if (r.op !== 'read' || r.unknown) continue;
    const got = versionOf(r.value);
    const acked = ackedOf.get(r.key) ?? [];
    const seen = history.filter(
      (o) => o.op === 'read' && !o.unknown && o.key === r.key && o.ret < r.call,
    );
    const newest = Math.max(
      -1,
      ...[...acked.filter((w) => w.ret < r.call), ...seen].map((w) => versionOf(w.value)),
    );
    const gotWasAcked = got < 0 || acked.some((w) => w.value === r.value);
    if (got < newest && gotWasAcked)
      out.push(
        `read of ${r.key} via ${r.via ?? '?'} returned ${r.value || 'nothing'} after v${newest} was acknowledged or read`,
      );
  }
  return out;
}

/** Keys whose final value (`finals`: key → value read through each node) is older than the newest acknowledged write. */
export function lostWrites(
  history: readonly Op[],
  finals: ReadonlyMap<string, ReadonlyArray<{ via: string; value: string }>>,
): string[] {
  const out: string[] = [];
  const newest = new Map<string, number>();
  for (const w of history)
    if (w.op === 'write' && !w.unknown)
      newest.set(w.key, Math.max(newest.get(w.key) ?? -1, versionOf(w.value)));
  for (const [key, v] of newest) {
    for (const f of finals.get(key) ?? [{ via: 'any node', value: '' }]) {
      if (versionOf(f.value) < v)
        out.push(
          `${key}: v${v} was acknowledged, ${f.via} reads ${f.value || 'nothing'} at the end`,
        );
    }
  }
  return out;
}

let built: string | null = null;

/** The Go toolchain: `go` on PATH or /usr/local/go/bin/go; null when there is none. */
export function goBinary(): string | null {
  for (const go of ['go', '/usr/local/go/bin/go']) {
    if (spawnSync(go, ['version'], { stdio: 'ignore' }).status === 0) return go;
  }
  return null;
}

/** Builds tools/linearizability once per process; returns the binary's path. */
export function checkerBinary(): string {
  if (built && existsSync(built)) return built;
  const go = goBinary();
  if (!go)
    throw new Error(
      'no Go toolchain (go on PATH or /usr/local/go/bin/go) to build tools/linearizability',
    );
  const out = join(tmpdir(), `flashbulb-linearizability-${process.pid}`);
  execFileSync(go, ['build', '-o', out, '.'], {
    cwd: join(ROOT, 'tools', 'linearizability'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  built = out;
  return out;
}

export interface PorcupineResult {
  linearizable: boolean;
  /** Porcupine's verdict line (or its error). */
  output: string;
  historyPath: string;
  /** Written only when the history is not linearizable. */
  visualizationPath: string;
}

/** Writes the history under `dir` and checks it with Porcupine. */
export function checkWithPorcupine(history: readonly Op[], dir: string): PorcupineResult {
  mkdirSync(dir, { recursive: true });
  const historyPath = join(dir, 'history.json');
  const visualizationPath = join(dir, 'porcupine.html');
  writeFileSync(historyPath, JSON.stringify(history, null, 0).replace(/\},\{/g, '},\n{'));
  const res = spawnSync(checkerBinary(), [historyPath, visualizationPath], { encoding: 'utf8' });
  const output = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim();
  if (res.status === 2 || res.status === null)
    throw new Error(`the linearizability checker could not decide: ${output || String(res.error)}`);
  return { linearizable: res.status === 0, output, historyPath, visualizationPath };
}
