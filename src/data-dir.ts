/**
 * @module data-dir — the data directory's layout: meta.json (format and shard count, fixed at
 * creation; the embedder that made its vectors, recorded on first start), auth.json, and one
 * folder per shard; its lock, and its online copy (backup).
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config/index.ts';
import { fsyncDir, writeFileDurably } from './files/durable.ts';
import type { BackupResult, ShardWorkerData } from './protocol/shard.ts';
import { salvageShard, type SalvagedFile } from './shard/persist/salvage.ts';

export interface DataDirMeta {
  format: 1;
  shards: number;
  created_at: number;
  /** The embedder whose vectors the directory holds (absent in directories from before it was recorded). */
  embedder?: EmbedderRecord;
}

/** Which model made a directory's vectors: vectors of two models are not comparable, even at one dim. */
export interface EmbedderRecord {
  /** Shown in messages: the model directory's name, or "hash". */
  name: string;
  dim: number;
  /** SHA-256 of the model's ONNX graph; null for the hash embedder. */
  model_sha256: string | null;
}

/** The default model before the data directory recorded its embedder. */
const EARLIER_DEFAULT = 'all-MiniLM-L6-v2';

/** The record for an embedder: a model directory's graph hashed, or the hash embedder. */
export function embedderRecord(name: string, dim: number, modelDir: string | null): EmbedderRecord {
  if (modelDir === null) return { name, dim, model_sha256: null };
  const sha = createHash('sha256')
    .update(readFileSync(join(modelDir, 'model.onnx')))
    .digest('hex');
  return { name, dim, model_sha256: sha };
}

/** Whether two embedders' vectors are comparable (the name is only shown). */
export function sameEmbedder(a: EmbedderRecord, b: EmbedderRecord): boolean {
  return a.dim === b.dim && a.model_sha256 === b.model_sha256;
}

/** An embedder as messages show it. */
export function describeEmbedder(e: EmbedderRecord): string {
  return `${e.name} (${e.dim} dims${e.model_sha256 ? `, model.onnx sha256 ${e.model_sha256.slice(0, 12)}…` : ''})`;
}

/**
 * Records the embedder on a directory's first start, or refuses one whose vectors would not be
 * comparable with those stored (recall would silently rank by noise). A directory from before
 * the record that already holds memories was written by the earlier default model.
 */
export function checkEmbedder(
  dir: string,
  meta: DataDirMeta,
  current: EmbedderRecord,
  holdsMemories: boolean,
): DataDirMeta {
  const migrate =
    'Start with FLASHBULB_MODEL_DIR pointing at that model (or FLASHBULB_EMBEDDER=hash), or move the memories across: ' +
    'export each workspace without embeddings under the old model (GET /v1/export) and import it under the new one ' +
    '(POST /v1/import embeds every memory again) into a new data directory.';
  const recorded = meta.embedder;
  if (recorded !== undefined) {
    if (sameEmbedder(recorded, current)) return meta;
    throw new Error(
      `data directory ${dir} holds vectors made by ${describeEmbedder(recorded)}; this server embeds with ${describeEmbedder(current)}. ${migrate}`,
    );
  }
  if (holdsMemories && current.model_sha256 !== null && current.name !== EARLIER_DEFAULT) {
    throw new Error(
      `data directory ${dir} holds memories from before it recorded its embedder; they were embedded by the default model then, ${EARLIER_DEFAULT} ` +
        `(FLASHBULB_MODEL=${EARLIER_DEFAULT} node scripts/fetch-model.mjs fetches it into models/${EARLIER_DEFAULT}), ` +
        `and this server embeds with ${describeEmbedder(current)}. ${migrate} If they were in fact embedded by ${current.name}, add ` +
        `"embedder": ${JSON.stringify(current)} to ${join(dir, 'meta.json')}.`,
    );
  }
  const next: DataDirMeta = { ...meta, embedder: current };
  writeFileDurably(join(dir, 'meta.json'), JSON.stringify(next, null, 2));
  return next;
}

/** Whether `dir` already is a data directory (it has meta.json, which the first start writes). */
export function holdsData(dir: string): boolean {
  return existsSync(join(dir, 'meta.json'));
}

/** Opens (or creates) a data directory; the shard count of an existing one wins over `shards`. */
export function openDataDir(dir: string, shards: number): DataDirMeta {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'meta.json');
  if (existsSync(path)) {
    let meta: DataDirMeta;
    try {
      meta = JSON.parse(readFileSync(path, 'utf8')) as DataDirMeta;
    } catch (err) {
      throw new Error(`cannot read ${path}: ${(err as Error).message}`);
    }
    if (
      typeof meta !== 'object' ||
      meta === null ||
      meta.format !== 1 ||
      !Number.isInteger(meta.shards) ||
      meta.shards < 1
    ) {
      throw new Error(`${path} is not a Flashbulb data directory description`);
    }
    return meta;
  }
  const meta: DataDirMeta = { format: 1, shards, created_at: Date.now() * 1000 };
  writeFileDurably(path, JSON.stringify(meta, null, 2));
  return meta;
}

export function shardDir(dir: string, shard: number): string {
  return join(dir, `shard-${String(shard).padStart(3, '0')}`);
}

/**
 * `flashbulb repair`: every shard's damaged snapshot or log (what makes start-up refuse) rewritten
 * with its whole records (shard/persist/salvage), under the directory's lock, so never while a
 * server runs on it. Returns what was rewritten; nothing when nothing is damaged.
 */
export function repairDataDir(dir: string): Array<SalvagedFile & { shard: number }> {
  if (!existsSync(join(dir, 'meta.json')))
    throw new Error(`${dir} is not a Flashbulb data directory (it has no meta.json)`);
  const meta = openDataDir(dir, 1);
  const unlock = lockDataDir(dir);
  try {
    const out: Array<SalvagedFile & { shard: number }> = [];
    for (let shard = 0; shard < meta.shards; shard++) {
      const sd = shardDir(dir, shard);
      if (existsSync(sd)) for (const f of salvageShard(sd, shard)) out.push({ shard, ...f });
    }
    return out;
  } finally {
    unlock();
  }
}

/** Takes the data directory's lock (one server per directory); throws if a live process holds it. */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, 'LOCK');
  const holder = lockHolder(dir);
  if (holder !== null && holder !== process.pid) {
    throw new Error(
      `data directory ${dir} is in use by process ${holder} (remove ${path} if that process is gone)`,
    );
  }
  try {
    writeFileSync(path, String(process.pid));
  } catch (err) {
    rmSync(path, { force: true });
    throw new Error(
      `cannot write ${path}: ${(err as Error).message}${(err as NodeJS.ErrnoException).code === 'ENOSPC' ? " (the data directory's disk is full)" : ''}`,
    );
  }
  return () => {
    if (lockHolder(dir) === process.pid) rmSync(path, { force: true });
  };
}

/** The pid of the live process holding the lock, or null. */
export function lockHolder(dir: string): number | null {
  const path = join(dir, 'LOCK');
  if (!existsSync(path)) return null;
  const pid = Number(readFileSync(path, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

/** What each shard worker is started with. */
export function shardOptions(config: Config, shards: number): ShardWorkerData[] {
  return Array.from({ length: shards }, (_, i) => ({
    shard: i,
    dir: shardDir(config.dataDir, i),
    durability: config.durability,
    snapshotIntervalS: config.snapshotIntervalS,
    snapshotWalBytes: config.snapshotWalBytes,
    eraseWithinS: config.eraseWithinS,
    contradictions: config.contradictionsEnabled,
  }));
}

/** What one shard's backup wrote. */
export type ShardBackup = { shard: number } & BackupResult;

/**
 * Copies the data directory `from` into `to` (new or empty) while its server keeps serving: the
 * description and key file, then every shard through `copyShard` (a consistent copy the shard
 * writes itself, shard/shard.ts `backup`), then makes the new directory's entries durable.
 */
export async function backupDataDir(
  from: string,
  to: string,
  opts: { shards: number; copyShard: (shard: number, dir: string) => Promise<BackupResult> },
): Promise<ShardBackup[]> {
  const created = !existsSync(to);
  try {
    mkdirSync(to, { recursive: true });
    for (const file of ['meta.json', 'auth.json'])
      if (existsSync(join(from, file))) copyFileSync(join(from, file), join(to, file));
    const copies = await Promise.allSettled(
      Array.from({ length: opts.shards }, async (_, shard) => ({
        shard,
        ...(await opts.copyShard(shard, shardDir(to, shard))),
      })),
    );
    const shards = copies.map((c) => {
      if (c.status === 'rejected') throw c.reason;
      return c.value;
    });
    fsyncDir(to);
    return shards;
  } catch (err) {
    // A part-written copy looks like a data directory, one a restore would start on: none is left.
    // (`to` was new or empty: the caller checks.) Every shard's copy has ended by now.
    if (created) rmSync(to, { recursive: true, force: true });
    else
      for (const name of readdirSync(to)) rmSync(join(to, name), { recursive: true, force: true });
    throw err;
  }
}
