/**
 * The HNSW graph saved at a clean shutdown is kept across the snapshots taken while serving
 * (LocalStorage, persist/graph-files): a later start adopts it over the newest snapshot and
 * reconciles what changed since it was saved (memories new, forgotten or re-embedded, found by the
 * manifest's label map and per-vector fingerprints), with the results of a graph built afresh.
 * An erasure pads the erased vectors in the kept graph file (which stays adoptable), and a start
 * whose kept graph holds vectors forgotten before a crash runs one. A damaged graph file or
 * manifest (also one an erasure rewrote, or the old manifest beside a file padded since) is never
 * adopted: the graph is rebuilt, with the same results. A snapshot repaired by `flashbulb repair`
 * starts with the graph kept from before it, reconciled with the records the repair kept.
 */
import {
  cpSync,
  existsSync,
  readFileSync,
  readdirSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Compaction } from '../../src/shard/compaction.ts';
import { readFrame } from '../../src/shard/persist/frames.ts';
import { CorruptionError, recoverShard } from '../../src/shard/persist/recovery.ts';
import { salvageShard } from '../../src/shard/persist/salvage.ts';
import { Shard } from '../../src/shard/shard.ts';
import type { LocalStorage } from '../../src/shard/local-storage.ts';
import {
  drain,
  fileHolds,
  GraphDirs,
  graphFiles,
  id,
  N,
  notWaiting,
  opts,
  put,
  rebuilt,
  top,
  vector,
  write,
} from '../helpers/graph-dir.ts';
import { until } from '../helpers/wait.ts';

const dirs = new GraphDirs();
afterEach(() => dirs.release());
const tempCopy = (dir: string, suffix: string): string => {
  const copy = dirs.adopt(`${dir}-${suffix}`);
  cpSync(dir, copy, { recursive: true });
  return copy;
};
const binOf = (dir: string): string => graphFiles(dir).find((f) => f.endsWith('.bin')) as string;
const manifestOf = (dir: string): string =>
  graphFiles(dir).find((f) => f.endsWith('.manifest')) as string;
const wholeStore = () => ({
  full: true,
  erase: new Map<string, string>(),
  rewritten: new Map<string, string>(),
});

/** Queries around the store (a forgotten memory's vector among them), as one comparison. */
function results(storage: LocalStorage): string[][] {
  const w = storage.recovered.state.workspace('w');
  return [0, 5, 6, 42, 600, N - 1, N + 1].map((n) => top(w.vectors, vector(n)));
}

describe('a saved graph kept across later snapshots', () => {
  it('survives a periodic snapshot, is adopted at the next start and reconciles what changed', async () => {
    const { dir, graphSeq } = await dirs.shutDownWithGraph();
    const s = await dirs.opened(dir);
    expect(s.recovered.state.workspace('w').vectors.hasGraph).toBe(true);
    // Before the next snapshot: one memory forgotten, one re-embedded (same id), one new.
    const changed = vector(99_999);
    await write(s, [{ t: 'del', ws: 'w', id: id(5) }, put(7, changed), put(N + 1)]);
    await s.snapshot(s.recovered.state, { final: false, requestWaiting: notWaiting });
    // The snapshot kept the graph saved at shutdown.
    expect(
      graphFiles(dir).some((f) => f.startsWith(`hnsw-${String(graphSeq).padStart(8, '0')}`)),
    ).toBe(true);
    // After it, in the log: another re-embedded, another new (a crash: the directory as it is).
    const changedLater = vector(88_888);
    await write(s, [put(9, changedLater), put(N + 2)]);
    const crashed = tempCopy(dir, 'crashed');

    const again = await dirs.opened(crashed);
    const w = again.recovered.state.workspace('w');
    expect(w.vectors.hasGraph).toBe(true);
    // Only what changed since the graph waits for it: 7 and 9 re-embedded, N+1 and N+2 new.
    expect(w.vectors.pendingSize).toBe(4);
    expect(w.vectors.size).toBe(N + 1);
    const nearest = (v: Float32Array) => top(w.vectors, v)[0];
    expect(nearest(changed)).toBe(id(7));
    expect(nearest(changedLater)).toBe(id(9));
    expect(nearest(vector(N + 1))).toBe(id(N + 1));
    expect(nearest(vector(5))).not.toBe(id(5));
    drain(again.recovered.state);
    // The same results as a graph built afresh from the same vectors.
    const fresh = rebuilt(again.recovered.state);
    for (const n of [0, 7, 9, 100, 600, N - 1, N + 1, N + 2, 5]) {
      const q = n === 7 ? changed : n === 9 ? changedLater : vector(n);
      expect(top(w.vectors, q)).toEqual(top(fresh, q));
    }
    expect(nearest(changed)).toBe(id(7));
  });

  it('an erasure pads the erased vector in the kept graph file, which a restart still adopts', async () => {
    const { dir } = await dirs.shutDownWithGraph();
    const s = await dirs.opened(dir);
    const state = s.recovered.state;
    const compaction = new Compaction({
      opts: { shard: 0, snapshotIntervalS: 3600, snapshotWalBytes: 2 ** 40, eraseWithinS: 1 },
      storage: s,
      state,
      stopping: () => false,
      requestWaiting: notWaiting,
    });
    const bin = graphFiles(dir).find((f) => f.endsWith('.bin')) as string;
    const erased = vector(5);
    expect(fileHolds(dir, bin, erased)).toBe(true);
    await write(s, [{ t: 'del', ws: 'w', id: id(5) }]);
    compaction.requestErasure([{ t: 'del', ws: 'w', id: id(5) }]);
    await until(() => !fileHolds(dir, bin, erased), {
      what: 'the erased vector padded in the graph file',
    });
    await compaction.stop();
    expect(fileHolds(dir, bin, vector(6))).toBe(true);
    // A crash now: the padded graph (its manifest rewritten) is adopted, without the erased point.
    const crashed = tempCopy(dir, 'crashed');
    const again = await dirs.opened(crashed);
    const w = again.recovered.state.workspace('w');
    expect(w.vectors.hasGraph).toBe(true);
    expect(w.vectors.pendingSize).toBe(0);
    expect(again.recovered.erasureDue).toBe(false);
    expect(top(w.vectors, erased)).not.toContain(id(5));
    expect(top(w.vectors, vector(6))[0]).toBe(id(6));
  });

  it('a whole-store erasure pads only the vectors gone or changed', async () => {
    const { dir } = await dirs.shutDownWithGraph();
    const s = await dirs.opened(dir);
    const bin = graphFiles(dir).find((f) => f.endsWith('.bin')) as string;
    const full = {
      full: true,
      erase: new Map<string, string>(),
      rewritten: new Map<string, string>(),
    };
    const before = readFileSync(join(dir, bin));
    await write(s, [put(N + 1)]);
    await s.eraseGraphs(s.recovered.state, full);
    expect(readFileSync(join(dir, bin)).equals(before)).toBe(true);
    await write(s, [put(3, vector(77_777))]);
    await s.eraseGraphs(s.recovered.state, full);
    const after = readFileSync(join(dir, bin));
    expect(after.indexOf(Buffer.from(vector(3).buffer))).toBe(-1);
    expect(after.indexOf(Buffer.from(vector(4).buffer))).toBeGreaterThan(0);
  });

  it('a damaged graph file or manifest is not adopted: the graph is rebuilt', async () => {
    for (const damage of ['flip', 'truncate', 'manifest'] as const) {
      const { dir } = await dirs.shutDownWithGraph();
      const bin = graphFiles(dir).find((f) => f.endsWith('.bin')) as string;
      const manifest = graphFiles(dir).find((f) => f.endsWith('.manifest')) as string;
      if (damage === 'flip') {
        const bytes = readFileSync(join(dir, bin));
        const at = Math.floor(bytes.length / 2);
        bytes[at] = (bytes[at] as number) ^ 0xff;
        writeFileSync(join(dir, bin), bytes);
      } else if (damage === 'truncate') truncateSync(join(dir, bin), 1000);
      else truncateSync(join(dir, manifest), 40);
      const copy = tempCopy(dir, 'sync');
      const s = await dirs.opened(dir);
      const sync = dirs.openedSync(copy);
      for (const storage of [s, sync]) {
        const w = storage.recovered.state.workspace('w');
        expect(w.vectors.hasGraph, damage).toBe(false);
        expect(w.vectors.size).toBe(N);
        drain(storage.recovered.state);
        expect(top(w.vectors, vector(42))[0]).toBe(id(42));
      }
      // The next snapshot deletes the damaged files.
      await s.snapshot(s.recovered.state, { final: false, requestWaiting: notWaiting });
      expect(existsSync(join(dir, bin))).toBe(false);
    }
  });

  it('a start whose kept graph holds a vector forgotten before a crash runs an erasure that pads it', async () => {
    const { dir } = await dirs.shutDownWithGraph();
    const s = await dirs.opened(dir);
    const bin = binOf(dir);
    // Forgotten, then a periodic snapshot without it (nothing in the log after it), then a crash
    // before the erasure ran: only the kept graph file still holds the vector.
    await write(s, [{ t: 'del', ws: 'w', id: id(5) }]);
    await s.snapshot(s.recovered.state, { final: false, requestWaiting: notWaiting });
    const crashed = tempCopy(dir, 'crashed');
    expect(fileHolds(crashed, bin, vector(5))).toBe(true);
    const shard = await Shard.open(
      { ...opts(crashed), snapshotIntervalS: 3600, snapshotWalBytes: 2 ** 40, eraseWithinS: 1 },
      () => {},
    );
    try {
      const { replayedRecords, staleFiles, erasureDue } = shard.recovered;
      expect({ replayedRecords, staleFiles, erasureDue }).toEqual({
        replayedRecords: 0,
        staleFiles: false,
        erasureDue: true,
      });
      await until(() => !fileHolds(crashed, bin, vector(5)), {
        what: 'the forgotten vector padded in the kept graph file',
      });
      // Padded in place: the file is still the kept graph, with every other vector.
      expect(fileHolds(crashed, bin, vector(6))).toBe(true);
    } finally {
      await shard.shutdown();
    }
  });

  it('a manifest damaged after an erasure rewrote it, or the old one beside a padded file: rebuilt, same results', async () => {
    const { dir } = await dirs.shutDownWithGraph();
    const s = await dirs.opened(dir);
    const manifest = manifestOf(dir);
    const old = readFileSync(join(dir, manifest));
    await write(s, [{ t: 'del', ws: 'w', id: id(5) }, put(N + 1)]);
    await s.eraseGraphs(s.recovered.state, wholeStore());
    const rewritten = readFileSync(join(dir, manifest));
    expect(rewritten.equals(old)).toBe(false);
    const whole = tempCopy(dir, 'whole');
    const expected = results(await dirs.opened(whole));
    expect(expected[1]).not.toContain(id(5));
    const fresh = rebuilt(s.recovered.state);
    expect(expected).toEqual([0, 5, 6, 42, 600, N - 1, N + 1].map((n) => top(fresh, vector(n))));

    for (const damage of ['flip', 'torn'] as const) {
      const copy = tempCopy(dir, damage);
      const bytes = Buffer.from(rewritten);
      const at = Math.floor(bytes.length / 2);
      bytes[at] = (bytes[at] as number) ^ 0xff;
      // 'torn': a crash after the file was padded, before the manifest was rewritten.
      writeFileSync(join(copy, manifest), damage === 'flip' ? bytes : old);
      for (const storage of [await dirs.opened(copy), dirs.openedSync(copy)]) {
        const w = storage.recovered.state.workspace('w');
        expect(w.vectors.hasGraph, damage).toBe(false);
        expect(w.vectors.size).toBe(N);
        drain(storage.recovered.state);
        expect(results(storage), damage).toEqual(expected);
      }
    }
  });

  it('a snapshot repaired by salvage starts with the kept graph, reconciled with what the repair kept', async () => {
    const { dir } = await dirs.shutDownWithGraph();
    const s = await dirs.opened(dir);
    await write(s, [put(N + 1)]);
    await s.snapshot(s.recovered.state, { final: false, requestWaiting: notWaiting });
    const crashed = tempCopy(dir, 'crashed');
    const snap = readdirSync(crashed)
      .filter((f) => f.endsWith('.snap'))
      .sort()
      .at(-1) as string;
    // Damage one memory's record in the middle of the snapshot.
    const path = join(crashed, snap);
    const buf = readFileSync(path);
    let at = 0;
    for (let i = 0; i < 100; i++) at = (readFrame(buf, at) as { next: number }).next;
    const frame = readFrame(buf, at) as { value: { t: string; m: { id: string } } };
    expect(frame.value.t).toBe('put');
    const lost = frame.value.m.id;
    buf[at + 20] = (buf[at + 20] as number) ^ 0x5a;
    writeFileSync(path, buf);
    expect(() => recoverShard(crashed)).toThrow(CorruptionError);
    expect(salvageShard(crashed, 0)).toHaveLength(1);

    const copy = tempCopy(crashed, 'sync');
    for (const storage of [await dirs.opened(crashed), dirs.openedSync(copy)]) {
      const state = storage.recovered.state;
      const w = state.workspace('w');
      expect(w.memories.has(lost)).toBe(false);
      expect(w.memories.size).toBe(N);
      // The graph saved before the damaged snapshot is adopted; the lost memory's point is not,
      // and its vector, still in the file, is erased soon.
      expect(w.vectors.hasGraph).toBe(true);
      expect(storage.recovered.erasureDue).toBe(true);
      expect(w.vectors.pendingSize).toBe(1); // N+1, written after the graph was saved
      const n = Number.parseInt(lost, 16);
      expect(top(w.vectors, vector(n))).not.toContain(lost);
      drain(state);
      const fresh = rebuilt(state);
      for (const q of [0, n, 42, 600, N - 1, N + 1])
        expect(top(w.vectors, vector(q))).toEqual(top(fresh, vector(q)));
    }
  });
});
