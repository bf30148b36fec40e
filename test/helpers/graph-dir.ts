/**
 * Shard directories with a saved HNSW graph, for the tests of graphs kept across snapshots
 * (persist/graph-files): N memories of seeded unit vectors (past VectorIndex's exact-search
 * bound, so the workspace has a graph) written through a LocalStorage and shut down cleanly, and
 * the searches that compare an adopted graph with one built afresh from the same vectors.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { mulberry32 } from '../../src/analysis/cluster.ts';
import { VectorIndex } from '../../src/shard/index/vector-index.ts';
import { LocalStorage } from '../../src/shard/local-storage.ts';
import { applyRecord, type ShardState } from '../../src/shard/store/apply.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { storedMemory } from './memory-record.ts';

export const DIM = 16;
export const N = 1200; // past VectorIndex's EXACT_MAX (1024), so the workspace has a graph

export const id = (n: number): string => n.toString(16).padStart(32, '0');

/** A unit vector of its own for every n (a seeded walk, so tests repeat). */
export function vector(n: number): Float32Array {
  const v = new Float32Array(DIM);
  const next = mulberry32(n + 1);
  let norm = 0;
  for (let i = 0; i < DIM; i++) {
    v[i] = next() - 0.5;
    norm += (v[i] as number) ** 2;
  }
  for (let i = 0; i < DIM; i++) v[i] = (v[i] as number) / Math.sqrt(norm);
  return v;
}

export function put(n: number, v = vector(n)): LogRecord {
  return {
    t: 'put',
    ws: 'w',
    m: storedMemory(id(n), `memory ${n}`, { embedding: new Uint8Array(v.slice().buffer) }),
  };
}

export const hooks = { onSync: () => {}, onFail: () => {} };
export const opts = (dir: string) => ({ dir, shard: 0, durability: 'os' as const });
export const notWaiting = () => false;

/** Writes records as a shard does: applied to the state, then logged. */
export async function write(s: LocalStorage, records: LogRecord[]): Promise<void> {
  for (const r of records) applyRecord(s.recovered.state, r);
  await s.append(records);
}

export function drain(state: ShardState): void {
  while (state.workspace('w').vectors.indexSome(1000)) {
    /* build the graph */
  }
}

export const graphFiles = (dir: string): string[] =>
  readdirSync(dir).filter((f) => f.startsWith('hnsw-'));

/** Whether graph file `bin` in `dir` holds these vector bytes. */
export function fileHolds(dir: string, bin: string, v: Float32Array): boolean {
  return readFileSync(join(dir, bin)).indexOf(Buffer.from(v.buffer)) >= 0;
}

export function top(vectors: VectorIndex, q: Float32Array): string[] {
  return vectors.search(q, { k: 5, ef: 400 }).map((h) => h.id);
}

/** A graph built afresh from the workspace's memories, as a start without a saved graph builds. */
export function rebuilt(state: ShardState): VectorIndex {
  const fresh = new VectorIndex();
  for (const [key, m] of state.workspace('w').memories) fresh.upsert(key, m.embedding);
  while (fresh.indexSome(1000)) {
    /* build */
  }
  return fresh;
}

/** Temporary directories and open storages, released by {@link GraphDirs.release} after each test. */
export class GraphDirs {
  readonly #dirs: string[] = [];
  readonly #open: LocalStorage[] = [];

  tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-graph-keep-'));
    this.#dirs.push(dir);
    return dir;
  }

  /** Marks a directory made elsewhere (a copy) for removal. */
  adopt(dir: string): string {
    this.#dirs.push(dir);
    return dir;
  }

  async opened(dir: string): Promise<LocalStorage> {
    const s = await LocalStorage.open(opts(dir), hooks);
    this.#open.push(s);
    return s;
  }

  /** The synchronous start (recoverShard), as the cluster's partitions open a shard. */
  openedSync(dir: string): LocalStorage {
    const s = new LocalStorage(opts(dir), hooks);
    this.#open.push(s);
    return s;
  }

  /** A shard directory shut down cleanly with N memories and their graph (hnsw-<seq> files). */
  async shutDownWithGraph(): Promise<{ dir: string; graphSeq: number }> {
    const dir = this.tempDir();
    const s = await LocalStorage.open(opts(dir), hooks);
    await write(
      s,
      Array.from({ length: N }, (_, n) => put(n)),
    );
    drain(s.recovered.state);
    await s.close(s.recovered.state, notWaiting);
    const manifest = readdirSync(dir).find((f) => f.endsWith('.manifest'));
    expect(manifest).toBeDefined();
    return { dir, graphSeq: Number(/hnsw-(\d+)/.exec(manifest as string)?.[1]) };
  }

  async release(): Promise<void> {
    for (const s of this.#open.splice(0))
      await s.close(s.recovered.state, () => false).catch(() => {});
    for (const d of this.#dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}
