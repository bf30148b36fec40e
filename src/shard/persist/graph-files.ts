/**
 * @module shard/persist/graph-files — HNSW graphs saved beside the snapshot of a clean shutdown,
 * so a restart adopts them instead of rebuilding. A manifest `hnsw-<walSeq>.manifest` (a
 * checksummed frame, renamed into place once its graph files are synced) names each workspace's
 * graph file, its length and CRC-32, its id ↔ label map and a fingerprint of each label's vector.
 * Snapshots taken while serving keep the newest graph: a start adopts it over any later snapshot,
 * and the memories whose vectors differ from the graph's (gone, superseded, or a fingerprint that
 * differs) are reconciled as the log after a snapshot is: their points deleted, their vectors
 * pending. An erasure pads the points of erased vectors in the file (persist/graph-bytes) and
 * rewrites the manifest without them. Manifests without fingerprints (older files) are adopted
 * only with their own snapshot; a damaged file or manifest is not adopted (the graph is rebuilt).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Hnsw } from '../index/hnsw.ts';
import type { VectorIndex } from '../index/vector-index.ts';
import type { ShardState } from '../store/apply.ts';
import { encodeFrame, readFrame } from './frames.ts';
import { writeFileDurably } from '../../files/durable.ts';
import { removeFiles } from './fsutil.ts';
import {
  checkGraphFile,
  checkGraphFileSync,
  padGraphFile,
  padGraphFileSync,
  type GraphFileCheck,
} from './graph-bytes.ts';

interface ManifestGraph {
  ws: string;
  file: string;
  dim: number;
  labels: Array<[string, number]>;
  nextLabel?: number;
  /** {@link vectorPrint} of each label's vector, in the order of `labels` (absent in older files). */
  prints?: number[];
  /** The graph file's length and CRC-32 (absent in older files). */
  bytes?: number;
  crc?: number;
}

interface Manifest {
  walSeq: number;
  graphs: ManifestGraph[];
}

/** One kept graph file: its manifest entry, with the live points' labels as columns. */
interface KeptGraph {
  ws: string;
  file: string;
  dim: number;
  nextLabel: number;
  check: GraphFileCheck;
  ids: string[];
  labels: number[];
  /** Fingerprints of the points' vectors (-1: unknown, as in a manifest written before them). */
  prints: Float64Array;
}

/** The graph files a shard keeps on disk, and the vectors they hold (an erasure pads them). */
export interface KeptGraphs {
  /** The snapshot they were saved with: the name of their files. */
  walSeq: number;
  /** Graphs adopted (or saved). */
  adopted: number;
  /** The files hold vectors of memories the state does not have (forgotten before a crash). */
  holdsGone: boolean;
  graphs: KeptGraph[];
}

/** The graphs of a manifest being read on libuv's thread pool ({@link startGraphLoads}). */
export interface GraphLoads {
  walSeq: number;
  manifest: Manifest;
  graphs: Array<{ g: ManifestGraph; hnsw: Promise<Hnsw | null> }>;
}

/** The manifest of the graphs saved with snapshot `walSeq`. */
export function manifestName(walSeq: number): string {
  return `hnsw-${String(walSeq).padStart(8, '0')}.manifest`;
}

/**
 * A 53-bit fingerprint of a vector's bytes (two multiplicative hashes of its 32-bit words):
 * a vector that changed is told from the one saved all but once in 2^53.
 */
export function vectorPrint(v: Float32Array): number {
  const words = new Int32Array(v.buffer, v.byteOffset, v.length);
  let a = 0x811c9dc5 ^ v.length;
  let b = 0x9747b28c;
  for (let i = 0; i < words.length; i++) {
    const x = words[i] as number;
    a = Math.imul(a ^ x, 0x01000193);
    b = Math.imul(b ^ x, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  return ((a ^ (a >>> 13)) >>> 0) * 2 ** 21 + ((b ^ (b >>> 16)) >>> 11);
}

/** Saves every workspace graph of a quiescent state (final snapshot). */
export function saveGraphs(dir: string, walSeq: number, state: ShardState): KeptGraphs {
  return saveIndexGraphs(
    dir,
    walSeq,
    [...state.workspaces].map(([ws, w]) => [ws, w.vectors]),
  );
}

/**
 * Saves the graphs of these indexes as the graphs of snapshot `walSeq`: each file written by
 * hnswlib, its deleted points padded and synced, then the manifest that names them.
 */
export function saveIndexGraphs(
  dir: string,
  walSeq: number,
  indexes: Iterable<[string, VectorIndex]>,
): KeptGraphs {
  const graphs: KeptGraph[] = [];
  for (const [ws, vectors] of indexes) {
    const graph = vectors.exportGraph();
    if (!graph) continue;
    const file = `hnsw-${String(walSeq).padStart(8, '0')}-${graphs.length}.bin`;
    graph.hnsw.save(join(dir, file));
    const dim = graph.hnsw.dim;
    const check = padGraphFileSync(join(dir, file), dim, (_, deleted) => deleted);
    const ids = graph.labels.map(([id]) => id);
    const prints = Float64Array.from(ids, (id) => {
      const v = vectors.vectorOf(id);
      return v ? vectorPrint(v) : -1;
    });
    const labels = graph.labels.map(([, label]) => label);
    graphs.push({ ws, file, dim, nextLabel: graph.nextLabel, check, ids, labels, prints });
  }
  const kept = { walSeq, adopted: graphs.length, holdsGone: false, graphs };
  writeManifest(dir, kept);
  return kept;
}

function writeManifest(dir: string, kept: KeptGraphs): void {
  const manifest: Manifest = {
    walSeq: kept.walSeq,
    graphs: kept.graphs.map((g) => ({
      ws: g.ws,
      file: g.file,
      dim: g.dim,
      labels: g.ids.map((id, i) => [id, g.labels[i] as number]),
      nextLabel: g.nextLabel,
      prints: Array.from(g.prints),
      ...g.check,
    })),
  };
  writeFileDurably(join(dir, manifestName(kept.walSeq)), encodeFrame(manifest));
}

/**
 * The manifest a start from snapshot `walSeq` adopts: the newest at or before it, if it is whole
 * (its frame's CRC) and carries fingerprints or belongs to this very snapshot; else null.
 */
function readManifest(dir: string, walSeq: number): Manifest | null {
  const seqs = readdirSync(dir)
    .map((name) => /^hnsw-(\d{8})\.manifest$/.exec(name)?.[1])
    .filter((s): s is string => s !== undefined)
    .map(Number)
    .filter((s) => s <= walSeq);
  const newest = Math.max(-1, ...seqs);
  if (newest < 0) return null;
  const path = join(dir, manifestName(newest));
  if (!existsSync(path)) return null;
  const frame = readFrame(readFileSync(path), 0);
  if (frame.kind !== 'frame') {
    const why = frame.kind === 'end' ? 'empty' : frame.reason;
    console.warn(
      `graph manifest ${manifestName(newest)} cannot be read (${why}); the graph is rebuilt`,
    );
    return null;
  }
  const manifest = frame.value as Manifest;
  const printed = manifest.graphs.every((g) => g.prints !== undefined);
  return newest === walSeq || printed ? manifest : null;
}

/** The labels the manifest says were live, when it says (files before nextLabel: every label is probed). */
function liveLabels(g: ManifestGraph): number[] | undefined {
  return g.nextLabel === undefined ? undefined : g.labels.map(([, label]) => label);
}

/** Adopts the graphs a start from snapshot `walSeq` finds, if any; returns how many were adopted. */
export function loadGraphs(dir: string, walSeq: number, state: ShardState): number {
  return loadGraphFiles(dir, walSeq, state)?.adopted ?? 0;
}

/** {@link loadGraphs}, saying which graph files are kept (null when none). */
export function loadGraphFiles(dir: string, walSeq: number, state: ShardState): KeptGraphs | null {
  const manifest = readManifest(dir, walSeq);
  if (!manifest) return null;
  const graphs: Array<[ManifestGraph, Hnsw | null]> = [];
  for (const g of manifest.graphs) {
    // A dropped workspace's graph is not read; the file stays kept until an erasure pads it.
    if (!state.workspaces.has(g.ws)) {
      graphs.push([g, null]);
      continue;
    }
    const file = join(dir, g.file);
    if (!sound(g, () => checkGraphFileSync(file, checkOf(g)))) return null;
    try {
      graphs.push([g, Hnsw.load(file, g.dim, liveLabels(g))]);
    } catch (err) {
      console.warn(`graph file ${g.file} cannot be read (${String(err)}); the graph is rebuilt`);
      return null;
    }
  }
  return adoptAll(manifest, state, graphs);
}

function checkOf(g: ManifestGraph): GraphFileCheck {
  return { bytes: g.bytes ?? 0, crc: g.crc ?? 0 };
}

/** A file of a manifest without a CRC (older files) is taken as sound, as it was. */
function sound(g: ManifestGraph, checked: () => boolean): boolean {
  if (g.crc === undefined || checked()) return true;
  console.warn(`graph file ${g.file} is damaged (length or CRC-32); the graph is rebuilt`);
  return false;
}

/**
 * Starts reading the graphs a start from snapshot `walSeq` adopts on libuv's thread pool, so that
 * the shard's thread decodes the snapshot meanwhile; {@link adoptGraphs} adopts them once it is
 * applied. Null when there are none. Each file's CRC is checked beside its reading; a damaged one
 * (or one hnswlib cannot read) is not adopted, and the graphs are rebuilt.
 */
export function startGraphLoads(dir: string, walSeq: number): GraphLoads | null {
  const manifest = readManifest(dir, walSeq);
  if (!manifest) return null;
  const graphs = manifest.graphs.map((g) => {
    const file = join(dir, g.file);
    const ok = g.crc === undefined ? Promise.resolve(true) : checkGraphFile(file, checkOf(g));
    const loaded = Hnsw.loadAsync(file, g.dim, liveLabels(g));
    const hnsw = Promise.all([ok, loaded]).then(
      ([good, graph]) => (sound(g, () => good) ? graph : null),
      (err: unknown) => {
        console.warn(`graph file ${g.file} cannot be read (${String(err)}); the graph is rebuilt`);
        return null;
      },
    );
    return { g, hnsw };
  });
  return { walSeq, manifest, graphs };
}

/** Adopts graphs {@link startGraphLoads} read into the state of the snapshot they were read for. */
export async function adoptGraphs(
  loads: GraphLoads,
  state: ShardState,
): Promise<KeptGraphs | null> {
  const graphs: Array<[ManifestGraph, Hnsw | null]> = [];
  for (const { g, hnsw } of loads.graphs) {
    const graph = await hnsw;
    if (!state.workspaces.has(g.ws)) graphs.push([g, null]);
    // One damaged file: none of the manifest is kept (its files are deleted by the next snapshot).
    else if (!graph) return null;
    else graphs.push([g, graph]);
  }
  return adoptAll(loads.manifest, state, graphs);
}

/**
 * Adopts each graph read (null: its workspace is gone): the labels whose memory is gone,
 * superseded or re-embedded since the graph was saved (its fingerprint differs) lose their
 * points, and those memories' vectors wait as pending.
 */
function adoptAll(
  manifest: Manifest,
  state: ShardState,
  graphs: Array<[ManifestGraph, Hnsw | null]>,
): KeptGraphs {
  let holdsGone = false;
  const kept: KeptGraph[] = [];
  for (const [g, hnsw] of graphs) {
    const w = state.workspaces.get(g.ws);
    const ids: string[] = [];
    const live: Array<[string, number]> = [];
    g.labels.forEach(([id, label], i) => {
      const m = w?.memories.get(id);
      // The index (and the kept ids) hold the memories' own id strings, not the decoded copies.
      ids.push(m?.id ?? id);
      const print = g.prints?.[i];
      if (
        m &&
        m.supersededBy === null &&
        (print === undefined || vectorPrint(m.embedding) === print)
      )
        live.push([m.id, label]);
      else hnsw?.remove(label);
      if (!m) holdsGone = true;
    });
    if (w && hnsw) w.vectors.adoptGraph(hnsw, live, g.nextLabel ?? 0);
    kept.push({
      ws: g.ws,
      file: g.file,
      dim: g.dim,
      nextLabel: g.nextLabel ?? 0,
      check: checkOf(g),
      ids,
      labels: g.labels.map(([, label]) => label),
      prints: Float64Array.from(g.prints ?? g.labels.map(() => -1)),
    });
  }
  const adopted = graphs.filter(([, hnsw]) => hnsw !== null).length;
  return { walSeq: manifest.walSeq, adopted, holdsGone, graphs: kept };
}

/**
 * Pads, in the kept graph files, the points of vectors an erasure removes: those of `erased`'s
 * memories (every memory, for a whole-store erasure: `erased` null) that the state no longer has
 * as saved (gone, or another vector), then rewrites the manifest without them. A crash in between
 * leaves a file whose CRC the manifest does not match: it is not adopted (rebuilt instead), and
 * the next snapshot deletes it. Returns how many points were padded.
 */
export async function eraseFromKept(
  dir: string,
  kept: KeptGraphs,
  state: ShardState,
  erased: ReadonlySet<string> | null,
): Promise<number> {
  let padded = 0;
  for (const g of kept.graphs) {
    const w = state.workspaces.get(g.ws);
    const pad = new Set<number>();
    g.ids.forEach((id, i) => {
      if (erased && !erased.has(id)) return;
      const m = w?.memories.get(id);
      if (!m || vectorPrint(m.embedding) !== g.prints[i]) pad.add(g.labels[i] as number);
    });
    if (pad.size === 0) continue;
    g.check = await padGraphFile(join(dir, g.file), g.dim, (label) => pad.has(label));
    const keep = g.labels.map((label) => !pad.has(label));
    g.ids = g.ids.filter((_, i) => keep[i]);
    g.labels = g.labels.filter((_, i) => keep[i]);
    g.prints = g.prints.filter((_, i) => keep[i]);
    padded += pad.size;
  }
  if (padded > 0) writeManifest(dir, kept);
  if (!erased) kept.holdsGone = false;
  return padded;
}

/** Deletes every graph file but those of the graphs saved with snapshot `keep` (none when null). */
export async function pruneGraphs(dir: string, keep: number | null): Promise<void> {
  const names = readdirSync(dir).filter((name) => {
    const m = /^hnsw-(\d{8})[-.]/.exec(name);
    return m?.[1] !== undefined && Number(m[1]) !== keep;
  });
  // The manifest first: a crash in between leaves files no manifest names, never a manifest
  // whose files are gone.
  names.sort((a, b) => Number(b.endsWith('.manifest')) - Number(a.endsWith('.manifest')));
  await removeFiles(dir, names);
}
