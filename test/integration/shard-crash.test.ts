/**
 * A shard worker that ends on its own while serving (an error nothing caught, here thrown on
 * purpose by test/fixtures/crashing-shard-worker.ts; in life a bug, or its heap full): the
 * requests it held fail with 503 saying so, the log, readiness and a counter name it, and the
 * router starts it again on its files, where every acknowledged write is. Before, the shard stayed
 * down, silently, until the server was restarted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { subscribeSse } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

const shardWorker = '../test/fixtures/crashing-shard-worker';
/** A `get` of this id makes that worker crash. */
const CRASH_ID = 'ffffffffffffffffffffffffffffffff';
const started: TestApp[] = [];
afterEach(async () => {
  for (const t of started.splice(0)) await t.stop().catch(() => undefined);
});

async function withFiveMemories(restartS: string, lines: string[]): Promise<TestApp> {
  const env = {
    FLASHBULB_SHARDS: '1',
    FLASHBULB_AUTH_ENABLED: 'false',
    FLASHBULB_SHARD_RESTART_S: restartS,
  };
  const t = await startTestApp({}, env, { shardWorker, log: (line) => lines.push(line) });
  started.push(t);
  for (let i = 0; i < 5; i++)
    expect((await t.req('POST', '/v1/memories', { body: { content: `memory ${i}` } })).status).toBe(
      201,
    );
  return t;
}

describe('a shard that crashes', () => {
  it('fails its requests in flight with 503, is named in the log, readiness and metrics, and is restarted on its files with every acknowledged write', async () => {
    const lines: string[] = [];
    const t = await withFiveMemories('1', lines);
    const { stream } = await subscribeSse(t.base, null, { confidence_threshold: 0.3 });

    const crashed = await t.req('GET', `/v1/memories/${CRASH_ID}`);
    expect(crashed.status).toBe(503);
    expect(crashed.headers.get('retry-after')).toBe('1'); // the restart's wait
    expect(crashed.body).toEqual({
      error_code: 'unavailable',
      message:
        'shard 0 crashed (boom: a test made the shard crash) with this request in flight: a write may or may not have been applied',
    });
    const down =
      'shard 0 crashed (boom: a test made the shard crash); it is restarted from its files until that works';
    // Until it is back, its requests are refused in the same words, with the wait left.
    const refused = await t.req('GET', '/v1/memories');
    expect(refused.body).toEqual({ error_code: 'unavailable', message: down });
    expect(refused.headers.get('retry-after')).toBe('1');
    const ready = await t.req('GET', '/v1/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.reason).toBe(down);
    expect(lines).toContain(
      'shard 0: CRASHED (boom: a test made the shard crash); its requests in flight failed with 503; restarting it from its files in 1 s',
    );
    expect((await t.req('GET', '/v1/metrics')).text).toContain(
      'flashbulb_shard_crashes_total{shard="0"} 1',
    );

    await until(async () => (await t.req('GET', '/v1/health/ready')).status === 200, {
      what: 'the shard restarted on its files',
    });
    const listed = await t.req('GET', '/v1/memories');
    expect(listed.body.memories.map((m: { content: string }) => m.content).sort()).toEqual([
      'memory 0',
      'memory 1',
      'memory 2',
      'memory 3',
      'memory 4',
    ]);
    expect(
      (await t.req('POST', '/v1/memories', { body: { content: 'after the restart' } })).status,
    ).toBe(201);
    expect(lines.filter((l) => /^shard 0: \d+ memories recovered/.test(l))).toEqual([
      expect.stringMatching(/^shard 0: 0 memories/),
      expect.stringMatching(/^shard 0: 5 memories/),
    ]);
    // The restarted shard holds no subscriptions: the one open before was closed.
    const [closed] = await stream.waitFor('closed');
    expect(closed?.json).toMatchObject({ reason: 'closed' });
  });

  it('crashing again after a restart waits twice as long; stopping before the restart names the missing final snapshot, and the next start has every acknowledged write', async () => {
    const lines: string[] = [];
    const t = await withFiveMemories('1', lines);
    expect((await t.req('GET', `/v1/memories/${CRASH_ID}`)).status).toBe(503);
    await until(async () => (await t.req('GET', '/v1/health/ready')).status === 200, {
      what: 'the first restart',
    });
    const second = await t.req('GET', `/v1/memories/${CRASH_ID}`);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('2');
    expect(
      lines.filter((l) => l.includes('CRASHED')).map((l) => l.replace(/.*(in \d+ s)$/, '$1')),
    ).toEqual(['in 1 s', 'in 2 s']);
    await expect(t.app.stop()).rejects.toThrow(
      'shard 0: no final snapshot, since it crashed (boom: a test made the shard crash)',
    );
    started.splice(0);

    const again = await startTestApp(
      { dataDir: t.dataDir },
      { FLASHBULB_SHARDS: '1', FLASHBULB_AUTH_ENABLED: 'false' },
    );
    started.push(again);
    expect((await again.req('GET', '/v1/memories')).body.memories).toHaveLength(5);
  });
});
