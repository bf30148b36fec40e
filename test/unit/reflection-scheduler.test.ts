/**
 * The background reflection scheduler on a clock the test sets (ReflectionEngine's `clock`): a
 * workspace is reflected once FLASHBULB_REFLECT_MIN_NEW new episodes have arrived, and a steady
 * stream of writes reflects it at most once per 30 s gap, measured on that clock. The shards are
 * a stand-in that counts gathers and holds no episodes, so a run ends at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { createHashEmbedder } from '../../src/embedding/hash-embedder.ts';
import { ReflectionEngine } from '../../src/reflection/engine.ts';
import type { ShardRouter } from '../../src/router/router.ts';
import type { ShardInput, ShardMethod, ShardOutput } from '../../src/protocol/shard.ts';
import { ManualClock } from '../helpers/clock.ts';
import { until } from '../helpers/wait.ts';

const T0 = Date.UTC(2026, 0, 1);
const engines: ReflectionEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

/** Shards with no episodes that count the gathers asked of them, by workspace. */
function countingShards(): { router: ShardRouter; gathers: string[] } {
  const gathers: string[] = [];
  const router: ShardRouter = {
    async call<M extends ShardMethod>(
      ws: string,
      method: M,
      _input: ShardInput<M>,
    ): Promise<ShardOutput<M>> {
      if (method !== 'reflectGather') throw new Error(`unexpected ${method}`);
      gathers.push(ws);
      const empty: ShardOutput<'reflectGather'> = {
        ids: [],
        texts: [],
        meta: [],
        vectors: new Float32Array(0),
        dim: 8,
        insights: [],
      };
      return empty as ShardOutput<M>;
    },
    broadcast: async () => [],
    inflight: () => 0,
    problems: () => [],
    shutdown: async () => {},
  };
  return { router, gathers };
}

function engine(clock: ManualClock, shards: ShardRouter): ReflectionEngine {
  // A long interval: only the per-write rule is under test here.
  const config = loadConfig({
    FLASHBULB_REFLECT_ENABLED: 'true',
    FLASHBULB_REFLECT_MIN_NEW: '3',
    FLASHBULB_REFLECT_INTERVAL_S: '3600',
  });
  const e = new ReflectionEngine({
    config,
    shards,
    embedder: createHashEmbedder(8),
    llm: null,
    clock,
  });
  engines.push(e);
  return e;
}

/**
 * Waits until no reflection of 'w' is under way: an explicit scoped reflection queues behind any
 * background one (one run per workspace at a time), so once it is answered a background run the
 * episodes noted before it would have started has had its turn. It counts one gather itself.
 */
async function settled(e: ReflectionEngine): Promise<void> {
  await e.reflect('w', { entityId: 'nobody', sinceUs: null });
}

describe('background reflection scheduler', () => {
  it('reflects after MIN_NEW episodes, then not again within 30 s of clock time, then again once it has passed', async () => {
    const clock = new ManualClock(T0);
    const { router, gathers } = countingShards();
    const e = engine(clock, router);
    e.noteEpisode('w');
    e.noteEpisode('w');
    await settled(e);
    expect(gathers).toEqual(['w']); // only settled()'s own run
    e.noteEpisode('w');
    await until(() => gathers.length === 2, { what: 'a background run after the third episode' });
    await settled(e);
    expect(gathers).toHaveLength(3);

    // Three more, 29.999 s of clock time later: inside the gap, no background run.
    clock.advanceMs(29_999);
    for (let i = 0; i < 3; i++) e.noteEpisode('w');
    await settled(e);
    expect(gathers).toHaveLength(4);
    // Once the gap has passed on the clock, the next episode starts one.
    clock.advanceMs(1);
    e.noteEpisode('w');
    await until(() => gathers.length === 5, { what: 'a background run once the gap has passed' });
  });

  it('keeps the gap per workspace', async () => {
    const clock = new ManualClock(T0);
    const { router, gathers } = countingShards();
    const e = engine(clock, router);
    for (let i = 0; i < 3; i++) e.noteEpisode('a');
    for (let i = 0; i < 3; i++) e.noteEpisode('b');
    await until(() => gathers.length === 2, { what: 'a background run of each workspace' });
    expect(gathers.sort()).toEqual(['a', 'b']);
  });
});
