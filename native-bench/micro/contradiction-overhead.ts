/**
 * @module native-bench/micro/contradiction-overhead — shard write latency with the after-write
 * contradiction check off and on: a Shard (durability 'os', so the disk does not hide CPU cost)
 * seeded with existing statements, then remember calls with precomputed vectors, each close to an
 * existing memory (two thirds contradict it). Loads: one writer at 200/s (idle gaps between
 * writes, as in service) and closed loops (no gaps: the saturated shard). Each row gets a fresh
 * shard; rounds alternate off/on so drift hits both alike. Issue 7 wants write latency unchanged (±10%) with checks on.
 *
 *   node --import tsx native-bench/micro/contradiction-overhead.ts [--quick] [--memories 10000]
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberFlag } from '../lib/args.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import type { RememberItem } from '../../src/protocol/shard.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { checkContradictions } from '../../src/shard/contradictions.ts';
import { loadGraphs } from '../../src/shard/persist/graph-files.ts';
import { recoverShard } from '../../src/shard/persist/recovery.ts';
import { Shard } from '../../src/shard/shard.ts';
import { baseStatements, newItems, seedShardDir } from './contradiction-fixture.ts';
import { memory } from './graph-fixture.ts';
import { microFlags, report } from './flags.ts';
import { measure, measureConcurrent, measurePaced, type Measured } from './measure.ts';
import { BUSY_NOTE, loadCell } from './quiet.ts';
import { WS } from './shard-fixture.ts';

interface Config {
  checks: boolean;
  shard: Shard;
  next: () => RememberItem;
}

/**
 * A fresh shard per measurement, opened on a copy of the seed directory (whose saved HNSW graph
 * it adopts): two shards in one process share one thread, and a backlog of checks left by one
 * measurement would otherwise slow the next.
 */
async function openShard(
  seed: string,
  dir: string,
  checks: boolean,
  items: readonly RememberItem[],
): Promise<Config> {
  cpSync(seed, dir, { recursive: true });
  const shard = new Shard({
    shard: 0,
    dir,
    durability: 'os',
    snapshotIntervalS: 86_400,
    snapshotWalBytes: 2 ** 40,
    eraseWithinS: 3600,
    contradictions: checks,
  });
  await indexed(shard);
  let i = 0;
  return { checks, shard, next: () => items[i++ % items.length] as RememberItem };
}

async function indexed(shard: Shard): Promise<void> {
  const ws = shard.recovered.state.workspaces.get(WS);
  while (ws?.vectors.needsIndexing) await new Promise((r) => setTimeout(r, 50));
}

/** Seeds a directory once: snapshot, then a clean shutdown that saves the HNSW graph beside it. */
async function prepareSeed(dir: string, memories: number): Promise<RememberItem[]> {
  const statements = baseStatements(memories, 31);
  await seedShardDir(dir, statements);
  const shard = new Shard({
    shard: 0,
    dir,
    durability: 'os',
    snapshotIntervalS: 86_400,
    snapshotWalBytes: 2 ** 40,
    eraseWithinS: 3600,
  });
  await indexed(shard);
  await shard.shutdown();
  return newItems(statements, 5000, 32);
}

function write(c: Config): Promise<unknown> {
  return c.shard.handle('remember', WS, { items: [c.next()] });
}

interface Load {
  label: string;
  /** Writes per second for one paced writer, or null for closed-loop writers. */
  rate: number | null;
  writers: number;
}

/** 200/s is issue 8's remember throughput goal; closed loops show the saturated shard. */
const LOADS: readonly Load[] = [
  { label: '1 writer at 200/s', rate: 200, writers: 1 },
  { label: '1 writer, back to back', rate: null, writers: 1 },
  { label: '8 writers, back to back', rate: null, writers: 8 },
];

function runLoad(load: Load, c: Config, timeMs: number, name: string): Promise<Measured> {
  if (load.rate !== null)
    return measurePaced(name, () => write(c), { ratePerS: load.rate, timeMs });
  if (load.writers === 1) return measure(name, () => write(c), { timeMs, iterations: 200 });
  return measureConcurrent(name, () => write(c), { concurrency: load.writers, timeMs });
}

/** The CPU one after-write check costs (neighbour search + classifier), timed by itself. */
async function checkAlone(
  seed: string,
  items: readonly RememberItem[],
  timeMs: number,
): Promise<Measured> {
  const { state } = recoverShard(seed, {
    afterSnapshot: (st, walSeq) => loadGraphs(seed, walSeq, st),
  });
  const w = state.workspaces.get(WS);
  if (!w) throw new Error('no workspace to check');
  const now = Date.now() * 1000;
  const fresh = items.map((item, i) => memory(`new-${i}`, now, item.embedding, item.content));
  let i = 0;
  return measure(
    'check alone',
    () => void checkContradictions(w, [fresh[i++ % fresh.length] as MemoryRecord], now),
    { timeMs, iterations: 200 },
  );
}

async function main(): Promise<void> {
  const { quick, values } = microFlags(['memories']);
  const memories = numberFlag(values, 'memories', quick ? 3000 : 10_000);
  const timeMs = quick ? 1500 : 4000;
  const base = mkdtempSync(join(tmpdir(), 'flashbulb-contra-'));
  try {
    const seed = join(base, 'seed');
    const items = await prepareSeed(seed, memories);
    const rows: Cell[][] = [];
    const found = new Map<boolean, number>();
    let run = 0;
    for (const round of [1, 2]) {
      for (const load of LOADS) {
        for (const checks of [false, true]) {
          const c = await openShard(seed, join(base, `run-${run++}`), checks, items);
          const m = await runLoad(
            load,
            c,
            timeMs,
            `checks ${checks ? 'on' : 'off'}, ${load.label}, round ${round}`,
          );
          found.set(checks, (found.get(checks) ?? 0) + c.shard.takeMetrics().contradictions);
          await c.shard.shutdown();
          rows.push([
            load.label,
            checks ? 'on' : 'off',
            round,
            m.p50Ms,
            m.p99Ms,
            m.perS,
            loadCell(m.quiet),
          ]);
        }
      }
    }
    const alone = await checkAlone(seed, items, timeMs);
    rows.push([
      'check alone, per new memory',
      '-',
      '-',
      alone.p50Ms,
      alone.p99Ms,
      alone.perS,
      loadCell(alone.quiet),
    ]);
    report(
      `Write latency with and without contradiction checks (${memories.toLocaleString('en')} memories seeded, durability 'os')`,
      formatTable(['traffic', 'checks', 'round', 'p50 ms', 'p99 ms', 'writes/s', 'load'], rows),
      'what the after-write contradiction check costs the write path of the same shard thread (issue 7: ±10%).',
      [
        BUSY_NOTE,
        `contradictions found during the runs: ${found.get(true) ?? 0} with checks on, ${found.get(false) ?? 0} off`,
        'in-process Shard.handle("remember"), one item per call, vectors precomputed; no worker hop, no embedding; a fresh shard per row',
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
