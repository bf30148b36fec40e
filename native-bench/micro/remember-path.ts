/**
 * @module native-bench/micro/remember-path — what one remember costs inside a shard, from the op to
 * the state and the log: CPU per op and heap bytes allocated per op, for one memory per call
 * (384-d hash-embedder vector, a sentence, a small context), with the log in memory (a no-op
 * storage: the op, the record and its application only) and with the shard's own log file
 * (durability 'os': the frame encoding and write, no fsync). Contradiction checks are off. Then
 * the other direction: CPU to apply 50k memories' records read back from frames (recovery's and
 * cluster replay's `applyRecord`, in recovery mode).
 *
 * Allocation is the heap growth over a batch with no collection in between: run with a young
 * generation large enough that the batch fits (the command below), after a forced collection.
 *
 *   node --expose-gc --max-semi-space-size=128 --import tsx native-bench/micro/remember-path.ts [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHashEmbedder } from '../../src/embedding/hash-embedder.ts';
import type { RememberItem } from '../../src/protocol/shard.ts';
import type { ShardStorage } from '../../src/shard/storage.ts';
import { Shard } from '../../src/shard/shard.ts';
import { applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import { shardRecords } from './shard-fixture.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { rememberBody } from '../lib/corpus.ts';
import { Rng } from '../lib/prng.ts';
import { microFlags, report } from './flags.ts';

const DIM = 384;
const gc = (globalThis as { gc?: () => void }).gc;

/** `n` remember items with corpus sentences and their hash-embedder vectors. */
async function items(n: number): Promise<RememberItem[]> {
  const rng = new Rng(7);
  const bodies = Array.from({ length: n }, () => rememberBody(rng));
  const vectors = await createHashEmbedder(DIM).embed(bodies.map((b) => b.content));
  return bodies.map((b, i) => ({
    content: b.content,
    importance: 0.5,
    context: b.context ?? {},
    entityId: b.entity_id ?? null,
    kind: 'episode',
    embedding: vectors.slice(i * DIM, (i + 1) * DIM),
    edges: [],
  }));
}

function openShard(kind: 'memory' | 'file', dir: string): Shard {
  const opts = {
    shard: 0,
    dir,
    durability: 'os' as const,
    snapshotIntervalS: 3600,
    snapshotWalBytes: 1 << 30,
    eraseWithinS: 3600,
  };
  if (kind === 'file') return new Shard(opts);
  const recovered = {
    state: new ShardState(),
    replayedRecords: 0,
    truncatedTail: null,
    staleFiles: false,
  };
  const noLog: ShardStorage = {
    recovered,
    failed: null,
    append: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return new Shard(opts, () => {}, noLog);
}

interface Round {
  cpuUsPerOp: number;
  allocBytesPerOp: number;
  /** ArrayBuffer bytes (vectors' backing stores live outside the JS heap). */
  bufferBytesPerOp: number;
}

/** One round: `batch` remembers one after another, timed by CPU and weighed by heap growth. */
async function round(shard: Shard, batch: readonly RememberItem[]): Promise<Round> {
  gc?.();
  const before = process.memoryUsage();
  const cpuBefore = process.cpuUsage();
  for (const item of batch) await shard.handle('remember', 'bench', { items: [{ ...item }] });
  const cpu = process.cpuUsage(cpuBefore);
  const after = process.memoryUsage();
  return {
    cpuUsPerOp: (cpu.user + cpu.system) / batch.length,
    allocBytesPerOp: (after.heapUsed - before.heapUsed) / batch.length,
    bufferBytesPerOp: (after.arrayBuffers - before.arrayBuffers) / batch.length,
  };
}

/** CPU ms to apply `records` (as decoded from frames) to a fresh state in recovery mode, per round. */
function replayRounds(rounds: number, n: number): number[] {
  const records = shardRecords(n, 3);
  const out: number[] = [];
  for (let r = 0; r <= rounds; r++) {
    const state = new ShardState();
    state.recovering(true);
    const before = process.cpuUsage();
    for (const rec of records) applyRecord(state, rec);
    const cpu = process.cpuUsage(before);
    if (r > 0) out.push((cpu.user + cpu.system) / 1000); // round 0 warms up
  }
  return out;
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const { quick } = microFlags();
  if (!gc) throw new Error('run with --expose-gc (see the command in the header)');
  const batchSize = quick ? 500 : 2000;
  const rounds = quick ? 5 : 11;
  const pool = await items(batchSize);
  const rows: Cell[][] = [];
  for (const kind of ['memory', 'file'] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-remember-'));
    const shard = openShard(kind, dir);
    await round(shard, pool); // warm-up
    const results: Round[] = [];
    for (let r = 0; r < rounds; r++) results.push(await round(shard, pool));
    await shard.shutdown();
    rmSync(dir, { recursive: true, force: true });
    const cpu = results.map((r) => r.cpuUsPerOp);
    rows.push([
      kind === 'memory' ? 'log in memory (no-op)' : "log file, durability 'os'",
      median(cpu).toFixed(1),
      `${Math.min(...cpu).toFixed(1)}–${Math.max(...cpu).toFixed(1)}`,
      (median(results.map((r) => r.allocBytesPerOp)) / 1024).toFixed(2),
      (median(results.map((r) => r.bufferBytesPerOp)) / 1024).toFixed(2),
    ]);
  }
  report(
    `remember inside a shard: ${rounds} rounds of ${batchSize} single-memory calls, ${DIM}-d vectors`,
    formatTable(
      [
        'log',
        'CPU µs/op (median)',
        'CPU µs/op (range)',
        'heap KiB allocated/op',
        'ArrayBuffer KiB/op',
      ],
      rows,
    ),
    'the in-shard cost of a write (op, record, apply, and with the file log its frame), per call',
  );
  const n = quick ? 10_000 : 50_000;
  const replay = replayRounds(quick ? 3 : 5, n);
  report(
    `replay: ${n} memories and ${n - 1} edges read back from frames, applied in recovery mode`,
    formatTable(
      ['CPU ms (median)', 'CPU ms (range)'],
      [
        [
          median(replay).toFixed(0),
          `${Math.min(...replay).toFixed(0)}–${Math.max(...replay).toFixed(0)}`,
        ],
      ],
    ),
    'what decoding a frame and applying it costs (applyRecord), per round',
  );
}

await main();
