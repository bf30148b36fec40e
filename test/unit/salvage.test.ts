/**
 * `flashbulb repair` (shard/persist/salvage): a shard whose snapshot or log is damaged in the
 * middle, which recovery refuses to start on, gets back every whole record; the damaged bytes are
 * dropped and named, the original is kept beside it, and recovery then starts. Before, the only
 * way on was a hand edit of the binary file or a backup (the start-up error said "repair or
 * restore this file", with nothing to repair it).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, readFrame } from '../../src/shard/persist/frames.ts';
import { seqName } from '../../src/shard/persist/fsutil.ts';
import { CorruptionError, recoverShard } from '../../src/shard/persist/recovery.ts';
import { salvageShard } from '../../src/shard/persist/salvage.ts';
import { writeSnapshot } from '../../src/shard/persist/snapshot.ts';
import { applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A data directory's shard folder: `<data>/shard-000`. */
function shardFolder(): string {
  const data = mkdtempSync(join(tmpdir(), 'flashbulb-salvage-'));
  dirs.push(data);
  const dir = join(data, 'shard-000');
  mkdirSync(dir);
  return dir;
}

const id = (n: number): string => n.toString(16).padStart(32, '0');

function memory(n: number): LogRecord {
  const vector = new Uint8Array(Float32Array.from([n, 1, 0, 0]).buffer);
  const at = 1_700_000_000_000_000 + n;
  return {
    t: 'put',
    ws: 'w',
    m: {
      id: id(n),
      content: `memory ${n}`,
      importance: 0.5,
      context: {},
      entityId: null,
      kind: 'episode',
      createdAt: at,
      updatedAt: at,
      lastAccessedAt: at,
      accessCount: 0,
      logicalClock: 0,
      sourceMemoryIds: null,
      supersededBy: null,
      embedding: vector,
    },
  };
}

/** Writes log segment `seq` of memories `ns`; returns where each frame starts and how long it is. */
function segment(
  dir: string,
  seq: number,
  ns: number[],
): { file: string; at: number[]; len: number[] } {
  const frames = ns.map((n) => encodeFrame(memory(n)));
  const file = join(dir, seqName('wal', seq, 'log'));
  writeFileSync(file, Buffer.concat(frames));
  const at: number[] = [];
  let offset = 0;
  for (const f of frames) {
    at.push(offset);
    offset += f.length;
  }
  return { file, at, len: frames.map((f) => f.length) };
}

function frameOffsets(buf: Buffer): number[] {
  const out: number[] = [];
  for (
    let offset = 0, f = readFrame(buf, 0);
    f.kind === 'frame';
    offset = f.next, f = readFrame(buf, offset)
  )
    out.push(offset);
  return out;
}

function flip(file: string, offset: number): Buffer {
  const before = readFileSync(file);
  const buf = Buffer.from(before);
  buf[offset] = (buf[offset] ?? 0) ^ 0x5a;
  writeFileSync(file, buf);
  return buf;
}

function recovered(dir: string): number[] {
  const w = recoverShard(dir).state.workspaces.get('w');
  return [...(w?.memories.keys() ?? [])].map((k) => Number.parseInt(k, 16)).sort((a, b) => a - b);
}

describe('salvageShard', () => {
  it('a damaged record in the middle of the log: start-up names `flashbulb repair`, which keeps the rest and the original', () => {
    const dir = shardFolder();
    const { file, at, len } = segment(dir, 1, [1, 2, 3, 4, 5]);
    const damaged = flip(file, (at[2] as number) + 20);

    expect(() => recoverShard(dir)).toThrow(CorruptionError);
    expect(() => recoverShard(dir)).toThrow(
      `${file} at offset ${at[2]}: checksum mismatch; refusing to start. With the server stopped, run \`flashbulb repair --data-dir ${join(dir, '..')}\``,
    );

    expect(salvageShard(dir, 0)).toEqual([
      {
        file,
        kept: 4,
        dropped: [{ offset: at[2], bytes: len[2], reason: 'checksum mismatch' }],
        original: `${file}.damaged`,
      },
    ]);
    expect(readFileSync(`${file}.damaged`).equals(damaged)).toBe(true);
    expect(recovered(dir)).toEqual([1, 2, 4, 5]);
    expect(salvageShard(dir, 0)).toEqual([]); // nothing damaged any more
  });

  it('a damaged length field (it would swallow the records after it) and a cut segment that is not the last', () => {
    const dir = shardFolder();
    const first = segment(dir, 1, [1, 2, 3]);
    const buf = readFileSync(first.file);
    buf.writeUInt32LE(1_000_000, (first.at[0] as number) + 1);
    writeFileSync(first.file, buf);
    const second = segment(dir, 2, [4, 5]);
    writeFileSync(second.file, readFileSync(second.file).subarray(0, -5));
    const last = segment(dir, 3, [6]);

    const fixed = salvageShard(dir, 0);
    expect(fixed.map((f) => [f.file, f.kept, f.dropped.map((d) => [d.offset, d.bytes])])).toEqual([
      [first.file, 2, [[0, first.len[0]]]],
      [second.file, 1, [[second.at[1], (second.len[1] as number) - 5]]],
    ]);
    expect(existsSync(`${last.file}.damaged`)).toBe(false);
    expect(recovered(dir)).toEqual([2, 3, 4, 6]);
  });

  it("leaves the last segment's torn tail for recovery to truncate, as it always has", () => {
    const dir = shardFolder();
    const { file, at } = segment(dir, 1, [1, 2]);
    writeFileSync(file, readFileSync(file).subarray(0, (at[1] as number) + 7));
    expect(salvageShard(dir, 0)).toEqual([]);
    const r = recoverShard(dir);
    expect(r.truncatedTail).toMatchObject({ file, offset: at[1] });
  });

  it('a damaged snapshot keeps its whole records under a new footer (its saved HNSW graphs are dropped), and the log after it replays', async () => {
    const dir = shardFolder();
    const state = new ShardState();
    for (const n of [1, 2, 3]) applyRecord(state, memory(n));
    const { path } = await writeSnapshot(dir, { shard: 0, walSeq: 2, state });
    segment(dir, 2, [4]);
    const manifest = join(dir, 'hnsw-00000002.manifest');
    writeFileSync(manifest, 'graphs saved with the snapshot');
    const second = frameOffsets(readFileSync(path))[2] as number; // header, first record, second
    flip(path, second + 30);
    expect(() => recoverShard(dir)).toThrow(`${path} at offset ${second}`);

    const [fixed] = salvageShard(dir, 0);
    expect(fixed).toMatchObject({
      file: path,
      kept: 2,
      dropped: [{ offset: second, reason: 'checksum mismatch' }],
    });
    expect(existsSync(manifest)).toBe(false);
    expect(recovered(dir)).toEqual([1, 3, 4]);
  });

  it('a snapshot whose header is lost gets one back (its log position is its name)', async () => {
    const dir = shardFolder();
    const state = new ShardState();
    for (const n of [1, 2]) applyRecord(state, memory(n));
    const { path } = await writeSnapshot(dir, { shard: 0, walSeq: 3, state });
    segment(dir, 2, [7]); // older than the snapshot: not replayed
    segment(dir, 3, [5]);
    flip(path, 0);
    expect(() => recoverShard(dir)).toThrow(`${path} at offset 0`);

    const [fixed] = salvageShard(dir, 0);
    expect(fixed).toMatchObject({ file: path, kept: 2 });
    expect(recovered(dir)).toEqual([1, 2, 5]);
  });
});
