/** The log: group commit, durability of every acknowledged append, segment numbering. */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFrame } from '../../src/shard/persist/frames.ts';
import { seqName } from '../../src/shard/persist/fsutil.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';
import { Wal } from '../../src/shard/persist/wal.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flashbulb-wal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function del(i: number): LogRecord {
  return { t: 'del', ws: 'w', id: i.toString(16).padStart(32, '0') };
}

function readSegment(seq: number): LogRecord[] {
  const buf = readFileSync(join(dir, seqName('wal', seq, 'log')));
  const out: LogRecord[] = [];
  let offset = 0;
  for (;;) {
    const f = readFrame(buf, offset);
    if (f.kind === 'end') return out;
    if (f.kind !== 'frame') throw new Error(`segment ${seq} at ${offset}: ${f.kind} ${f.reason}`);
    out.push(f.value as LogRecord);
    offset = f.next;
  }
}

describe('Wal', () => {
  it('creates its segment on open, named by sequence number', async () => {
    const wal = new Wal({ dir, seq: 7, durability: 'fsync' });
    expect(wal.seq).toBe(7);
    expect(existsSync(join(dir, 'wal-00000007.log'))).toBe(true);
    await wal.close();
  });

  it('group commit: many concurrent appends all resolve, share fewer syncs, and are all readable', async () => {
    let syncs = 0;
    let synced = 0;
    const wal = new Wal({
      dir,
      seq: 1,
      durability: 'fsync',
      onSync: (ms, records) => {
        expect(ms).toBeGreaterThanOrEqual(0);
        syncs += 1;
        synced += records;
      },
    });
    const appends = 300;
    const promises: Promise<void>[] = [];
    for (let i = 0; i < appends; i++) promises.push(wal.append([del(2 * i), del(2 * i + 1)]));
    await Promise.all(promises);
    expect(syncs).toBeGreaterThan(0);
    expect(syncs).toBeLessThan(appends);
    expect(synced).toBe(2 * appends);
    await wal.close();
    const read = readSegment(1);
    expect(read).toHaveLength(2 * appends);
    expect(read).toEqual(Array.from({ length: 2 * appends }, (_, i) => del(i)));
  });

  it('an append resolves only after its bytes are in the file', async () => {
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    for (let i = 0; i < 20; i++) {
      await wal.append([del(i)]);
      // Read with a fresh descriptor: what is acknowledged is in the file, in order.
      expect(readSegment(1)).toHaveLength(i + 1);
    }
    expect(wal.segmentBytes).toBe(statSync(join(dir, 'wal-00000001.log')).size);
    await wal.close();
  });

  it("durability 'os' also writes every record", async () => {
    let syncs = 0;
    const wal = new Wal({ dir, seq: 3, durability: 'os', onSync: () => (syncs += 1) });
    await Promise.all(Array.from({ length: 50 }, (_, i) => wal.append([del(i)])));
    await wal.close();
    expect(syncs).toBeGreaterThan(0);
    expect(readSegment(3)).toHaveLength(50);
  });

  it('rotate() numbers segments consecutively; appends after it land in the new segment', async () => {
    const wal = new Wal({ dir, seq: 4, durability: 'fsync' });
    await wal.append([del(1)]);
    // Appends made while the rotation waits for the flush must not be lost.
    const during = wal.append([del(2)]);
    const rotated = wal.rotate();
    const after = wal.append([del(3)]);
    expect(await rotated).toBe(5);
    await Promise.all([during, after]);
    expect(wal.seq).toBe(5);
    expect(wal.segmentBytes).toBeGreaterThan(0);
    expect(await wal.rotate()).toBe(6);
    expect(wal.segmentBytes).toBe(0);
    await wal.append([del(4)]);
    await wal.close();
    expect(readdirSync(dir).sort()).toEqual([
      'wal-00000004.log',
      'wal-00000005.log',
      'wal-00000006.log',
    ]);
    const all = [...readSegment(4), ...readSegment(5), ...readSegment(6)];
    expect(all.map((r) => (r as { id: string }).id)).toEqual(
      [del(1), del(2), del(3), del(4)].map((r) => (r as { id: string }).id),
    );
    expect(readSegment(6)).toEqual([del(4)]);
  });

  it('deleteBefore() removes only segments below the given number', async () => {
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    await wal.rotate();
    await wal.rotate();
    await wal.deleteBefore(3, [1, 2, 3]);
    await wal.close();
    expect(readdirSync(dir)).toEqual(['wal-00000003.log']);
  });

  it('drain() waits for everything appended so far', async () => {
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    for (let i = 0; i < 10; i++) void wal.append([del(i)]);
    await wal.drain();
    expect(readSegment(1)).toHaveLength(10);
    await wal.close();
  });

  it('reopening an existing segment appends after what is there', async () => {
    const first = new Wal({ dir, seq: 1, durability: 'fsync' });
    await first.append([del(1)]);
    await first.close();
    const second = new Wal({ dir, seq: 1, durability: 'fsync' });
    await second.append([del(2)]);
    await second.close();
    expect(readSegment(1)).toEqual([del(1), del(2)]);
  });

  it('settled() waits for the appends made before it, not for later ones', async () => {
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    for (let i = 0; i < 5; i++) void wal.append([del(i)]);
    const settled = wal.settled();
    for (let i = 5; i < 10; i++) void wal.append([del(i)]);
    await settled;
    expect(readSegment(1).length).toBeGreaterThanOrEqual(5);
    await wal.drain();
    await expect(wal.settled()).resolves.toBeUndefined(); // nothing left: at once
    await wal.close();
  });

  it('a failed write (a full disk: /dev/full) latches: onFail once, every waiting and later append refused, settled() resolves', async () => {
    symlinkSync('/dev/full', join(dir, seqName('wal', 1, 'log')));
    const failures: Error[] = [];
    const wal = new Wal({ dir, seq: 1, durability: 'fsync', onFail: (err) => failures.push(err) });
    const appends = [wal.append([del(1)]), wal.append([del(2)])];
    const settled = wal.settled();
    const outcomes = await Promise.allSettled(appends);
    await settled;
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect((outcomes[0] as PromiseRejectedResult).reason.message).toMatch(
      /^log write failed: ENOSPC/,
    );
    expect(failures).toHaveLength(1);
    expect(wal.failed).toBe(failures[0]);
    await expect(wal.append([del(3)])).rejects.toBe(failures[0]);
    expect(failures).toHaveLength(1);
    await wal.close();
  });

  it('a rotation that cannot open the next segment changes nothing: appends go on into the current one, under its number', async () => {
    const wal = new Wal({ dir, seq: 1, durability: 'fsync' });
    await wal.append([del(1)]);
    mkdirSync(join(dir, seqName('wal', 2, 'log'))); // what cannot be opened as a file
    await expect(wal.rotate()).rejects.toThrow(/EISDIR/);
    expect(wal.seq).toBe(1);
    await wal.append([del(2)]);
    expect(readSegment(1)).toEqual([del(1), del(2)]);
    rmSync(join(dir, seqName('wal', 2, 'log')), { recursive: true });
    expect(await wal.rotate()).toBe(2);
    await wal.append([del(3)]);
    expect(readSegment(2)).toEqual([del(3)]);
    await wal.close();
  });

  it('a batch the disk took part of is cut off: the segment ends with the last acknowledged frame', () => {
    // RLIMIT_FSIZE stands in for a disk that fills in the middle of a batch: the kernel writes what
    // fits under the limit (4 KiB), then EFBIG. Batches of three ~360-byte frames; the limit falls
    // inside one, whose first whole frames were refused and must not be left for recovery to keep.
    const script = join(dir, 'fill.mjs');
    writeFileSync(
      script,
      `
      const { Wal } = await import(process.argv[2]);
      const wal = new Wal({ dir: process.argv[3], seq: 1, durability: 'fsync' });
      const acked = [];
      const ws = 'x'.repeat(300);
      for (let i = 0; ; i += 3) {
        const records = [0, 1, 2].map((j) => ({ t: 'del', ws, id: (i + j).toString(16).padStart(32, '0') }));
        try { await wal.append(records); acked.push(...records); } catch (err) { console.log(JSON.stringify({ acked, error: err.message })); break; }
      }`,
    );
    const walModule = join(process.cwd(), 'src/shard/persist/wal.ts');
    const out = spawnSync(
      'bash',
      [
        '-c',
        `trap '' XFSZ; ulimit -f 4; exec "${process.execPath}" --import tsx "${script}" "${walModule}" "${dir}"`,
      ],
      { encoding: 'utf8' },
    );
    expect(out.status, out.stderr).toBe(0);
    const { acked, error } = JSON.parse(out.stdout) as { acked: LogRecord[]; error: string };
    expect(error).toMatch(/^log write failed: EFBIG/);
    expect(acked.length).toBeGreaterThan(0);
    expect(readSegment(1)).toEqual(acked);
  });
});
