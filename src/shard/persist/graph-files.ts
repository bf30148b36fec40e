/**
 * @module shard/persist/graph-files — HNSW graphs saved beside a snapshot (on clean shutdown), so
 * a normal restart adopts them instead of rebuilding. A manifest `hnsw-<walSeq>.manifest` names
 * each workspace's graph file and its id ↔ label map; it is valid only with snapshot <walSeq>.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Hnsw } from '../index/hnsw.ts';
import type { VectorIndex } from '../index/vector-index.ts';
import type { ShardState } from '../store/apply.ts';
import { encodeFrame, readFrame } from './frames.ts';
import { writeFileDurably } from '../../files/durable.ts';
import { removeFiles } from './fsutil.ts';

interface Manifest {
  walSeq: number;
  graphs: Array<{
    ws: string;
    file: string;
    dim: number;
    labels: Array<[string, number]>;
    nextLabel?: number;
  }>;
}

/** The manifest of the graphs saved with snapshot `walSeq`. */
export function manifestName(walSeq: number): string {
  return `hnsw-${String(walSeq).padStart(8, '0')}.manifest`;
}

/** Saves every workspace graph of a quiescent state (final snapshot). */
export function saveGraphs(dir: string, walSeq: number, state: ShardState): number {
  return saveIndexGraphs(
    dir,
    walSeq,
    [...state.workspaces].map(([ws, w]): [string, VectorIndex] => [ws, w.vectors]),
  );
}

/** Saves the graphs of these workspaces' vector indexes (the benchmarks' store generator uses it too). */
export function saveIndexGraphs(
  dir: string,
  walSeq: number,
  indexes: Iterable<[string, VectorIndex]>,
): number {
  const manifest: Manifest = { walSeq, graphs: [] };
  let n = 0;
  for (const [ws, vectors] of indexes) {
    const graph = vectors.exportGraph();
    if (!graph) continue;
    const file = `hnsw-${String(walSeq).padStart(8, '0')}-${n++}.bin`;
    graph.hnsw.save(join(dir, file));
    manifest.graphs.push({
      ws,
      file,
      dim: graph.hnsw.dim,
      labels: graph.labels,
      nextLabel: graph.nextLabel,
    });
  }
  writeFileDurably(join(dir, manifestName(walSeq)), encodeFrame(manifest));
  return manifest.graphs.length;
}

/** Adopts graphs saved with snapshot `walSeq`, if any; returns how many were adopted. */
export function loadGraphs(dir: string, walSeq: number, state: ShardState): number {
  const path = join(dir, manifestName(walSeq));
  if (!existsSync(path)) return 0;
  const frame = readFrame(readFileSync(path), 0);
  if (frame.kind !== 'frame') return 0; // unreadable manifest: graphs are rebuilt instead
  const manifest = frame.value as Manifest;
  let adopted = 0;
  for (const g of manifest.graphs) {
    const w = state.workspaces.get(g.ws);
    if (!w) continue;
    const live = g.nextLabel === undefined ? undefined : g.labels.map(([, label]) => label);
    // The index keys its maps by the memories' own id strings, not the manifest's decoded copies.
    for (const pair of g.labels) pair[0] = w.memories.get(pair[0])?.id ?? pair[0];
    w.vectors.adoptGraph(Hnsw.load(join(dir, g.file), g.dim, live), g.labels, g.nextLabel ?? 0);
    adopted += 1;
  }
  return adopted;
}

/** Deletes graph files that belong to snapshots older than `walSeq`. */
export async function deleteGraphsBefore(dir: string, walSeq: number): Promise<void> {
  await removeFiles(
    dir,
    readdirSync(dir).filter((name) => {
      const m = /^hnsw-(\d{8})[-.]/.exec(name);
      return m?.[1] !== undefined && Number(m[1]) < walSeq;
    }),
  );
}
