/**
 * A start that fails midway releases what it had opened (issue 52 item 3): each step of startApp
 * (START_STEPS) is made to fail in turn, and after each the data directory's lock is gone, both
 * ports can be bound again, no shard worker thread, socket (a NATS connection among them) or
 * metrics-history timer is left, and the same data directory starts again. A started app's stop()
 * may be called twice (the second call returns the first's promise). The cluster half needs a real
 * nats-server and is skipped, saying so, without one (CI installs it: .ci/run).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_STEPS, startApp, type StartStep } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { lockHolder } from '../../src/data-dir.ts';
import { history } from '../../src/metrics/history.ts';
import { freePort } from '../helpers/child.ts';
import { natsServerAvailable, startNats, stopNats, type NatsServer } from '../helpers/nats.ts';
import { until } from '../helpers/wait.ts';

const HAVE_NATS = natsServerAvailable();
if (!HAVE_NATS)
  console.warn('cluster start-failure tests SKIPPED: nats-server is not installed; CI installs it');

const dirs: string[] = [];
const temp = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Threads of this process (shard workers are threads; Linux, as CI). */
const threads = (): number => readdirSync('/proc/self/task').length;
/** Open sockets and listeners of this process (REST, gRPC, a NATS connection). */
const sockets = (): number =>
  process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length;

/** Whether `port` can be bound on loopback now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

async function configFor(dataDir: string, env: Record<string, string> = {}): Promise<Config> {
  return loadConfig(
    {
      FLASHBULB_EMBEDDER: 'hash',
      FLASHBULB_HTTP_PORT: String(await freePort()),
      FLASHBULB_GRPC_PORT: String(await freePort()),
      FLASHBULB_BIND: '127.0.0.1',
      FLASHBULB_SHARDS: '2',
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
      ...env,
    },
    { dataDir },
  );
}

class Planted extends Error {}

/** Starts on `config` with step `failAt` failing; checks it failed there and released everything. */
async function failAt(
  config: Config,
  failAt: StartStep,
  baseline: { threads: number; sockets: number },
): Promise<void> {
  const seen: StartStep[] = [];
  const start = startApp(config, {
    log: () => {},
    beforeStep: (step) => {
      seen.push(step);
      if (step === failAt) throw new Planted(`planted failure before ${step}`);
    },
  });
  await expect(start).rejects.toBeInstanceOf(Planted);
  expect(seen).toEqual(START_STEPS.slice(0, START_STEPS.indexOf(failAt) + 1));
  expect(lockHolder(config.dataDir), `lock after a failure at ${failAt}`).toBeNull();
  expect(await bindable(config.httpPort), `REST port after a failure at ${failAt}`).toBe(true);
  expect(await bindable(config.grpcPort), `gRPC port after a failure at ${failAt}`).toBe(true);
  expect(history.running, `metrics history after a failure at ${failAt}`).toBe(false);
  await until(() => sockets() <= baseline.sockets, {
    what: `the sockets opened before ${failAt} to close`,
  });
  await until(() => threads() <= baseline.threads, {
    what: `the threads started before ${failAt} to end`,
  });
}

/** A full start hears every step; stopping twice is one stop; after it nothing is left open. */
async function startAndStopTwice(
  config: Config,
  baseline: { threads: number; sockets: number },
): Promise<void> {
  const seen: StartStep[] = [];
  const app = await startApp(config, { log: () => {}, beforeStep: (step) => void seen.push(step) });
  expect(seen).toEqual([...START_STEPS]);
  expect(lockHolder(config.dataDir)).toBe(process.pid);
  expect(history.running).toBe(true);
  const first = app.stop();
  expect(app.stop()).toBe(first);
  await first;
  await app.stop();
  expect(lockHolder(config.dataDir)).toBeNull();
  expect(history.running).toBe(false);
  expect(await bindable(config.httpPort)).toBe(true);
  await until(() => sockets() <= baseline.sockets, { what: 'the sockets to close on stop' });
  await until(() => threads() <= baseline.threads, { what: 'the shard threads to end on stop' });
}

describe('a failed start releases what it opened', () => {
  it('local shards: fails at each step in turn, leaving no lock, port, worker or timer', async () => {
    const dataDir = temp('fb-start-fail-');
    // A start and stop first, so the threads Node starts once (libuv's pool) are in the baseline.
    await startAndStopTwice(await configFor(dataDir), { threads: Infinity, sockets: Infinity });
    const baseline = { threads: threads(), sockets: sockets() };
    for (const step of START_STEPS) await failAt(await configFor(dataDir), step, baseline);
    await startAndStopTwice(await configFor(dataDir), baseline);
  }, 120_000);
});

describe.skipIf(!HAVE_NATS)('a failed cluster start releases what it opened', () => {
  let nats: NatsServer | undefined;
  beforeAll(async () => {
    nats = await startNats({ storeDir: temp('fb-start-fail-nats-') });
  });
  afterAll(() => stopNats(nats));

  it('a cluster node: fails at each step in turn, leaving no NATS connection, port or lock', async () => {
    const env = (id: string): Record<string, string> => ({
      FLASHBULB_NATS_URL: nats?.url ?? '',
      FLASHBULB_NODE_ID: id,
      FLASHBULB_CLUSTER_NAME: 'startfail',
      FLASHBULB_CLUSTER_PARTITIONS: '2',
      FLASHBULB_NATS_REPLICAS: '1',
    });
    const dataDir = temp('fb-start-fail-node-');
    await startAndStopTwice(await configFor(dataDir, env('n1')), {
      threads: Infinity,
      sockets: Infinity,
    });
    const baseline = { threads: threads(), sockets: sockets() };
    for (const step of START_STEPS)
      await failAt(await configFor(dataDir, env('n1')), step, baseline);
    await startAndStopTwice(await configFor(dataDir, env('n1')), baseline);
  }, 240_000);
});
