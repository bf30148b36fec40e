/**
 * @module native-bench/micro/store-memory — what one memory costs a shard in RAM, and how long a
 * shard takes to recover from its snapshot, in process (no server, no HTTP): N memories with
 * corpus sentences, small contexts, clustered 384-d unit vectors and one edge each are applied
 * through applyRecord as replay does; RSS and V8 heap are read after a full GC. Then a snapshot is
 * written and recovered, timing recovery (optionally with the HNSW graph built and saved first).
 *
 *   node --expose-gc --import tsx native-bench/micro/store-memory.ts [--memories 100000] [--graph 0|1]
 *     [--dir DIR] [--phases memory,recover]
 *
 * `--graph 1` builds the HNSW graph (about 1 ms per memory on one thread) so RSS includes
 * hnswlib's copy, and recovery adopts the saved graph as a normal restart does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { recoverShard } from '../../src/shard/persist/recovery.ts';
import { writeSnapshot } from '../../src/shard/persist/snapshot.ts';
import { loadGraphs, saveGraphs } from '../../src/shard/persist/graph-files.ts';
import { applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import { microFlags } from './flags.ts';
import { storeRecords as records, STORE_WS as WS } from './store-fixture.ts';

const KB = 1024;
const MB = 2 ** 20;

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 3; i++) g();
}

function mem(): {
  rss: number;
  heap: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
} {
  gc();
  const u = process.memoryUsage();
  return {
    rss: u.rss,
    heap: u.heapUsed,
    heapTotal: u.heapTotal,
    external: u.external,
    arrayBuffers: u.arrayBuffers,
  };
}

function perMemory(after: number, before: number, n: number): string {
  return `${((after - before) / n / KB).toFixed(2)} KB`;
}

async function main(): Promise<void> {
  const { values } = microFlags(['memories', 'graph', 'dir', 'phases', 'from', 'keep']);
  const from = stringFlag(values, 'from');
  if (from !== undefined) return recoverOnly(from);
  const n = numberFlag(values, 'memories', 100_000);
  const graph = numberFlag(values, 'graph', 0) === 1;
  const phases = (stringFlag(values, 'phases') ?? 'memory,recover').split(',');
  const base = stringFlag(values, 'dir') ?? tmpdir();
  const dir = mkdtempSync(join(base, 'store-memory-'));
  try {
    const before = mem();
    let t = performance.now();
    let state: ShardState | null = new ShardState();
    for (const r of records(n, 7)) applyRecord(state, r);
    const loadS = (performance.now() - t) / 1000;
    const loaded = mem();
    const ws = state.workspace(WS);
    let graphS = 0;
    if (graph) {
      t = performance.now();
      while (ws.vectors.indexSome(1000)) {
        /* build */
      }
      graphS = (performance.now() - t) / 1000;
    }
    const indexed = mem();
    console.log(
      `memories ${n}, applied in ${loadS.toFixed(1)} s${graph ? `, HNSW built in ${graphS.toFixed(1)} s` : ''}`,
    );
    if (phases.includes('memory')) {
      console.log('| measure | per memory |');
      console.log('|---|---|');
      console.log(`| RSS, store without graph | ${perMemory(loaded.rss, before.rss, n)} |`);
      console.log(`| V8 heap used | ${perMemory(loaded.heap, before.heap, n)} |`);
      console.log(`| V8 heap committed | ${perMemory(loaded.heapTotal, before.heapTotal, n)} |`);
      console.log(
        `| ArrayBuffers (vectors) | ${perMemory(loaded.arrayBuffers, before.arrayBuffers, n)} |`,
      );
      if (graph)
        console.log(`| RSS, store with HNSW graph | ${perMemory(indexed.rss, before.rss, n)} |`);
      console.log(
        `| RSS beyond the 1.5 KB vector | ${((indexed.rss - before.rss) / n / KB - 1.5).toFixed(2)} KB |`,
      );
    }
    if (!phases.includes('recover')) return;
    const snap = await writeSnapshot(dir, { shard: 0, walSeq: 1, state });
    if (graph) saveGraphs(dir, 1, state);
    state = null;
    const idle = mem();
    t = performance.now();
    let adopted = 0;
    const rec = recoverShard(dir, {
      afterSnapshot: (s, walSeq) => void (adopted = graph ? loadGraphs(dir, walSeq, s) : 0),
    });
    const recoverS = (performance.now() - t) / 1000;
    const after = mem();
    console.log(
      `snapshot ${(snap.bytes / MB).toFixed(1)} MB (${(snap.bytes / n).toFixed(0)} B per memory); recovery ${recoverS.toFixed(2)} s` +
        ` (${Math.round(n / recoverS)} memories/s; graphs adopted ${adopted}); RSS after recovery ${perMemory(after.rss, idle.rss, n)} per memory;` +
        ` ${rec.state.memoryCount()} memories`,
    );
  } finally {
    if (stringFlag(values, 'keep') === '1') console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** Recovers a directory kept by an earlier run (`--keep 1`), for profiling recovery alone. */
function recoverOnly(dir: string): void {
  const idle = mem();
  const t = performance.now();
  let adopted = 0;
  const rec = recoverShard(dir, {
    afterSnapshot: (s, walSeq) => void (adopted = loadGraphs(dir, walSeq, s)),
  });
  const recoverS = (performance.now() - t) / 1000;
  const n = rec.state.memoryCount();
  const after = mem();
  console.log(
    `recovery of ${n} memories ${recoverS.toFixed(2)} s (graphs adopted ${adopted}); per memory: RSS ${perMemory(after.rss, idle.rss, n)},` +
      ` V8 heap used ${perMemory(after.heap, idle.heap, n)}, committed ${perMemory(after.heapTotal, idle.heapTotal, n)}, ArrayBuffers ${perMemory(after.arrayBuffers, idle.arrayBuffers, n)}`,
  );
  if (rec.state.workspaces.get(WS)?.lexical.size !== n) throw new Error('lexical index incomplete');
  const full = mem();
  console.log(
    `with the lexical index built: RSS ${perMemory(full.rss, idle.rss, n)}, V8 heap used ${perMemory(full.heap, idle.heap, n)}`,
  );
}

await main();
