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

interface ManifestGraph {
  ws: string;
  file: string;
  dim: number;
  labels: Array<[string, number]>;
  nextLabel?: number;
}

interface Manifest {
  walSeq: number;
  graphs: ManifestGraph[];
}

/** The graphs of snapshot `walSeq` being read on libuv's thread pool ({@link startGraphLoads}). */
export interface GraphLoads {
  walSeq: number;
  graphs: Array<{ g: ManifestGraph; hnsw: Promise<Hnsw> }>;
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

/** The manifest of snapshot `walSeq`'s graphs; null when there is none or it cannot be read. */
function readManifest(dir: string, walSeq: number): Manifest | null {
  const path = join(dir, manifestName(walSeq));
  if (!existsSync(path)) return null;
  const frame = readFrame(readFileSync(path), 0);
  // An unreadable manifest: the graphs are rebuilt instead.
  return frame.kind === 'frame' ? (frame.value as Manifest) : null;
}

/** The labels the manifest says were live, when it says (files before nextLabel: every label is probed). */
function liveLabels(g: ManifestGraph): number[] | undefined {
  return g.nextLabel === undefined ? undefined : g.labels.map(([, label]) => label);
}

/** Adopts graphs saved with snapshot `walSeq`, if any; returns how many were adopted. */
export function loadGraphs(dir: string, walSeq: number, state: ShardState): number {
  let adopted = 0;
  for (const g of readManifest(dir, walSeq)?.graphs ?? []) {
    if (!state.workspaces.has(g.ws)) continue;
    adopt(state, g, Hnsw.load(join(dir, g.file), g.dim, liveLabels(g)));
    adopted += 1;
  }
  return adopted;
}

/**
 * Starts reading the graphs of snapshot `walSeq` on libuv's thread pool, so that the shard's
 * thread decodes the snapshot meanwhile; {@link adoptGraphs} adopts them once it is applied.
 * Null when the snapshot has no graphs. A graph that fails to load fails the adoption, as
 * {@link loadGraphs} would.
 */
export function startGraphLoads(dir: string, walSeq: number): GraphLoads | null {
  const manifest = readManifest(dir, walSeq);
  if (!manifest) return null;
  const graphs = manifest.graphs.map((g) => {
    const hnsw = Hnsw.loadAsync(join(dir, g.file), g.dim, liveLabels(g));
    // Awaited by adoptGraphs; until then (or if recovery fails first) a rejection is not unhandled.
    hnsw.catch(() => {});
    return { g, hnsw };
  });
  return { walSeq, graphs };
}

/** Adopts graphs {@link startGraphLoads} read into the state of snapshot `loads.walSeq`. */
export async function adoptGraphs(loads: GraphLoads, state: ShardState): Promise<number> {
  let adopted = 0;
  for (const { g, hnsw } of loads.graphs) {
    const graph = await hnsw;
    if (!state.workspaces.has(g.ws)) continue;
    adopt(state, g, graph);
    adopted += 1;
  }
  return adopted;
}

function adopt(state: ShardState, g: ManifestGraph, hnsw: Hnsw): void {
  const w = state.workspace(g.ws);
  // The index keys its maps by the memories' own id strings, not the manifest's decoded copies.
  for (const pair of g.labels) pair[0] = w.memories.get(pair[0])?.id ?? pair[0];
  w.vectors.adoptGraph(hnsw, g.labels, g.nextLabel ?? 0);
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
