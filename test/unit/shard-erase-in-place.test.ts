/**
 * Erasure in place (shard/persist/erase, shard/persist/content-index): a forget pads the frames that
 * hold the forgotten content where they lie, in the snapshot and the log, instead of rewriting the
 * store; recovery skips padding; a crash in the middle of padding is finished by the next start.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContentIndex } from '../../src/shard/persist/content-index.ts';
import { ERASE_JOURNAL, eraseFrames } from '../../src/shard/persist/erase.ts';
import { eraseInPlace, type ErasurePlan } from '../../src/shard/erasure.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import { paddingFrame, readFrame } from '../../src/shard/persist/frames.ts';
import { recoverShard } from '../../src/shard/persist/recovery.ts';
import { Wal } from '../../src/shard/persist/wal.ts';
import type { Shard } from '../../src/shard/shard.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { until } from '../helpers/wait.ts';
import { erasureShards, filesHolding } from '../helpers/erasure-shard.ts';
import { storedMemory } from '../helpers/memory-record.ts';

const ERASE_WITHIN_S = 1;
const { tempDir, open, shards } = erasureShards('flashbulb-erase-in-place-', ERASE_WITHIN_S);

async function remember(shard: Shard, content: string): Promise<string> {
  const [m] = await shard.handle('remember', 'w', {
    items: [
      {
        content,
        importance: 0.5,
        context: { note: content },
        entityId: null,
        kind: 'episode',
        embedding: new Float32Array([1, 0, 0, 0]),
        edges: [],
      },
    ],
  });
  return m?.id as string;
}

describe('erasure in place', () => {
  it('pads the forgotten frames in the snapshot and the log without writing a new snapshot; recovery skips the padding', async () => {
    const dir = tempDir();
    const shard = open(dir);
    const inSnapshot = 'secret-in-snapshot-5d1e';
    const inLog = 'secret-in-log-77ab';
    const ids = [await remember(shard, inSnapshot), await remember(shard, 'kept-before-snapshot')];
    await shard.snapshot();
    ids.push(await remember(shard, inLog), await remember(shard, 'kept-after-snapshot'));
    const files = readdirSync(dir).sort();
    expect(filesHolding(dir, inSnapshot)).toEqual(files.filter((f) => f.startsWith('snap-')));
    expect(filesHolding(dir, inLog)).toHaveLength(1);

    const since = Date.now();
    await shard.handle('forget', 'w', { memoryIds: [ids[0] as string, ids[2] as string] });
    // Done when the padding is durable: the content is gone and the erasure's journal removed.
    await until(
      () =>
        filesHolding(dir, inSnapshot).length + filesHolding(dir, inLog).length === 0 &&
        !readdirSync(dir).includes(ERASE_JOURNAL),
      {
        what: 'forgotten content to leave every file, and the erasure journal to be removed',
        deadlineMs: ERASE_WITHIN_S * 1000 - (Date.now() - since),
        everyMs: 25,
      },
    );
    // The same files: padded where they lie, not replaced by a new snapshot.
    expect(readdirSync(dir).sort()).toEqual(files);
    for (const kept of ['kept-before-snapshot', 'kept-after-snapshot'])
      expect(filesHolding(dir, kept)).toHaveLength(1);

    const recovered = recoverShard(dir).state.workspaces.get('w');
    expect([...(recovered?.memories.values() ?? [])].map((m) => m.content).sort()).toEqual([
      'kept-after-snapshot',
      'kept-before-snapshot',
    ]);
    expect(recovered?.tombstones.size).toBe(2);
  });

  it('a restart indexes the files it recovers, so the next forget is erased in place too', async () => {
    const dir = tempDir();
    let shard = open(dir);
    const secret = 'secret-across-restart-19c4';
    const id = await remember(shard, secret);
    await remember(shard, 'kept');
    await shards.splice(0)[0]?.shutdown(); // the final snapshot holds both
    const files = readdirSync(dir).sort();
    shard = open(dir);
    await shard.handle('forget', 'w', { memoryIds: [id] });
    await until(() => filesHolding(dir, secret).length === 0, {
      what: 'forgotten content to leave every file',
      deadlineMs: ERASE_WITHIN_S * 1000,
      everyMs: 25,
    });
    // The new process opened a new log segment; the snapshot was padded, not rewritten.
    expect(readdirSync(dir).filter((f) => f.startsWith('snap-'))).toEqual(
      files.filter((f) => f.startsWith('snap-')),
    );
  });

  it('a crash in the middle of padding (journal written, frame half overwritten) is finished at the next start', async () => {
    const dir = tempDir();
    const secret = 'secret-torn-padding-0b9e';
    const history: LogRecord[] = [
      { t: 'put', ws: 'w', m: storedMemory(`${'0'.repeat(31)}1`, secret) },
      { t: 'put', ws: 'w', m: storedMemory(`${'0'.repeat(31)}2`, 'kept') },
      { t: 'del', ws: 'w', id: `${'0'.repeat(31)}1` },
    ];
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    await wal.append(history);
    await wal.close();
    const file = 'wal-00000001.log';
    const bytes = readFileSync(join(dir, file));
    const first = readFrame(bytes, 0);
    if (first.kind !== 'frame') throw new Error('no first frame');
    writeFileSync(
      join(dir, ERASE_JOURNAL),
      JSON.stringify([{ file, offset: 0, length: first.next }]),
    );
    // Torn: the padding's header and first bytes landed, the rest of the frame is the old bytes.
    paddingFrame(first.next).copy(bytes, 0, 0, 16);
    writeFileSync(join(dir, file), bytes);
    expect(filesHolding(dir, secret)).toEqual([file]);

    const recovered = recoverShard(dir);
    expect(
      [...(recovered.state.workspaces.get('w')?.memories.values() ?? [])].map((m) => m.content),
    ).toEqual(['kept']);
    expect(filesHolding(dir, secret)).toEqual([]);
    expect(readdirSync(dir)).not.toContain(ERASE_JOURNAL);
  });
});

describe('erasure and the content index', () => {
  it('an erasure takes the frames it padded (or found padded) out of the index, so the next one does not read them again', async () => {
    const dir = tempDir();
    const content = new ContentIndex();
    const onFrame = content.add.bind(content);
    const wal = new Wal({ dir, seq: 1, durability: 'os', onFrame });
    const [a, b] = [`${'0'.repeat(31)}a`, `${'0'.repeat(31)}b`];
    await wal.append([
      { t: 'put', ws: 'w', m: storedMemory(a, 'secret-first-text-4f1a') },
      { t: 'put', ws: 'w', m: storedMemory(b, 'kept-text') },
      { t: 'put', ws: 'w', m: storedMemory(a, 'secret-second-text-4f1a') },
      { t: 'del', ws: 'w', id: a },
    ]);
    expect(content.find([a])).toHaveLength(2);
    const plan = (): ErasurePlan => ({
      full: false,
      erase: new Map([[a, 'w']]),
      rewritten: new Map(),
    });
    const frames = content.find([a]);
    expect(await eraseInPlace({ dir, wal, state: new ShardState(), content }, plan())).toBe(2);
    expect(filesHolding(dir, 'secret-')).toEqual([]);
    // Padded frames hold nothing: the index no longer lists them; the kept memory's frame stays.
    expect(content.find([a])).toEqual([]);
    expect(content.find([b])).toHaveLength(1);
    // Frames found padding already are cleared too (an index built before the padding, say).
    const again = await eraseFrames(dir, frames, () => true);
    expect(again).toEqual({ padded: 0, cleared: frames });
    await wal.close();
  });
});

describe('erasure in place over a random history', () => {
  it('remembers, revisions, forgets and snapshots (3 seeds): every forgotten text leaves the files, and recovery gives the live memories', async () => {
    for (const seed of [1, 2, 3]) {
      const dir = tempDir();
      const shard = open(dir);
      let x = seed;
      const rand = (n: number): number => {
        x = (x * 1103515245 + 12345) % 2147483648;
        return x % n;
      };
      const live = new Map<string, string[]>(); // id → every content it has had, the current last
      const forgotten: string[] = [];
      const pick = (): string => [...live.keys()][rand(live.size)] as string;
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 12; i++) {
          const text = `s${seed}-r${round}-m${i}-${rand(1e9)}`;
          live.set(await remember(shard, text), [text]);
        }
        for (let i = 0; i < 4; i++) {
          const id = pick();
          const text = `s${seed}-r${round}-revised${i}-${rand(1e9)}`;
          await shard.handle('revise', 'w', {
            id,
            content: text,
            contextMode: 'merge',
            embedding: new Float32Array([0, 1, 0, 0]),
            edges: [],
          });
          live.get(id)?.push(text);
        }
        if (round === 1) await shard.snapshot();
        for (let i = 0; i < 4; i++) {
          const id = pick();
          await shard.handle('forget', 'w', { memoryIds: [id] });
          forgotten.push(...(live.get(id) ?? []));
          live.delete(id);
        }
      }
      await until(() => forgotten.every((t) => filesHolding(dir, t).length === 0), {
        what: `seed ${seed}: forgotten text to leave every file`,
        deadlineMs: 4 * ERASE_WITHIN_S * 1000,
        everyMs: 25,
      });
      const w = recoverShard(dir).state.workspaces.get('w');
      const current = new Map(
        [...(w?.memories.values() ?? [])]
          .filter((m) => m.supersededBy === null)
          .map((m) => [m.id, m.content]),
      );
      expect(current, `seed ${seed}`).toEqual(
        new Map([...live].map(([id, texts]) => [id, texts[texts.length - 1]])),
      );
    }
  });
});

describe('content index', () => {
  it('release drops the entries of the frames given and keeps the rest in order', () => {
    const index = new ContentIndex();
    const a = 'a'.repeat(32);
    for (const offset of [0, 40, 80, 120])
      index.add('wal-00000001.log', offset, { t: 'put', ws: 'w', m: storedMemory(a, 'x') });
    index.add('wal-00000002.log', 0, { t: 'put', ws: 'w', m: storedMemory(a, 'x') });
    index.release([
      { file: 'wal-00000001.log', offset: 40 },
      { file: 'wal-00000001.log', offset: 120 },
      { file: 'wal-00000009.log', offset: 0 },
    ]);
    expect(index.find([a])).toEqual([
      { file: 'wal-00000001.log', offset: 0 },
      { file: 'wal-00000001.log', offset: 80 },
      { file: 'wal-00000002.log', offset: 0 },
    ]);
    expect(index.entries).toBe(3);
  });

  it('finds the frames holding a memory: its puts, pending contradictions and edges with a reason quoting it', () => {
    const index = new ContentIndex();
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(32);
    index.add('snap-00000002.snap', 10, { t: 'put', ws: 'w', m: storedMemory(a, 'x') });
    index.add('snap-00000002.snap', 90, { t: 'put', ws: 'w', m: storedMemory(b, 'y') });
    index.add('wal-00000002.log', 0, {
      t: 'edge',
      ws: 'w',
      e: {
        source_id: a,
        target_id: b,
        edge_type: 'contradicts',
        confidence: 1,
        timestamp_us: 1,
        reason: "antonym: 'hot' versus 'cold'",
      },
    });
    index.add('wal-00000002.log', 50, {
      t: 'edge',
      ws: 'w',
      e: { source_id: a, target_id: b, edge_type: 'related_to', confidence: 1, timestamp_us: 1 },
    });
    index.add('wal-00000001.log', 0, { t: 'del', ws: 'w', id: a });
    expect(index.find([a])).toEqual([
      { file: 'snap-00000002.snap', offset: 10 },
      { file: 'wal-00000002.log', offset: 0 },
    ]);
    expect(index.find([a, b])).toHaveLength(3);
    index.dropBefore(3);
    expect(index.find([a, b])).toEqual([]);
  });
});
