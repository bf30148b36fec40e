/**
 * The contradiction checker runs on the shard's clock: the edges it writes after a write carry the
 * shard clock's time, not the wall clock's. The clock here is set years away from the real time,
 * so an edge stamped by the wall clock could not match it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { until } from '../helpers/wait.ts';
import { Shard } from '../../src/shard/shard.ts';
import type { RememberItem } from '../../src/protocol/shard.ts';

const T0 = Date.UTC(2001, 0, 1);
const dirs: string[] = [];
const shards: Shard[] = [];

afterEach(async () => {
  for (const s of shards.splice(0)) await s.shutdown();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function item(content: string): RememberItem {
  const embedding = new Float32Array(8);
  embedding[0] = 1;
  return {
    content,
    importance: 0.5,
    context: {},
    entityId: 'server',
    kind: 'episode',
    embedding,
    edges: [],
    expiresAt: null,
  };
}

describe('contradiction checks on the shard clock', () => {
  it('stamps the edges a check writes with the shard clock’s time', async () => {
    const clock = new ManualClock(T0);
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-contra-clock-'));
    dirs.push(dir);
    const shard = new Shard(
      {
        shard: 0,
        dir,
        durability: 'os',
        snapshotIntervalS: 3600,
        snapshotWalBytes: 1 << 30,
        eraseWithinS: 60,
        contradictions: true,
      },
      undefined,
      undefined,
      clock,
    );
    shards.push(shard);
    const [older] = await shard.handle('remember', 'w', { items: [item('The server is up.')] });
    clock.advanceMs(60_000);
    const [newer] = await shard.handle('remember', 'w', { items: [item('The server is down.')] });
    expect(older?.createdAt).toBe(T0 * 1000);
    expect(newer?.createdAt).toBe((T0 + 60_000) * 1000);

    const edges = await until(
      async () => {
        const { outgoing } = await shard.handle('edges', 'w', { id: newer?.id as string });
        const found = outgoing.filter((e) => e.edge_type === 'contradicts');
        return found.length > 0 ? found : null;
      },
      { what: 'the check’s contradicts edge', deadlineMs: 30_000 },
    );
    expect(edges.map((e) => e.target_id)).toEqual([older?.id]);
    expect(edges.map((e) => e.timestamp_us)).toEqual([(T0 + 60_000) * 1000]);
  });
});
