/**
 * @module native-bench/restart-large — restart of a large store (default 1M memories) without
 * loading it over REST: writes a data directory offline (the workspace's shard gets a snapshot of
 * generated memories, one edge each, clustered 384-d vectors; with `--graph 1` also the HNSW graph
 * and its manifest, as a clean shutdown leaves them), then starts the real server on it twice:
 * first from the generated files, then from the snapshot and graphs the server's own SIGTERM wrote.
 * Reports spawn → ready, the shard's own recovery time, time until the server's CPU settles (the
 * lexical index and any HNSW backlog are built in the background after ready), RSS per memory.
 *
 *   npm run build && node --import tsx native-bench/restart-large.ts [--memories 1000000] [--graph 1]
 *     [--dir DIR] [--reuse 1] [--keep 1] [--shards 2] [--cli dist/cli.js] [--settle-limit-s 600]
 *     [--ops 200]
 *
 * `--reuse 1` with `--dir` starts from a directory an earlier run kept (generating 1M memories with
 * their graph takes about 20 minutes on one core; without the graph about 4 minutes); its
 * auth.json is deleted so that the server prints a new admin key. `--ops N` (default 0): once the
 * second start has settled, N similarity recalls and then N forgets, one at a time, over REST
 * (lib/scale-ops), with their p50 and p99. `--crash-after-snapshot 1`: before the measured
 * starts, a server settles, remembers one memory, takes a periodic snapshot over the saved graph
 * and is killed (SIGKILL), so the first measured start is a start after a crash from a directory
 * whose newest snapshot is later than its saved graph. `--generate-only 1` writes the directory
 * and stops.
 */
import {
  closeSync,
  existsSync,
  readdirSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag } from './lib/args.ts';
import { dirBytes, rssBytes, waitForIdleProcess } from './lib/proc.ts';
import { parseRecovery } from './lib/recovery-log.ts';
import { Client } from './lib/forget-load.ts';
import { freePort, startServer, type RunningServer } from './lib/server-process.ts';
import { measureScaleOps } from './lib/scale-ops.ts';
import { STORE_WS, storeRecords } from './micro/store-fixture.ts';
import { shardDir } from '../src/data-dir.ts';
import { shardFor } from '../src/router/shard-map.ts';
import { VectorIndex } from '../src/shard/index/vector-index.ts';
import { encodeFrame } from '../src/shard/persist/frames.ts';
import { saveIndexGraphs } from '../src/shard/persist/graph-files.ts';
import type { SnapshotFooter, SnapshotHeader } from '../src/shard/store/records.ts';

const MB = 2 ** 20;

function generate(dir: string, opts: { memories: number; shards: number; graph: boolean }): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'meta.json'),
    JSON.stringify({ format: 1, shards: opts.shards, created_at: Date.now() * 1000 }, null, 2),
  );
  const shard = shardFor(STORE_WS, opts.shards);
  for (let s = 0; s < opts.shards; s++) mkdirSync(shardDir(dir, s), { recursive: true });
  const sdir = shardDir(dir, shard);
  const vectors = opts.graph ? new VectorIndex() : null;
  const t0 = performance.now();
  const tmp = join(sdir, 'snap-00000001.snap.tmp');
  const fd = openSync(tmp, 'w');
  let chunks: Buffer[] = [];
  let pending = 0;
  const flush = (): void => {
    const buf = Buffer.concat(chunks);
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off);
    chunks = [];
    pending = 0;
  };
  const push = (frame: Buffer): void => {
    chunks.push(frame);
    pending += frame.length;
    if (pending >= 8 * MB) flush();
  };
  const header: SnapshotHeader = { t: 'snap', format: 1, shard, walSeq: 1, createdAt: Date.now() };
  push(encodeFrame(header));
  let records = 0;
  for (const r of storeRecords(
    opts.memories,
    7,
    STORE_WS,
    vectors ? (id, v) => vectors.upsert(id, v) : undefined,
  )) {
    push(encodeFrame(r));
    records += 1;
  }
  const footer: SnapshotFooter = { t: 'end', records };
  push(encodeFrame(footer));
  flush();
  closeSync(fd);
  renameSync(tmp, join(sdir, 'snap-00000001.snap'));
  console.log(
    `snapshot of ${opts.memories} memories written in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  if (!vectors) return;
  const t1 = performance.now();
  let last = t1;
  while (vectors.indexSome(10_000)) {
    if (performance.now() - last > 60_000) {
      last = performance.now();
      console.log(
        `  HNSW: ${vectors.size - vectors.pendingSize} of ${vectors.size} after ${((last - t1) / 1000).toFixed(0)} s`,
      );
    }
  }
  saveIndexGraphs(sdir, 1, [[STORE_WS, vectors]]);
  console.log(`HNSW graph built and saved in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
}

async function restart(
  dir: string,
  label: string,
  memories: number,
  cli: string | undefined,
  apiKey: string | undefined,
  settleLimitS: number,
  baseRss: number,
  ops = 0,
): Promise<string> {
  const port = await freePort();
  const server: RunningServer = await startServer({
    dataDir: dir,
    port,
    ...(cli ? { cli } : {}),
    ...(apiKey ? { apiKey } : {}),
    // The second start is to read what a finished clean shutdown leaves: at 1M its final snapshot
    // and graph (~4 GB) take longer than the default 10 s, after which the shard is terminated.
    env: { FLASHBULB_SHUTDOWN_TIMEOUT_S: '900' },
  });
  const rec = parseRecovery(server.log);
  const rssReady = rssBytes(server.pid);
  const settleS = await waitForIdleProcess(server.pid, { maxCores: 0.15, limitS: settleLimitS });
  const rssSettled = rssBytes(server.pid);
  // A failed measurement still stops the server (it would outlive the benchmark otherwise).
  const measured =
    ops > 0 ? await measureScaleOps(server, STORE_WS, ops).catch(stopAnd(server)) : null;
  const stop = await server.stop();
  console.log(
    `| ${label} | ${(server.readyMs / 1000).toFixed(1)} | ${(rec.slowestShardMs / 1000).toFixed(1)} | ${rec.memories} | ${settleS.toFixed(1)} |` +
      ` ${((rssReady - baseRss) / memories / 1024).toFixed(2)} | ${((rssSettled - baseRss) / memories / 1024).toFixed(2)} | ${(stop.ms / 1000).toFixed(1)} |`,
  );
  if (rec.slowestPhases) console.log(`  the slowest shard's recovery, ms: ${rec.slowestPhases}`);
  for (const [name, s] of Object.entries(measured ?? {}))
    console.log(
      `  ${name}: ${s.ops} one at a time, p50 ${s.p50Ms.toFixed(1)} ms, p99 ${s.p99Ms.toFixed(1)} ms, max ${s.maxMs.toFixed(1)} ms`,
    );
  if (rec.memories < memories)
    throw new Error(`recovered ${rec.memories} memories, expected ${memories}`);
  return server.apiKey;
}

/** A rejection handler that stops the server, then rethrows. */
function stopAnd(server: RunningServer): (err: unknown) => Promise<never> {
  return async (err) => {
    await server.kill();
    throw err;
  };
}

/**
 * Starts a server on `dir`, waits until it settles (the densities a generated snapshot lacks are
 * computed, so the snapshot below holds them, as a long-serving server's does), remembers one
 * memory, waits until a periodic snapshot has finished
 * (the generated snapshot, older than it, deleted) and kills the server: a crash after a snapshot
 * taken while serving. The auth file goes too (the next start prints a new admin key).
 */
async function crashAfterSnapshot(
  dir: string,
  shards: number,
  cli: string | undefined,
): Promise<void> {
  const sdir = shardDir(dir, shardFor(STORE_WS, shards));
  const snaps = (): string[] => readdirSync(sdir).filter((f) => /^snap-\d+\.snap$/.test(f));
  const before = snaps();
  const server = await startServer({
    dataDir: dir,
    port: await freePort(),
    ...(cli ? { cli } : {}),
    env: { FLASHBULB_SNAPSHOT_INTERVAL_S: '1' },
  });
  try {
    await waitForIdleProcess(server.pid, { maxCores: 0.15, limitS: 900 });
    const c = new Client(server);
    await c.call('POST', '/v1/workspaces', { slug: STORE_WS }).catch((err: Error) => {
      if (!/409/.test(err.message)) throw err;
    });
    await c.call('POST', `/v1/workspaces/${STORE_WS}/memories`, { content: 'one memory more' });
    const t0 = performance.now();
    for (;;) {
      const now = snaps();
      if (now.length > 0 && !now.some((f) => before.includes(f))) break;
      if (performance.now() - t0 > 600_000) throw new Error('no periodic snapshot within 600 s');
      await new Promise((done) => setTimeout(done, 100));
    }
  } finally {
    await server.kill();
  }
  rmSync(join(dir, 'auth.json'), { force: true });
  const files = readdirSync(sdir).filter((f) => /^(snap|hnsw)-/.test(f));
  console.log(`killed after a periodic snapshot; the shard holds ${files.join(', ')}`);
}

/** RSS of a server on an empty data directory once it has settled. */
async function emptyServerRss(cli: string | undefined): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'restart-large-empty-'));
  try {
    const server = await startServer({
      dataDir: dir,
      port: await freePort(),
      ...(cli ? { cli } : {}),
    });
    await waitForIdleProcess(server.pid, { maxCores: 0.15, limitS: 30 });
    const rss = rssBytes(server.pid);
    await server.stop();
    return rss;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: Object.fromEntries(
      [
        'memories',
        'graph',
        'dir',
        'reuse',
        'keep',
        'shards',
        'cli',
        'settle-limit-s',
        'ops',
        'crash-after-snapshot',
        'generate-only',
      ].map((k) => [k, { type: 'string' as const }]),
    ),
    strict: true,
  });
  const memories = numberFlag(values, 'memories', 1_000_000);
  const graph = numberFlag(values, 'graph', 0) === 1;
  const shards = numberFlag(values, 'shards', 2);
  const settleLimitS = numberFlag(values, 'settle-limit-s', 600);
  const ops = numberFlag(values, 'ops', 0);
  const cli = stringFlag(values, 'cli');
  const given = stringFlag(values, 'dir');
  const reuse = numberFlag(values, 'reuse', 0) === 1;
  const dir = given ?? mkdtempSync(join(tmpdir(), 'restart-large-'));
  if (reuse && !existsSync(join(dir, 'meta.json')))
    throw new Error(`--reuse 1: ${dir} holds no data directory`);
  try {
    if (!reuse) generate(dir, { memories, shards, graph });
    // The admin key printed on the first start is the only way in: a kept directory's key is gone,
    // so its auth file goes too and the server prints a new one.
    else rmSync(join(dir, 'auth.json'), { force: true });
    if (numberFlag(values, 'generate-only', 0) === 1) return;
    const crashed = numberFlag(values, 'crash-after-snapshot', 0) === 1;
    if (crashed) await crashAfterSnapshot(dir, shards, cli);
    console.log(
      `data directory ${(dirBytes(dir) / MB).toFixed(0)} MiB (${(dirBytes(dir) / memories).toFixed(0)} B per memory)`,
    );
    const base = await emptyServerRss(cli);
    console.log(`an empty server's RSS: ${(base / MB).toFixed(0)} MiB (subtracted below)`);
    console.log(
      '| start | spawn → ready s | shard recovery s | memories | ready → settled s | RSS KB per memory at ready | when settled | SIGTERM → exit s |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const key = await restart(
      dir,
      crashed
        ? 'after a crash, snapshot newer than the graph'
        : reuse
          ? 'kept directory'
          : 'generated files',
      memories,
      cli,
      undefined,
      settleLimitS,
      base,
    );
    await restart(dir, 'after SIGTERM', memories, cli, key, settleLimitS, base, ops);
  } finally {
    if (numberFlag(values, 'keep', 0) === 1 || given) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
