/**
 * A shard's saved HNSW graphs read on libuv's thread pool while its snapshot is decoded
 * (LocalStorage.open, graph-files startGraphLoads / adoptGraphs): the graph is adopted as the
 * synchronous recovery adopts it, the log written after the snapshot is reconciled with it, and
 * a graph file that cannot be read (or whose CRC-32 differs) is not adopted: the graph is rebuilt.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame } from '../../src/shard/persist/frames.ts';
import { seqName } from '../../src/shard/persist/fsutil.ts';
import { saveGraphs } from '../../src/shard/persist/graph-files.ts';
import { writeSnapshot } from '../../src/shard/persist/snapshot.ts';
import { LocalStorage } from '../../src/shard/local-storage.ts';
import { applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { drain, hooks, id, N, opts, put, vector } from '../helpers/graph-dir.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A shard directory: a snapshot of N memories with its saved graph, then a log after it. */
async function shardDirWithGraph(log: LogRecord[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'flashbulb-graph-load-'));
  dirs.push(dir);
  const state = new ShardState();
  for (let n = 0; n < N; n++) applyRecord(state, put(n));
  drain(state);
  await writeSnapshot(dir, { shard: 0, walSeq: 1, state });
  expect(saveGraphs(dir, 1, state).adopted).toBe(1);
  writeFileSync(join(dir, seqName('wal', 1, 'log')), Buffer.concat(log.map((r) => encodeFrame(r))));
  return dir;
}

function nearest(storage: LocalStorage, v: Float32Array): string | undefined {
  const w = storage.recovered.state.workspace('w');
  return w.vectors.search(v, { k: 1, ef: 64 })[0]?.id;
}

describe('LocalStorage.open: graphs read beside the snapshot', () => {
  it('adopts the saved graph, as the synchronous recovery does, and reconciles the log after it', async () => {
    // After the snapshot: one memory forgotten, one changed (a new vector, same id), one new.
    const changed = vector(99_999);
    const dir = await shardDirWithGraph([
      { t: 'del', ws: 'w', id: id(5) },
      put(7, changed),
      put(N + 1),
    ]);
    const copy = `${dir}-copy`;
    cpSync(dir, copy, { recursive: true });
    dirs.push(copy);
    const opened = await LocalStorage.open(opts(dir), hooks);
    const sync = new LocalStorage(opts(copy), hooks);
    try {
      for (const storage of [opened, sync]) {
        const w = storage.recovered.state.workspace('w');
        expect(w.vectors.hasGraph).toBe(true);
        // Only what the log changed waits for the graph: the new memory and the changed one.
        expect(w.vectors.pendingSize).toBe(2);
        expect(w.vectors.size).toBe(N);
        expect(storage.recovered.replayedRecords).toBe(3);
      }
      for (const n of [0, 300, N - 1, N + 1]) expect(nearest(opened, vector(n))).toBe(id(n));
      expect(nearest(opened, changed)).toBe(id(7));
      expect(nearest(opened, vector(5))).not.toBe(id(5));
      const w = opened.recovered.state.workspace('w');
      while (w.vectors.indexSome(1000)) {
        /* drain */
      }
      expect(w.vectors.needsIndexing).toBe(false);
      expect(nearest(opened, changed)).toBe(id(7));
      expect(nearest(opened, vector(N + 1))).toBe(id(N + 1));
    } finally {
      for (const s of [opened, sync]) await s.close(s.recovered.state, () => false);
    }
  });

  it('a graph file that cannot be read is not adopted, on either path: the graph is rebuilt', async () => {
    const dir = await shardDirWithGraph([]);
    writeFileSync(join(dir, 'hnsw-00000001-0.bin'), 'not a graph');
    const copy = `${dir}-copy`;
    cpSync(dir, copy, { recursive: true });
    dirs.push(copy);
    const opened = await LocalStorage.open(opts(dir), hooks);
    const sync = new LocalStorage(opts(copy), hooks);
    try {
      for (const storage of [opened, sync]) {
        const w = storage.recovered.state.workspace('w');
        expect(w.vectors.hasGraph).toBe(false);
        expect(w.vectors.pendingSize).toBe(N);
      }
    } finally {
      for (const s of [opened, sync]) await s.close(s.recovered.state, () => false);
    }
  });
});
