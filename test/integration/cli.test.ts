/**
 * The `flashbulb` command line as a person meets it, run as a real process from a directory of
 * its own: --version and help on stdout (exit 0), a wrong command line answered with one line and
 * the command's usage (exit 2, no stack), keys in the data directory FLASHBULB_DATA_DIR names
 * (refused where it holds no Flashbulb data unless --init), tables for people and --json for
 * scripts, and the first start's banner naming the real data directory.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  ensureBuilt,
  killQuietly,
  ROOT,
  startServer,
  type ChildServer,
} from '../helpers/child.ts';
import { until } from '../helpers/wait.ts';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

const dirs: string[] = [];
const children: ChildServer[] = [];
let cwd = '';

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** `flashbulb ARGS` from a directory of its own, with only `env` of the FLASHBULB_* variables. */
function flashbulb(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FLASHBULB_')) base[k] = v;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, env: { ...base, ...env } },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(() => {
  ensureBuilt();
  cwd = tempDir('flashbulb-cli-cwd-');
});
afterAll(async () => {
  for (const c of children) await killQuietly(c);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('flashbulb --version and help', () => {
  it('--version and -v print the package version on stdout', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-v'])
      expect(await flashbulb([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('help <command>, <command> --help and a bare group answer on stdout with exit 0', async () => {
    for (const args of [
      ['help', 'keys', 'create'],
      ['keys', 'create', '--help'],
      ['keys', 'create', '-h'],
    ]) {
      const ran = await flashbulb(args);
      expect(ran.code, args.join(' ')).toBe(0);
      expect(ran.stderr).toBe('');
      expect(ran.stdout).toMatch(/^Usage: flashbulb keys create \[--role <admin\|workspace>\]/);
      expect(ran.stdout).toContain('--init');
    }
    const group = await flashbulb(['keys']);
    expect(group).toMatchObject({ code: 0, stderr: '' });
    expect(group.stdout).toMatch(/^Usage: flashbulb keys <create\|list\|revoke>/);
    const bare = await flashbulb([]);
    expect(bare).toMatchObject({ code: 0, stderr: '' });
    for (const command of [
      'serve',
      'mcp',
      'keys',
      'workspaces',
      'export',
      'import',
      'backup',
      'repair',
      'help',
    ])
      expect(bare.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it('a mistyped flag or command gets one line naming it and the usage, exit 2, no stack trace', async () => {
    const flag = await flashbulb(['keys', 'create', '--rol', 'admin']);
    expect(flag.code).toBe(2);
    expect(flag.stdout).toBe('');
    expect(flag.stderr.split('\n')).toEqual([
      "flashbulb keys create: unknown option '--rol' (did you mean --role?)",
      'usage: flashbulb keys create [--role <admin|workspace>] [--workspace <slug>] [--label <text>] [--data-dir <dir>] [--init] [--json]',
      '',
    ]);
    const command = await flashbulb(['serv']);
    expect(command).toMatchObject({ code: 2, stdout: '' });
    expect(command.stderr).toMatch(
      /^flashbulb: unknown command 'serv' \(did you mean serve\?\)\nusage: flashbulb <command>/,
    );
    const value = await flashbulb(['workspaces', 'create', 'x', '--default-ttl', 'soon']);
    expect(value.code).toBe(2);
    expect(value.stderr).toMatch(
      /^flashbulb workspaces create: option '--default-ttl <seconds>' argument 'soon' is invalid\. it must be a positive number of seconds\.\nusage: flashbulb workspaces create <slug>/,
    );
    const missing = await flashbulb(['backup']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^flashbulb backup: required option '--to <dir>' not specified\nusage: flashbulb backup --to <dir>/,
    );
    for (const r of [flag, command, value, missing]) expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('keys and workspaces in the data directory', () => {
  it('keys create refuses a directory that holds no Flashbulb data, creates nothing there, and starts one with --init', async () => {
    const dataDir = join(tempDir('flashbulb-cli-keys-'), 'data');
    const refused = await flashbulb(['keys', 'create', '--role', 'admin'], {
      FLASHBULB_DATA_DIR: dataDir,
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`no Flashbulb data in ${dataDir}`);
    expect(refused.stderr).toContain('--init');
    expect(existsSync(dataDir)).toBe(false);
    // Read-only commands are refused too, and do not offer --init.
    const listed = await flashbulb(['keys', 'list'], { FLASHBULB_DATA_DIR: dataDir });
    expect(listed.code).toBe(1);
    expect(listed.stderr).not.toContain('--init');
    expect(existsSync(dataDir)).toBe(false);

    const made = await flashbulb(['keys', 'create', '--role', 'admin', '--init'], {
      FLASHBULB_DATA_DIR: dataDir,
    });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^fb_admin_[0-9A-Za-z]+\n$/);
    expect(made.stderr).toMatch(/^created key key_\w+ \(admin\) in .* Store the key now/);
    expect(existsSync(join(dataDir, 'meta.json'))).toBe(true);
    // Now the directory holds data: no --init needed, and --data-dir wins over the environment.
    const second = await flashbulb(
      [
        'keys',
        'create',
        '--workspace',
        'default',
        '--label',
        'a bot',
        '--json',
        '--data-dir',
        dataDir,
      ],
      { FLASHBULB_DATA_DIR: join(cwd, 'elsewhere') },
    );
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({
      role: 'workspace',
      workspace: 'default',
      label: 'a bot',
      api_key: expect.stringMatching(/^fb_live_/),
    });
    expect(existsSync(join(cwd, 'elsewhere'))).toBe(false);
  });

  it('keys list prints a table (ids, never keys) and --json for scripts; a key made while the server runs works on it', async () => {
    const dataDir = tempDir('flashbulb-cli-list-');
    const server = await startServer({
      dataDir,
      env: { FLASHBULB_AUTH_ENABLED: 'true', FLASHBULB_PUBLIC_HEALTH: 'true' },
    });
    children.push(server);
    const env = { FLASHBULB_DATA_DIR: dataDir };
    const made = await flashbulb(
      ['workspaces', 'create', 'acme', '--name', 'Acme Inc', '--default-ttl', '90', '--json'],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const { api_key: key, key_id: keyId } = JSON.parse(made.stdout) as {
      api_key: string;
      key_id: string;
    };

    const table = await flashbulb(['keys', 'list'], env);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KEY ID +ROLE +WORKSPACE +LABEL +CREATED$/);
    expect(lines).toHaveLength(3); // the first start's admin key and acme's
    expect(lines.find((l) => l.startsWith(keyId))).toMatch(
      new RegExp(
        `^${keyId} +workspace +acme +created with the workspace +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ$`,
      ),
    );
    expect(table.stdout).not.toContain('fb_');
    const json = JSON.parse((await flashbulb(['keys', 'list', '--json'], env)).stdout) as Array<{
      key_id: string;
      role: string;
    }>;
    expect(json.map((k) => k.role).sort()).toEqual(['admin', 'workspace']);
    expect(
      JSON.parse((await flashbulb(['workspaces', 'list', '--json'], env)).stdout),
    ).toContainEqual(
      expect.objectContaining({ slug: 'acme', name: 'Acme Inc', default_ttl_s: 90 }),
    );
    expect((await flashbulb(['workspaces', 'list'], env)).stdout).toMatch(
      /^acme +Acme Inc +90 s +\d{4}-/m,
    );

    // The running server re-reads its key file: the CLI's key works without a restart.
    const whoami = (): Promise<number> =>
      fetch(`${server.base}/v1/auth/whoami`, { headers: { authorization: `Bearer ${key}` } }).then(
        (r) => r.status,
      );
    await until(async () => (await whoami()) === 200, {
      what: 'the CLI key to work on the running server',
      deadlineMs: 10_000,
    });
    const revoked = await flashbulb(['keys', 'revoke', keyId], env);
    expect(revoked).toMatchObject({
      code: 0,
      stdout: `revoked workspace key ${keyId} (created with the workspace)\n`,
    });
    await until(async () => (await whoami()) === 401, {
      what: 'the revoked key to be refused',
      deadlineMs: 10_000,
    });
  });

  it("the first start's banner names the real data directory in the command that makes another admin key", async () => {
    const dataDir = join(tempDir('flashbulb-cli-banner-'), 'with space');
    const server = await startServer({
      dataDir,
      env: { FLASHBULB_AUTH_ENABLED: 'true', FLASHBULB_PUBLIC_HEALTH: 'true' },
    });
    children.push(server);
    await until(() => server.stderr().includes('Lost it?'), {
      what: 'the banner',
      deadlineMs: 10_000,
    });
    expect(server.stderr()).toContain(
      `Lost it? \`node ${CLI} keys create --role admin --data-dir '${dataDir}'\` makes another.`,
    );
    expect(server.stderr()).not.toContain('<data dir>');
  });
});
