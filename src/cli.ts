#!/usr/bin/env node
/**
 * @module cli — `flashbulb serve | keys … | workspaces … | export | import | backup | repair`. Key and
 * workspace commands work offline against a data directory (in cluster mode, with FLASHBULB_NATS_URL
 * set, against the cluster's key store in NATS), so a lost admin key is never a dead end, and neither is a damaged file (repair); export, import and backup talk to a running server (FLASHBULB_URL, FLASHBULB_API_KEY).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AuthStore, type AuthDirectory } from './auth/store.ts';
import { ClusterAuth } from './cluster/auth-sync.ts';
import { DEFAULT_WORKSPACE } from './auth/principal.ts';
import { loadConfig, type Config } from './config/index.ts';
import { lockHolder, openDataDir, repairDataDir, shardOptions } from './data-dir.ts';
import { startApp } from './app.ts';
import { ShardPool } from './router/shard-client.ts';
import { embeddedStdio, relayStdio } from './cli/mcp-stdio.ts';
import { backupCommand, exportCommand, importCommand } from './cli/remote.ts';

const USAGE = `usage:
  flashbulb serve
  flashbulb mcp [--workspace SLUG] [--data-dir DIR]   MCP on stdio: relays to FLASHBULB_URL with
                                                      FLASHBULB_API_KEY, or runs embedded on the data dir
  flashbulb keys create --role admin|workspace [--workspace SLUG] [--label TEXT] [--data-dir DIR]
  flashbulb keys list [--data-dir DIR]
  flashbulb keys revoke KEY_ID [--data-dir DIR]
  flashbulb workspaces list [--data-dir DIR]
  flashbulb workspaces create SLUG [--name TEXT] [--default-ttl SECONDS] [--data-dir DIR]
  flashbulb workspaces delete SLUG [--data-dir DIR]   (server must be stopped)
  flashbulb export [--workspace SLUG] [--embeddings] > FILE.ndjson
  flashbulb import [--workspace SLUG] < FILE.ndjson
  flashbulb backup --to DIR          (DIR on the server's machine; restore: flashbulb serve --data-dir DIR)
  flashbulb repair [--data-dir DIR]  (server stopped) keeps every whole record of a damaged snapshot
                                     or log that stops start-up, drops the damaged bytes, says what
  export, import and backup talk to a running server: --url URL (FLASHBULB_URL, default
  http://127.0.0.1:$FLASHBULB_HTTP_PORT) and --key KEY (FLASHBULB_API_KEY).
Configuration comes from FLASHBULB_* environment variables (see README).`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  workspace: { type: 'string' },
  role: { type: 'string' },
  label: { type: 'string' },
  name: { type: 'string' },
  embeddings: { type: 'boolean' },
  'default-ttl': { type: 'string' },
  to: { type: 'string' },
  url: { type: 'string' },
  key: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [command, sub, arg] = positionals;
  if (values.help || !command) return usage(command ? 0 : 2);
  const config = loadConfig(undefined, values['data-dir'] ? { dataDir: resolve(values['data-dir']) } : {});
  if (command === 'serve') return serve(config);
  if (command === 'repair') return repair(config.dataDir);
  if (command === 'mcp') return mcp(config, values.workspace, values['data-dir'] !== undefined);
  if (command === 'export' || command === 'import' || command === 'backup') {
    const client = { ...config, serverUrl: values.url?.replace(/\/+$/, '') ?? config.serverUrl, apiKey: values.key ?? config.apiKey };
    return remote(command, { config: client, workspace: values.workspace, embeddings: values.embeddings ?? false, to: values.to });
  }
  if (command !== 'keys' && command !== 'workspaces') return usage(2);
  if (config.natsUrls.length > 0) {
    // Cluster mode: keys and workspaces live in the cluster's key store, not in a data directory.
    if (command === 'workspaces' && sub === 'delete') return fail(`in cluster mode a workspace is deleted through a running node: DELETE /v1/workspaces/${arg ?? '<slug>'}`);
    const auth = await ClusterAuth.start({ config, log: (line) => process.stderr.write(`${line}\n`), role: 'cli' });
    try {
      await auth.ensureWorkspaceShared(DEFAULT_WORKSPACE, 'Default workspace');
      return await keysAndWorkspaces(auth, command, sub, arg, values);
    } finally {
      await auth.close();
    }
  }
  openDataDir(config.dataDir, config.shards);
  const auth = new AuthStore(config.dataDir);
  auth.ensureWorkspace(DEFAULT_WORKSPACE, 'Default workspace');
  if (command === 'workspaces' && sub === 'delete' && arg) return deleteWorkspaceOffline(config, auth, arg);
  return keysAndWorkspaces(auth, command, sub, arg, values);
}

async function keysAndWorkspaces(
  auth: AuthDirectory,
  command: 'keys' | 'workspaces',
  sub: string | undefined,
  arg: string | undefined,
  values: { workspace?: string | undefined; role?: string | undefined; label?: string | undefined; name?: string | undefined; 'default-ttl'?: string | undefined },
): Promise<number> {
  if (command === 'keys' && sub === 'create') {
    const role = values.role ?? 'workspace';
    if (role !== 'admin' && role !== 'workspace') return fail('--role must be admin or workspace');
    const { info, apiKey } = await auth.createKey({ workspace: values.workspace ?? DEFAULT_WORKSPACE, role, label: values.label ?? null });
    print({ ...info, api_key: apiKey });
    process.stderr.write('Store this key now: it is not shown again.\n');
    return 0;
  }
  if (command === 'keys' && sub === 'list') return print(auth.keys());
  if (command === 'keys' && sub === 'revoke' && arg) return print({ revoked: await auth.revokeKey(arg) });
  if (command === 'workspaces' && sub === 'list') return print(auth.workspaces());
  if (command === 'workspaces' && sub === 'create' && arg) {
    const ttl = values['default-ttl'] === undefined ? undefined : Number(values['default-ttl']);
    if (ttl !== undefined && !(Number.isFinite(ttl) && ttl > 0)) return fail(`--default-ttl must be a positive number of seconds, got '${values['default-ttl']}'`);
    let workspace = await auth.createWorkspace(arg, values.name ?? arg);
    if (ttl !== undefined) workspace = await auth.updateWorkspace(arg, { default_ttl_s: ttl });
    const { info, apiKey } = await auth.createKey({ workspace: arg, role: 'workspace', label: 'created with the workspace' });
    return print({ workspace, key_id: info.key_id, api_key: apiKey });
  }
  return usage(2);
}

async function remote(command: 'export' | 'import' | 'backup', opts: { config: Config; workspace: string | undefined; embeddings: boolean; to: string | undefined }): Promise<number> {
  const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
  if (command === 'export') {
    await exportCommand(opts, io);
    return 0;
  }
  if (command === 'import') {
    const totals = await importCommand(opts, io);
    print(totals);
    return totals.error_count === 0 ? 0 : 1;
  }
  if (!opts.to) return fail('backup needs --to DIR (a new directory on the server\'s machine)');
  return print(await backupCommand({ ...opts, to: resolve(opts.to) }));
}

async function serve(config: Config): Promise<number> {
  const app = await startApp(config);
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      process.stderr.write(`${signal}: draining requests and writing a final snapshot…\n`);
      // The drain and the final snapshot each have the shutdown timeout; this ends whatever else might hang.
      setTimeout(() => {
        process.stderr.write(`flashbulb: shutdown did not finish within ${2 * config.shutdownTimeoutS + 5} s; exiting\n`);
        process.exit(1);
      }, (2 * config.shutdownTimeoutS + 5) * 1000).unref();
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await app.stop();
  process.stderr.write('stopped cleanly\n');
  return 0;
}

async function mcp(config: Config, workspace: string | undefined, embedded: boolean): Promise<number> {
  if (config.url !== '' && !embedded) await relayStdio(config, { workspace });
  else await embeddedStdio(config, { workspace });
  return 0;
}

async function deleteWorkspaceOffline(config: Config, auth: AuthStore, slug: string): Promise<number> {
  const dir = config.dataDir;
  const holder = lockHolder(dir);
  if (holder !== null) return fail(`the server (pid ${holder}) is running on ${dir}; use DELETE /v1/workspaces/${slug} instead`);
  if (!auth.workspace(slug)) return fail(`workspace '${slug}' not found`);
  const meta = openDataDir(dir, config.shards);
  const pool = await ShardPool.start({
    dataDir: config.dataDir,
    shards: shardOptions({ ...config, contradictionsEnabled: false }, meta.shards),
    maxInflight: 16,
    timeoutMs: 60_000,
  });
  const { memories } = await pool.call(slug, 'dropWorkspace', {});
  await pool.shutdown();
  const { revokedKeys } = auth.deleteWorkspace(slug);
  return print({ deleted: slug, memories_deleted: memories, keys_revoked: revokedKeys });
}

function print(value: unknown): number {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  return 0;
}

function repair(dir: string): number {
  const repaired = repairDataDir(dir);
  print({
    data_dir: dir,
    repaired: repaired.map((r) => ({
      shard: r.shard, file: r.file, records_kept: r.kept, original_kept_as: r.original,
      dropped: r.dropped.map((d) => ({ offset: d.offset, bytes: d.bytes, reason: d.reason })),
    })),
  });
  process.stderr.write(
    repaired.length === 0
      ? `flashbulb: nothing damaged in ${dir}\n`
      : `flashbulb: ${repaired.length} file(s) rewritten; the records in the dropped bytes are lost. Start the server; delete the .damaged originals once you no longer need them (they may hold forgotten content)\n`,
  );
  return 0;
}

function usage(code: number): number {
  (code === 0 ? process.stdout : process.stderr).write(`${USAGE}\n`);
  return code;
}

function fail(message: string): number {
  process.stderr.write(`flashbulb: ${message}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // Operational errors print their message; programming errors (TypeError…) their stack.
    const bug = err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
    const text = err instanceof Error ? (bug ? (err.stack ?? err.message) : err.message) : String(err);
    process.stderr.write(`flashbulb: ${text}\n`);
    process.exit(1);
  },
);
