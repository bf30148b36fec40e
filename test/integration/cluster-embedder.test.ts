/**
 * Every node of a cluster must embed with the same model: the first node records its embedder in
 * the cluster's meta bucket and a node with another is refused at start, naming both (a vector
 * one node made would be searched with another model's cue vectors). Real nats-server; skipped,
 * saying so, only when it is not installed (CI installs it: .ci/run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/index.ts';
import { natsServerAvailable, startNats, stopNats, type NatsServer } from '../helpers/nats.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const HAVE_NATS = natsServerAvailable();
if (!HAVE_NATS)
  console.warn(
    'cluster embedder tests SKIPPED: nats-server is not installed (apt-get install -y nats-server); CI installs it',
  );

const dirs: string[] = [];
const temp = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
let nats: NatsServer | undefined;
const apps: TestApp[] = [];

beforeAll(async () => {
  if (HAVE_NATS) nats = await startNats({ storeDir: temp('fb-nats-emb-') });
});
afterAll(async () => {
  for (const a of apps) await a.stop();
  await stopNats(nats);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const nodeEnv = (id: string): Record<string, string> => ({
  FLASHBULB_NATS_URL: nats?.url ?? '',
  FLASHBULB_NODE_ID: id,
  FLASHBULB_CLUSTER_NAME: 'embc',
  FLASHBULB_CLUSTER_PARTITIONS: '4',
  FLASHBULB_NATS_REPLICAS: '1',
});

describe.skipIf(!HAVE_NATS)('cluster: one embedder for every node', () => {
  it('a node with the same embedder joins; one with another model is refused, naming both', async () => {
    apps.push(await startTestApp({}, nodeEnv('n1'))); // hash embedder: the cluster records it
    apps.push(await startTestApp({}, nodeEnv('n2'))); // the same: joins
    const other = startTestApp(
      {},
      {
        ...nodeEnv('n3'),
        FLASHBULB_EMBEDDER: 'model',
        FLASHBULB_MODEL_DIR: DEFAULTS.FLASHBULB_MODEL_DIR,
      },
    );
    await expect(other).rejects.toThrow(
      /cluster 'embc' embeds with hash \(384 dims\); this node with bge-small-en-v1\.5 \(384 dims, model\.onnx sha256 [0-9a-f]{12}…\): every node must run the same model/,
    );
  }, 60_000);
});
