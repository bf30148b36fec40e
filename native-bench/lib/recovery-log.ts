/**
 * @module native-bench/lib/recovery-log — reads the server's start-up lines
 * `shard N: M memories recovered (R log records replayed) in T ms (ms: snapshot A, graphs B, ...)`
 * into numbers.
 */

export interface Recovery {
  shards: number;
  memories: number;
  replayedRecords: number;
  /** The slowest shard's recovery time (shards recover in parallel). */
  slowestShardMs: number;
  /** The slowest shard's steps as the line names them (`snapshot 1234, graphs 56`), or ''. */
  slowestPhases: string;
}

const RECOVERED_RE =
  /shard (\d+): (\d+) memories recovered \((\d+) log records replayed\) in (\d+) ms(?: \(ms: ([^)]*)\))?/;

export function parseRecovery(log: readonly string[]): Recovery {
  const out: Recovery = {
    shards: 0,
    memories: 0,
    replayedRecords: 0,
    slowestShardMs: 0,
    slowestPhases: '',
  };
  for (const line of log) {
    const m = RECOVERED_RE.exec(line);
    if (!m) continue;
    out.shards += 1;
    out.memories += Number(m[2]);
    out.replayedRecords += Number(m[3]);
    if (Number(m[4]) >= out.slowestShardMs) out.slowestPhases = m[5] ?? '';
    out.slowestShardMs = Math.max(out.slowestShardMs, Number(m[4]));
  }
  return out;
}
