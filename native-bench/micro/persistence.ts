/**
 * @module native-bench/micro/persistence — the shard's persistence path on this machine's disk:
 * log appends acknowledged after a group-commit fdatasync (1 and 32 concurrent appenders, and
 * durability 'os' for contrast), snapshot write and load at 10k and 100k memories with 384-d
 * vectors, msgpack framing (encodeFrame / readFrame) of a shard's records, and what writing a
 * snapshot holds its thread for (CPU, garbage collection, the longest stretch without a turn of
 * the event loop, and deleting the snapshot before it on the thread, as the shard once did).
 *
 *   node --import tsx native-bench/micro/persistence.ts [--quick] [--sizes 10000,100000] [--dir DIR]
 */
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringFlag } from '../lib/args.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { encodeFrame, readFrame } from '../../src/shard/persist/frames.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { seqName } from '../../src/shard/persist/fsutil.ts';
import { recoverShard } from '../../src/shard/persist/recovery.ts';
import { writeSnapshot } from '../../src/shard/persist/snapshot.ts';
import { Wal } from '../../src/shard/persist/wal.ts';
import { microFlags, numbersFlag, report } from './flags.ts';
import { measure, measureConcurrent, type Measured } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';
import { shardRecords, stateOf } from './shard-fixture.ts';

const MB = 2 ** 20;

async function walRows(
  base: string,
  records: readonly LogRecord[],
  timeMs: number,
): Promise<Cell[][]> {
  const rows: Cell[][] = [];
  for (const durability of ['fsync', 'os'] as const) {
    for (const appenders of [1, 32]) {
      const dir = mkdtempSync(join(base, 'wal-'));
      const counts = { appends: 0, syncs: 0 };
      const wal = new Wal({ dir, seq: 1, durability, onSync: () => (counts.syncs += 1) });
      const append = (): Promise<void> =>
        wal.append([records[counts.appends++ % records.length] as LogRecord]);
      const name = `log ${durability}, ${appenders} appender${appenders > 1 ? 's' : ''}`;
      const m: Measured =
        appenders === 1
          ? await measure(name, append, { timeMs, iterations: 100 })
          : await measureConcurrent(name, append, { concurrency: appenders, timeMs });
      // Appends per write+sync over the whole run (warm-up included) is the group-commit factor.
      const perSync = counts.appends / counts.syncs;
      rows.push([name, m.p50Ms, m.p99Ms, m.perS, m.perS / perSync, perSync, loadCell(m.quiet)]);
      await wal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

async function snapshotRows(base: string, n: number, quick: boolean): Promise<Cell[][]> {
  const records = shardRecords(n, 21);
  const state = stateOf(records);
  const dir = mkdtempSync(join(base, 'snap-'));
  let bytes = 0;
  const opts = { timeMs: 0, iterations: quick ? 2 : 5, warmup: 1 };
  const write = await measure(
    `snapshot write ${n}`,
    async () => {
      bytes = (await writeSnapshot(dir, { shard: 0, walSeq: 1, state })).bytes;
    },
    opts,
  );
  const load = await measure(`snapshot load ${n}`, () => void recoverShard(dir), opts);
  rmSync(dir, { recursive: true, force: true });
  const rows: Cell[][] = [];
  for (const [what, m] of [
    ['write (+ fdatasync, rename)', write],
    ['load (recoverShard, page cache warm)', load],
  ] as const) {
    rows.push([
      `snapshot ${what}`,
      n,
      bytes / MB,
      m.p50Ms,
      m.p99Ms,
      bytes / MB / (m.p50Ms / 1000),
      loadCell(m.quiet),
    ]);
  }
  return [...rows, ...(await codecRows(records, n, quick))];
}

/**
 * What writing a snapshot of `n` memories holds the thread for: wall and CPU time, garbage
 * collection, the longest stall of a 1 ms timer beside it (the longest stretch a request would
 * wait), and an `unlinkSync` of the snapshot before it; the median of five writes after one warm-up.
 */
async function stallRow(base: string, n: number): Promise<Cell[]> {
  const state = stateOf(shardRecords(n, 21));
  const dir = mkdtempSync(join(base, 'stall-'));
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  const runs: Array<{
    wall: number;
    cpu: number;
    gc: number;
    stall: number;
    unlink: number;
    bytes: number;
  }> = [];
  try {
    for (let i = 0; i <= 5; i++) {
      let stall = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        stall = Math.max(stall, now - last - 1);
        last = now;
      }, 1);
      // The timer ticks before the write starts, from inside the event loop (as a shard's snapshot does).
      await new Promise((resolve) => setTimeout(resolve, 10));
      stall = 0;
      gcMs = 0;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const { bytes } = await writeSnapshot(dir, { shard: 0, walSeq: i + 1, state });
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      clearInterval(timer);
      await new Promise((resolve) => setTimeout(resolve, 20)); // the collections' entries arrive after
      const u0 = performance.now();
      if (i > 0) unlinkSync(join(dir, seqName('snap', i, 'snap')));
      const unlink = performance.now() - u0;
      if (i > 0)
        runs.push({ wall, cpu: (cpu.user + cpu.system) / 1000, gc: gcMs, stall, unlink, bytes });
    }
  } finally {
    gc.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (f: (r: (typeof runs)[number]) => number): number =>
    runs.map(f).sort((a, b) => a - b)[runs.length >> 1] ?? Number.NaN;
  return [
    n,
    median((r) => r.bytes) / MB,
    median((r) => r.wall),
    median((r) => r.cpu),
    median((r) => r.gc),
    median((r) => r.stall),
    median((r) => r.unlink),
  ];
}

async function codecRows(
  records: readonly LogRecord[],
  n: number,
  quick: boolean,
): Promise<Cell[][]> {
  const frames = records.map((r) => encodeFrame(r));
  const buf = Buffer.concat(frames);
  const opts = { timeMs: quick ? 500 : 2000, iterations: 5, warmup: 2 };
  const enc = await measure(
    `encode ${n}`,
    () =>
      void records.forEach((r) => {
        encodeFrame(r);
      }),
    opts,
  );
  const dec = await measure(
    `decode ${n}`,
    () => {
      for (let off = 0; ; ) {
        const f = readFrame(buf, off);
        if (f.kind !== 'frame') break;
        off = f.next;
      }
    },
    opts,
  );
  const mb = buf.length / MB;
  return [
    [
      `msgpack encodeFrame, ${records.length} records`,
      n,
      mb,
      enc.p50Ms,
      enc.p99Ms,
      mb / (enc.p50Ms / 1000),
      loadCell(enc.quiet),
    ],
    [
      `msgpack readFrame (+ CRC), ${records.length} records`,
      n,
      mb,
      dec.p50Ms,
      dec.p99Ms,
      mb / (dec.p50Ms / 1000),
      loadCell(dec.quiet),
    ],
  ];
}

async function main(): Promise<void> {
  const { quick, values } = microFlags(['sizes', 'dir']);
  const sizes = numbersFlag(values, 'sizes', quick ? [10_000] : [10_000, 100_000]);
  const base = mkdtempSync(join(stringFlag(values, 'dir') ?? tmpdir(), 'flashbulb-micro-'));
  try {
    const walRecords = shardRecords(1000, 9).filter((r) => r.t === 'put');
    const wal = await walRows(base, walRecords, quick ? 1500 : 5000);
    report(
      `Log append (one put record ≈ ${(encodeFrame(walRecords[0]).length / 1024).toFixed(1)} KiB framed) in ${base}`,
      formatTable(
        ['case', 'p50 ms', 'p99 ms', 'appends/s', 'syncs/s', 'appends/sync', 'load'],
        wal,
      ),
      'what a durable acknowledgement costs on this disk, and how group commit shares one fdatasync among concurrent appenders.',
      [
        BUSY_NOTE,
        "latency is append() → durable; 'os' = acknowledged after write() without fdatasync (syncs/s then counts writes)",
      ],
    );
    const rows: Cell[][] = [];
    for (const n of sizes) rows.push(...(await snapshotRows(base, n, quick)));
    const stalls: Cell[][] = [];
    for (const n of sizes) stalls.push(await stallRow(base, n));
    report(
      'Snapshot write/load and msgpack framing (memories with 384-d vectors, one edge each)',
      formatTable(['case', 'memories', 'MB', 'p50 ms', 'p99 ms', 'MB/s', 'load'], rows),
      'how long a snapshot and a restart from it take per size, and how much of that is msgpack framing.',
      [
        BUSY_NOTE,
        'snapshot load = read + decode + apply to state (vector maps, graph); adopting or rebuilding the HNSW graph is not included',
      ],
    );
    report(
      'What writing a snapshot holds its thread for (median of 5 writes)',
      formatTable(
        [
          'memories',
          'MB',
          'wall ms',
          'CPU ms',
          'GC ms',
          'longest stall ms',
          'unlinkSync of the one before, ms',
        ],
        stalls,
      ),
      'how long a request waits behind a periodic snapshot on the shard thread: the snapshot is written in slices, so what matters is the longest stall, not the wall time.',
      [
        'stall = the most a 1 ms timer beside the write was late; the shard deletes the files a snapshot covers off its thread (fsutil.removeFiles), the last column is what one such delete costs on it',
      ],
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
