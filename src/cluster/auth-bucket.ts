/**
 * @module cluster/auth-bucket — the cluster key store's KV bucket: connecting and opening it (once
 * JetStream answers), its entries' shapes (a workspace, a key's SHA-256 record, the bootstrap claim),
 * each parsed so that a malformed entry is skipped rather than trusted, and a new key with its
 * stored record.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { Config } from '../config/index.ts';
import { FlashbulbError } from '../errors/codes.ts';
import { generateApiKey, generateKeyId, hashKey, type Role } from '../auth/keys.ts';
import type { KeyInfo, StoredKey, WorkspaceInfo } from '../auth/store.ts';
import { pingOptions } from './setup.ts';

/** How long a starting node waits for JetStream (a NATS cluster elects its meta leader after it starts). */
export const JETSTREAM_WAIT_MS = 60_000;

export interface Claim {
  node: string;
  key_id: string;
  at: number;
}

/** Creates or binds the bucket; retries while JetStream is not ready yet (a NATS cluster just started). */
async function openBucket(
  nc: NatsConnection,
  name: string,
  replicas: number,
  log: (line: string) => void,
): Promise<KV> {
  const deadline = Date.now() + JETSTREAM_WAIT_MS;
  let said = false;
  for (;;) {
    try {
      return await new Kvm(nc).create(name, { history: 1, replicas });
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(
          `JetStream did not accept the bucket '${name}' within ${JETSTREAM_WAIT_MS / 1000} s: ${err instanceof Error ? err.message : String(err)}`,
        );
      if (!said)
        log(
          `cluster auth: waiting for JetStream (${err instanceof Error ? err.message : String(err)})`,
        );
      said = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Connects to NATS and opens (or makes) the bucket `<cluster>-auth`; the connection is closed again when that fails. */
export async function connectBucket(
  config: Pick<Config, 'natsUrls' | 'nodeId' | 'clusterName' | 'natsReplicas' | 'clusterLeaseMs'>,
  role: string,
  log: (line: string) => void,
): Promise<{ nc: NatsConnection; kv: KV }> {
  const nc = await connect({
    servers: [...config.natsUrls],
    name: `flashbulb-${config.nodeId}-${role}`,
    maxReconnectAttempts: -1,
    ...pingOptions(config.clusterLeaseMs),
  });
  try {
    return { nc, kv: await openBucket(nc, `${config.clusterName}-auth`, config.natsReplicas, log) };
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
}

export function newKey(
  role: Role,
  workspace: string,
  label: string | null,
): { info: KeyInfo; apiKey: string; stored: StoredKey } {
  const apiKey = generateApiKey(role);
  const info: KeyInfo = {
    key_id: generateKeyId(),
    role,
    workspace,
    label,
    created_at: Date.now() * 1000,
  };
  return { info, apiKey, stored: { ...info, sha256: hashKey(apiKey) } };
}

export function unavailable(what: string, err: unknown): FlashbulbError {
  return new FlashbulbError(
    'unavailable',
    `${what} is not reachable at the moment (${err instanceof Error ? err.message : String(err)}); retry`,
    { retryAfterS: 1 },
  );
}

// ---- bucket values are input: checked before they are believed -----------------------------------

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function toWorkspace(v: unknown): WorkspaceInfo | null {
  if (
    !isRecord(v) ||
    typeof v.slug !== 'string' ||
    typeof v.name !== 'string' ||
    typeof v.created_at !== 'number'
  )
    return null;
  const ttl = v.default_ttl_s;
  if (ttl !== undefined && ttl !== null && typeof ttl !== 'number') return null;
  const ws: WorkspaceInfo = { slug: v.slug, name: v.name, created_at: v.created_at };
  if (ttl !== undefined) ws.default_ttl_s = ttl;
  return ws;
}

export function toStoredKey(v: unknown): StoredKey | null {
  if (!isRecord(v)) return null;
  const { key_id, role, workspace, label, created_at, sha256 } = v;
  if (
    typeof key_id !== 'string' ||
    (role !== 'admin' && role !== 'workspace') ||
    typeof workspace !== 'string'
  )
    return null;
  if ((label !== null && typeof label !== 'string') || typeof created_at !== 'number') return null;
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) return null;
  return { key_id, role, workspace, label, created_at, sha256 };
}

export function toClaim(v: unknown): Claim | null {
  if (
    !isRecord(v) ||
    typeof v.node !== 'string' ||
    typeof v.key_id !== 'string' ||
    typeof v.at !== 'number'
  )
    return null;
  return { node: v.node, key_id: v.key_id, at: v.at };
}
