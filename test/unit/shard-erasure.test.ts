/**
 * Erasure inside one shard (DESIGN 3.4): after a forget, the content leaves every file of the
 * shard within eraseWithinS — including when the process died before its compaction ran.
 */
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { writeSnapshot } from '../../src/shard/persist/snapshot.ts';
import { Wal } from '../../src/shard/persist/wal.ts';
import { applyRecord, ShardState } from '../../src/shard/store/apply.ts';
import { until } from '../helpers/wait.ts';
import { erasureShards, filesHolding } from '../helpers/erasure-shard.ts';
import { storedMemory } from '../helpers/memory-record.ts';

const ERASE_WITHIN_S = 1;
const { tempDir, open } = erasureShards('flashbulb-erase-', ERASE_WITHIN_S);

async function expectGoneWithin(dir: string, text: string, since: number): Promise<void> {
  let holding = filesHolding(dir, text);
  const left = since + ERASE_WITHIN_S * 1000 - Date.now();
  await until(() => (holding = filesHolding(dir, text)).length === 0, {
    what: 'forgotten content to leave every file',
    deadlineMs: Math.max(0, left),
    everyMs: 25,
  }).catch(() => undefined);
  expect(holding, `files still holding forgotten content after ${Date.now() - since} ms`).toEqual(
    [],
  );
}

const SECRET = 'the-secret-8c1f2e';
const SECRET_ID = `${'0'.repeat(31)}1`;
const KEEP_ID = `${'0'.repeat(31)}2`;

/** What a forget of SECRET writes to the log (as shard/ops/forget does). */
const HISTORY: LogRecord[] = [
  { t: 'put', ws: 'w', m: storedMemory(SECRET_ID, SECRET) },
  { t: 'put', ws: 'w', m: storedMemory(KEEP_ID, 'kept') },
  { t: 'del', ws: 'w', id: SECRET_ID },
  {
    t: 'tomb',
    ws: 'w',
    tomb: {
      memory_id: SECRET_ID,
      forgotten_at: 2,
      criteria: { memory_ids: 1 },
      content_sha256: 'ab'.repeat(32),
    },
  },
];

describe('shard erasure', () => {
  it('a forget erases the content from every file within eraseWithinS', async () => {
    const dir = tempDir();
    const shard = open(dir);
    const embedding = (): Float32Array => new Float32Array(4);
    const [secret] = await shard.handle('remember', 'w', {
      items: [
        {
          content: SECRET,
          importance: 0.5,
          context: {},
          entityId: null,
          kind: 'episode',
          embedding: embedding(),
          edges: [],
        },
      ],
    });
    await shard.handle('remember', 'w', {
      items: [
        {
          content: 'kept',
          importance: 0.5,
          context: {},
          entityId: null,
          kind: 'episode',
          embedding: embedding(),
          edges: [],
        },
      ],
    });
    expect(filesHolding(dir, SECRET).length).toBeGreaterThan(0);
    const since = Date.now();
    await shard.handle('forget', 'w', { memoryIds: [secret?.id as string] });
    await expectGoneWithin(dir, SECRET, since);
    expect(filesHolding(dir, 'kept').length).toBeGreaterThan(0);
  });

  it('a forget that reached the log but not its compaction (crash) is erased within eraseWithinS of the next start', async () => {
    const dir = tempDir();
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    await wal.append(HISTORY);
    await wal.close();
    const since = Date.now();
    const shard = open(dir);
    expect(shard.memoryCount).toBe(1);
    await expectGoneWithin(dir, SECRET, since);
  });

  it('log segments a crash left behind the newest snapshot are erased within eraseWithinS of the next start', async () => {
    // The erasure snapshot was renamed into place, then the process died before it deleted the
    // segments it covers: the forgotten content is still in wal-00000001.log.
    const dir = tempDir();
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    await wal.append(HISTORY);
    const state = new ShardState();
    for (const r of HISTORY) applyRecord(state, r);
    const walSeq = await wal.rotate();
    await writeSnapshot(dir, { shard: 0, walSeq, state });
    await wal.close();
    expect(filesHolding(dir, SECRET)).toEqual(['wal-00000001.log']);
    const since = Date.now();
    const shard = open(dir);
    expect(shard.memoryCount).toBe(1);
    await expectGoneWithin(dir, SECRET, since);
  });
});
