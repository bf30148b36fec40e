/**
 * A shard whose log cannot be written (a full disk) refuses every request with a storage failure,
 * says so once (the router's readiness names it), and writes no snapshot: its memory may hold a
 * write the log never took, so a restart recovers exactly the acknowledged writes. /dev/full
 * stands in for the full disk: a write to it fails with ENOSPC. Found by filling a 3 MB tmpfs
 * under a running server: the write that failed answered 500 internal_error, readiness stayed
 * "ready", and the final snapshot on SIGTERM kept the refused write.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { Shard } from '../../src/shard/shard.ts';
import { recoverShard } from '../../src/shard/persist/recovery.ts';
import { writeSnapshot } from '../../src/shard/persist/snapshot.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import type { ShardEvent } from '../../src/protocol/shard.ts';

let dir: string;
let events: ShardEvent[];
let errors: MockInstance<typeof console.error>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flashbulb-storage-failure-'));
  events = [];
  errors = vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function start(): Shard {
  return new Shard(
    {
      shard: 0,
      dir,
      durability: 'fsync',
      snapshotIntervalS: 3600,
      snapshotWalBytes: 1 << 30,
      eraseWithinS: 3600,
    },
    (e) => events.push(e),
  );
}

function remember(shard: Shard, content: string): ReturnType<Shard['handle']> {
  return shard.handle('remember', 'w', {
    items: [
      {
        content,
        importance: 0.5,
        context: {},
        entityId: null,
        kind: 'episode',
        embedding: new Float32Array(4),
        edges: [],
      },
    ],
  });
}

/** The next log segment goes to /dev/full; back to an empty file (what a failed write leaves at most) before recovery. */
const segment = (seq: number): string => join(dir, `wal-${String(seq).padStart(8, '0')}.log`);
function fullDiskFor(seq: number): void {
  symlinkSync('/dev/full', segment(seq));
}
function recoveredContents(seq: number): string[] {
  rmSync(segment(seq));
  writeFileSync(segment(seq), '');
  const r = recoverShard(dir);
  return [...(r.state.workspaces.get('w')?.memories.values() ?? [])].map((m) => m.content).sort();
}

describe('shard: the log cannot be written', () => {
  it('refuses the write and all after it as unavailable, tells the router once, snapshots nothing; a restart has the acknowledged writes', async () => {
    const shard = start();
    await remember(shard, 'acknowledged');
    fullDiskFor(2);
    await shard.snapshot(); // the log moves on to segment 2, the full disk

    await expect(remember(shard, 'refused')).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^storage failure: log write failed: ENOSPC/),
    });
    expect(events.filter((e) => e.kind === 'storage-failed')).toEqual([
      {
        kind: 'storage-failed',
        shard: 0,
        message: expect.stringMatching(/^log write failed: ENOSPC/),
      },
    ]);
    expect(
      errors.mock.calls.filter((c) => String(c[0]).includes('refuses every request')),
    ).toHaveLength(1);
    // Reads too: the memory holds 'refused', which the log never took.
    await expect(
      shard.handle('list', 'w', {
        entityId: null,
        kind: null,
        cursor: null,
        limit: 10,
        includeSuperseded: false,
      }),
    ).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('storage failure'),
    });
    await expect(remember(shard, 'later')).rejects.toMatchObject({ code: 'unavailable' });
    await expect(shard.snapshot()).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('no snapshot'),
    });
    await expect(shard.shutdown()).rejects.toThrow(
      /no final snapshot, since its log failed \(log write failed: ENOSPC.*\); the log holds every acknowledged write/,
    );
    expect(existsSync(join(dir, 'snap-00000003.snap'))).toBe(false);

    expect(recoveredContents(2)).toEqual(['acknowledged']);
  });

  it('a snapshot written while the log fails is discarded: the files before it stay', async () => {
    const shard = start();
    await remember(shard, 'acknowledged');
    fullDiskFor(2);
    const snapshot = shard.snapshot(); // rotates to segment 2 before the write below is appended
    const write = remember(shard, 'refused while the snapshot ran');
    await expect(write).rejects.toMatchObject({ code: 'unavailable' });
    await expect(snapshot).rejects.toThrow(
      /snapshot snap-00000002\.snap discarded: log write failed: ENOSPC/,
    );
    expect(existsSync(join(dir, 'snap-00000002.snap'))).toBe(false);
    expect(existsSync(segment(1))).toBe(true); // not deleted: no snapshot covers it
    await expect(shard.shutdown()).rejects.toThrow(/no final snapshot/);

    expect(recoveredContents(2)).toEqual(['acknowledged']);
  });

  it('a snapshot that cannot be written leaves no part-written file behind (it would hold the disk space)', async () => {
    symlinkSync('/dev/full', join(dir, 'snap-00000005.snap.tmp'));
    await expect(
      writeSnapshot(dir, { shard: 0, walSeq: 5, state: new ShardState() }),
    ).rejects.toThrow(/ENOSPC/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
