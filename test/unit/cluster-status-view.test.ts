import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { clusterStatus } from '../../src/cluster/status-view.ts';

describe('cluster status view', () => {
  it('asks for every partition stream at once (one read waiting out its timeout does not hold the others)', async () => {
    const partitions = 6;
    let asked = 0;
    let release: () => void = () => undefined;
    const allAsked = new Promise<void>((r) => (release = r));
    const status = await clusterStatus({
      self: 'a',
      config: loadConfig({}),
      partitions,
      owners: new Map([[0, { node: 'a' }]]),
      live: new Map(),
      // Each read answers only once every partition has been asked: read one after another, the
      // first would never answer.
      lastSeq: async (p) => {
        asked += 1;
        if (asked === partitions) release();
        await allAsked;
        return 10 + p;
      },
    });
    expect(status.partition_owners.map((r) => r.stream_last_seq)).toEqual([10, 11, 12, 13, 14, 15]);
    expect(status.partition_owners[0]?.owner).toBe('a');
  }, 5_000);
});
