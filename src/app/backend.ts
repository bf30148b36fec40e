/**
 * @module app/backend — what owns the state behind the verbs, chosen once from the configuration:
 * on one node the data directory (its lock, auth.json, a worker thread per shard: router/
 * shard-client), in a cluster the NATS key store and a cluster node that owns partitions
 * (cluster/). Each resource it opens pushes its release onto the app's cleanup stack.
 */
import { DEFAULT_WORKSPACE } from '../auth/principal.ts';
import { AuthStore, type AuthDirectory } from '../auth/store.ts';
import { ClusterAuth } from '../cluster/auth-sync.ts';
import { ClusterNode } from '../cluster/node.ts';
import type { Config } from '../config/index.ts';
import {
  checkEmbedder,
  describeEmbedder,
  lockDataDir,
  openDataDir,
  sameEmbedder,
  shardOptions,
  type DataDirMeta,
  type EmbedderRecord,
} from '../data-dir.ts';
import type { ShardEvent } from '../protocol/shard.ts';
import type { ShardRouter } from '../router/router.ts';
import { ShardPool } from '../router/shard-client.ts';
import { shardFor } from '../router/shard-map.ts';
import type { SubscriptionRelay } from '../subscribe/registry.ts';
import type { CleanupStack } from './cleanup.ts';

/** The steps of a start, in order: StartOptions.beforeStep hears each before it runs. */
export const START_STEPS = [
  'tracing',
  'data-dir',
  'auth',
  'shards',
  'embedder',
  'model-check',
  'services',
  'http',
  'history',
  'grpc',
  'admin-key',
] as const;
export type StartStep = (typeof START_STEPS)[number];

export interface BackendHooks {
  log: (line: string) => void;
  /** Runs before each step (a test makes one fail). */
  step: (name: StartStep) => Promise<void>;
  /** Every event of the shards. */
  onEvent: (e: ShardEvent) => void;
  /** A local shard's worker ended on its own; it is restarted in `restartInMs`. */
  onCrashed: (shard: number, why: string, restartInMs: number) => void;
  /** A local shard was restarted on its files: `owns` says which workspaces it holds. */
  onRestarted: (owns: (ws: string) => boolean) => void;
  /** The shard worker's entry, relative to src/ (tests start one they can make crash). */
  shardWorker?: string;
}

export interface Backend {
  readonly shards: ShardRouter;
  readonly auth: AuthDirectory;
  readonly cluster: ClusterNode | null;
  /** The shards, or the cluster's partitions (the metrics history charts each). */
  readonly units: number;
  /** How the start-up line names it. */
  readonly description: string;
  /** Where the subscriptions of other nodes' partitions come from (cluster mode). */
  readonly relay: SubscriptionRelay | null;
  /** Refuses a model other than the one the stored vectors were made with. */
  checkEmbedder(record: EmbedderRecord, holdsMemories: boolean): Promise<void>;
}

/** Opens the backend the configuration names: with FLASHBULB_NATS_URL a cluster node, else shards. */
export async function openBackend(
  config: Config,
  stack: CleanupStack,
  hooks: BackendHooks,
): Promise<Backend> {
  await hooks.step('data-dir');
  const meta = openDataDir(config.dataDir, config.shards);
  stack.defer('data directory lock', lockDataDir(config.dataDir));
  const open = config.natsUrls.length > 0 ? openCluster : openLocal;
  return open(config, meta, hooks, stack);
}

type Opener = (
  config: Config,
  meta: DataDirMeta,
  hooks: BackendHooks,
  stack: CleanupStack,
) => Promise<Backend>;

const openLocal: Opener = async (config, meta, hooks, stack) => {
  await hooks.step('auth');
  const auth = new AuthStore(config.dataDir);
  auth.ensureWorkspace(DEFAULT_WORKSPACE, 'Default workspace');
  await hooks.step('shards');
  const shards = await ShardPool.start({
    dataDir: config.dataDir,
    shards: shardOptions(config, meta.shards),
    maxInflight: config.maxInflightPerShard,
    maxInflightPerWorkspace: config.maxInflightPerWorkspace,
    timeoutMs: config.shardTimeoutMs,
    restartDelayMs: config.shardRestartS * 1000,
    ...(config.shardHeapMb > 0 ? { heapMb: config.shardHeapMb } : {}),
    ...(hooks.shardWorker ? { workerEntry: hooks.shardWorker } : {}),
    onEvent: hooks.onEvent,
    log: hooks.log,
    onCrashed: hooks.onCrashed,
    onRestarted: (shard) => hooks.onRestarted((ws) => shardFor(ws, meta.shards) === shard),
  });
  stack.defer('shards', () => shards.shutdown(config.shutdownTimeoutS * 1000));
  return {
    shards,
    auth,
    cluster: null,
    units: meta.shards,
    description: `${meta.shards} shards`,
    relay: null,
    checkEmbedder: async (record, holdsMemories) => {
      checkEmbedder(config.dataDir, meta, record, holdsMemories);
    },
  };
};

const openCluster: Opener = async (config, meta, hooks, stack) => {
  await hooks.step('auth');
  // One key store for the whole cluster, in a JetStream KV bucket (it also waits for JetStream
  // to be ready, which a NATS cluster that has just started is not).
  const auth = await ClusterAuth.start({ config, log: hooks.log });
  stack.defer('cluster key store', () => auth.close());
  await auth.ensureWorkspaceShared(DEFAULT_WORKSPACE, 'Default workspace');
  await hooks.step('shards');
  const cluster = await ClusterNode.start({ config, emit: hooks.onEvent, log: hooks.log });
  stack.defer('cluster node', () => cluster.shutdown());
  return {
    shards: cluster,
    auth,
    cluster,
    units: cluster.partitions,
    description: `cluster node ${config.nodeId}, ${cluster.partitions} partitions`,
    relay: cluster.relay(),
    checkEmbedder: async (record, holdsMemories) => {
      checkEmbedder(config.dataDir, meta, record, holdsMemories);
      // The nodes share partitions, so one node's vectors are searched with another's cue vectors.
      const answer = await cluster.recordEmbedder(JSON.stringify(record));
      const recorded = JSON.parse(answer) as EmbedderRecord;
      if (sameEmbedder(recorded, record)) return;
      const theirs = `cluster '${config.clusterName}' embeds with ${describeEmbedder(recorded)}`;
      const models = `${theirs}; this node with ${describeEmbedder(record)}`;
      const fix = 'FLASHBULB_MODEL_DIR / FLASHBULB_EMBEDDER';
      throw new Error(`${models}: every node must run the same model (${fix})`);
    },
  };
};
