/**
 * @module cli/offline — `flashbulb keys …` and `flashbulb workspaces …` without a running server:
 * they read and write the data directory's auth.json (a running server re-reads it within a
 * second) or, in cluster mode (FLASHBULB_NATS_URL), the cluster's key store in NATS, so a lost
 * admin key is never a dead end. A directory that holds no Flashbulb data is refused (`--init`
 * starts one on purpose), so a key is never made where no server looks for it.
 */
import { DEFAULT_WORKSPACE } from '../auth/principal.ts';
import { AuthStore, type AuthDirectory, type KeyInfo, type WorkspaceInfo } from '../auth/store.ts';
import { ClusterAuth } from '../cluster/auth-sync.ts';
import type { Config } from '../config/index.ts';
import { holdsData, lockHolder, openDataDir, shardOptions } from '../data-dir.ts';
import { ShardPool } from '../router/shard-client.ts';
import { CliError, count, note, printJson, printLine, table, time, type Shown } from './output.ts';

export interface Creating extends Shown {
  init?: boolean | undefined;
}

/** Runs `use` on the key store the command works on: the cluster's, or the data directory's. */
async function withAuth<T>(
  config: Config,
  init: boolean | null,
  use: (auth: AuthDirectory, where: string) => Promise<T> | T,
): Promise<T> {
  if (config.natsUrls.length > 0) {
    const auth = await ClusterAuth.start({ config, log: note, role: 'cli' });
    try {
      await auth.ensureWorkspaceShared(DEFAULT_WORKSPACE, 'Default workspace');
      return await use(auth, `the key store of cluster ${config.clusterName}`);
    } finally {
      await auth.close();
    }
  }
  return use(localAuth(config, init), config.dataDir);
}

/** The data directory's key store; `init` null: the command cannot start a directory. */
function localAuth(config: Config, init: boolean | null): AuthStore {
  if (!holdsData(config.dataDir) && init !== true) {
    throw new CliError(
      `no Flashbulb data in ${config.dataDir}. The server keeps its keys in its data directory ` +
        '(FLASHBULB_DATA_DIR; the default, ./snapshots, is relative to where the server was started): ' +
        `point --data-dir or FLASHBULB_DATA_DIR at that directory${init === false ? ', or add --init to start a new data directory here' : ''}`,
    );
  }
  openDataDir(config.dataDir, config.shards);
  const auth = new AuthStore(config.dataDir);
  auth.ensureWorkspace(DEFAULT_WORKSPACE, 'Default workspace');
  return auth;
}

export async function keysCreate(
  config: Config,
  opts: Creating & {
    role: 'admin' | 'workspace';
    workspace?: string | undefined;
    label?: string | undefined;
  },
): Promise<number> {
  return withAuth(config, opts.init ?? false, async (auth, where) => {
    const { info, apiKey } = await auth.createKey({
      workspace: opts.workspace ?? DEFAULT_WORKSPACE,
      role: opts.role,
      label: opts.label ?? null,
    });
    if (opts.json) printJson({ ...info, api_key: apiKey });
    else printLine(apiKey);
    note(
      `created key ${info.key_id} (${info.role === 'admin' ? 'admin' : `workspace ${info.workspace}`}) in ${where}. Store the key now: it is not shown again.`,
    );
    return 0;
  });
}

export async function keysList(config: Config, opts: Shown): Promise<number> {
  return withAuth(config, null, (auth) => {
    const keys = auth.keys();
    if (opts.json) printJson(keys);
    else printLine(keyTable(keys));
    return 0;
  });
}

export async function keysRevoke(config: Config, keyId: string, opts: Shown): Promise<number> {
  return withAuth(config, null, async (auth) => {
    const revoked = await auth.revokeKey(keyId);
    if (opts.json) printJson({ revoked });
    else
      printLine(
        `revoked ${revoked.role} key ${revoked.key_id}${revoked.label === null ? '' : ` (${revoked.label})`}`,
      );
    return 0;
  });
}

export async function workspacesList(config: Config, opts: Shown): Promise<number> {
  return withAuth(config, null, (auth) => {
    const workspaces = auth.workspaces();
    if (opts.json) printJson(workspaces);
    else printLine(workspaceTable(workspaces));
    return 0;
  });
}

export async function workspacesCreate(
  config: Config,
  slug: string,
  opts: Creating & { name?: string | undefined; defaultTtl?: number | undefined },
): Promise<number> {
  return withAuth(config, opts.init ?? false, async (auth, where) => {
    let workspace = await auth.createWorkspace(slug, opts.name ?? slug);
    if (opts.defaultTtl !== undefined)
      workspace = await auth.updateWorkspace(slug, { default_ttl_s: opts.defaultTtl });
    const { info, apiKey } = await auth.createKey({
      workspace: slug,
      role: 'workspace',
      label: 'created with the workspace',
    });
    if (opts.json) printJson({ workspace, key_id: info.key_id, api_key: apiKey });
    else printLine(apiKey);
    note(
      `created workspace ${slug} and its key ${info.key_id} in ${where}. Store the key now: it is not shown again.`,
    );
    return 0;
  });
}

/** Deletes a workspace and everything in it, the server stopped (a running one does it with DELETE /v1/workspaces/SLUG). */
export async function workspacesDelete(config: Config, slug: string, opts: Shown): Promise<number> {
  if (config.natsUrls.length > 0)
    throw new CliError(
      `in cluster mode a workspace is deleted through a running node: DELETE /v1/workspaces/${slug}`,
    );
  const auth = localAuth(config, null);
  const dir = config.dataDir;
  const holder = lockHolder(dir);
  if (holder !== null)
    throw new CliError(
      `the server (pid ${holder}) is running on ${dir}; use DELETE /v1/workspaces/${slug} instead`,
    );
  if (!auth.workspace(slug)) throw new CliError(`workspace '${slug}' not found in ${dir}`);
  const meta = openDataDir(dir, config.shards);
  const pool = await ShardPool.start({
    dataDir: dir,
    shards: shardOptions({ ...config, contradictionsEnabled: false }, meta.shards),
    maxInflight: 16,
    timeoutMs: 60_000,
  });
  const { memories } = await pool.call(slug, 'dropWorkspace', {});
  await pool.shutdown();
  const { revokedKeys } = auth.deleteWorkspace(slug);
  if (opts.json)
    printJson({ deleted: slug, memories_deleted: memories, keys_revoked: revokedKeys });
  else
    printLine(
      `deleted workspace ${slug}: ${count(memories, 'memory', 'memories')}, ${count(revokedKeys, 'key')} revoked`,
    );
  return 0;
}

function keyTable(keys: readonly KeyInfo[]): string {
  return table(
    ['key id', 'role', 'workspace', 'label', 'created'],
    keys.map((k) => [
      k.key_id,
      k.role,
      k.role === 'admin' ? '(all)' : k.workspace,
      k.label ?? '',
      time(k.created_at),
    ]),
  );
}

function workspaceTable(workspaces: readonly WorkspaceInfo[]): string {
  return table(
    ['slug', 'name', 'default ttl', 'created'],
    workspaces.map((w) => [
      w.slug,
      w.name,
      w.default_ttl_s === null || w.default_ttl_s === undefined ? '-' : `${w.default_ttl_s} s`,
      time(w.created_at),
    ]),
  );
}
