/**
 * The server installed the way a user installs it: `npm pack` of the repo, then
 * `npm install -g --prefix <empty directory>` of the tarball, and from another directory
 * `flashbulb --version` (and `npx flashbulb`), `flashbulb serve` answering on both ports with the
 * real model and the dashboard, and `flashbulb keys create` with FLASHBULB_DATA_DIR making a key
 * the running server accepts.
 *
 * The tarball is packed from the suite's own build (`npm test` builds first; `--ignore-scripts`
 * skips prepack's second build). The install fetches the dependencies from the npm registry and
 * builds the native addons (hnswlib-node, malloc-trim): about 1.5 min of the test's ~2 on two
 * cores. The model fetch at install verifies the repo's copy (FLASHBULB_MODEL_DIR) instead of
 * downloading it again, and onnxruntime-node's CUDA download is skipped as .ci/run skips it
 * (ONNXRUNTIME_NODE_INSTALL=skip: nuget.org is not reachable from CI, and the CPU needs none of it).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../helpers/child.ts';
import { connectGrpc } from '../helpers/grpc.ts';
import { until } from '../helpers/wait.ts';

const run = promisify(execFile);
const MODEL_DIR = join(ROOT, 'models', 'bge-small-en-v1.5');
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const BUILT =
  existsSync(join(ROOT, 'dist', 'cli.js')) && existsSync(join(ROOT, 'dist', 'web', 'index.html'));
if (!BUILT)
  throw new Error(
    'package-install.test.ts packs the build: run `npm run build` first (npm test does)',
  );

let dir = '';
let prefix = '';
let elsewhere = '';
let tarball = '';
let server: ChildProcess | null = null;
let serverLog = '';

/**
 * The environment of a user's shell: the installed bin first on PATH, no FLASHBULB_* of the
 * suite's, and none of the npm_* variables `npm test` hands its children (a nested npm would take
 * them as its own configuration), except the native build's headers and the cache.
 */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const keep = new Set(['npm_config_nodedir', 'npm_config_cache']);
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('FLASHBULB_') && (!k.toLowerCase().startsWith('npm_') || keep.has(k)))
      env[k] = v;
  env.PATH = [join(prefix, 'bin'), process.env.PATH ?? ''].join(delimiter);
  return { ...env, ...extra };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flashbulb-package-'));
  prefix = join(dir, 'prefix');
  elsewhere = join(dir, 'elsewhere');
  mkdirSync(elsewhere);
  const packed = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', dir],
    { cwd: ROOT, env: userEnv(), maxBuffer: 1 << 26 },
  );
  tarball = join(
    dir,
    (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]?.filename ?? '',
  );
  await run(
    'npm',
    ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', tarball],
    {
      cwd: elsewhere,
      env: userEnv({
        FLASHBULB_MODEL_DIR: MODEL_DIR,
        ONNXRUNTIME_NODE_INSTALL: 'skip',
        SCARF_ANALYTICS: 'false',
      }),
      maxBuffer: 1 << 26,
    },
  );
}, 300_000);

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGKILL');
    await new Promise((resolve) => server?.once('exit', resolve));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed server, installed into an empty prefix', () => {
  it('the tarball carries what running needs and nothing of the checkout besides', async () => {
    const { stdout } = await run('tar', ['tzf', tarball], { maxBuffer: 1 << 26 });
    const files = stdout
      .split('\n')
      .filter((f) => f !== '')
      .map((f) => f.replace(/^package\//, ''));
    for (const f of [
      'package.json',
      'dist/cli.js',
      'dist/web/index.html',
      'proto/hebbs.proto',
      'scripts/fetch-model.mjs',
      'scripts/build-native.mjs',
      'native/malloc-trim/trim.c',
      'native/malloc-trim/binding.gyp',
    ])
      expect(files).toContain(f);
    for (const stray of [
      'src/',
      'test/',
      'models/',
      'native/malloc-trim/build/',
      'node_modules/',
      'native-bench/',
      'clients/',
    ])
      expect(
        files.filter((f) => f.startsWith(stray)),
        stray,
      ).toEqual([]);
  });

  it('flashbulb and npx flashbulb are on PATH and print the version from another directory', async () => {
    expect((await run('flashbulb', ['--version'], { cwd: elsewhere, env: userEnv() })).stdout).toBe(
      `${VERSION}\n`,
    );
    // npx finds the command in the global prefix (npm's `prefix`, here the test's).
    expect(
      (
        await run('npx', ['flashbulb', '--version'], {
          cwd: elsewhere,
          env: userEnv({ npm_config_prefix: prefix }),
        })
      ).stdout,
    ).toBe(`${VERSION}\n`);
  });

  it('flashbulb serve answers on its two ports with the real model and the dashboard; keys create with FLASHBULB_DATA_DIR makes a key it accepts', async () => {
    const [http, grpc] = [await freePort(), await freePort()];
    const dataDir = join(dir, 'data');
    const env = userEnv({
      FLASHBULB_DATA_DIR: dataDir,
      FLASHBULB_MODEL_DIR: MODEL_DIR,
      FLASHBULB_HTTP_PORT: String(http),
      FLASHBULB_GRPC_PORT: String(grpc),
      FLASHBULB_BIND: '127.0.0.1',
      FLASHBULB_SHARDS: '1',
      FLASHBULB_EMBED_WORKERS: '1',
      FLASHBULB_REFLECT_ENABLED: 'false',
    });
    server = spawn('flashbulb', ['serve'], {
      cwd: elsewhere,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.setEncoding('utf8').on('data', (d: string) => (serverLog += d));
    server.stderr?.setEncoding('utf8').on('data', (d: string) => (serverLog += d));
    const exited = new Promise<number | null>((resolve) =>
      server?.once('exit', (code) => resolve(code)),
    );
    const base = `http://127.0.0.1:${http}`;
    await until(() => /^\s+(fb_admin_\w+)\s*$/m.test(serverLog) || server?.exitCode !== null, {
      what: "the first start's admin key",
      deadlineMs: 60_000,
      everyMs: 100,
    });
    const admin = /^\s+(fb_admin_\w+)\s*$/m.exec(serverLog)?.[1] ?? '';
    expect(admin, serverLog).not.toBe('');
    expect(serverLog).toContain(`embedder: bge-small-en-v1.5 (384 dims) from ${MODEL_DIR}`);
    expect(serverLog).toContain(
      `Lost it? \`flashbulb keys create --role admin --data-dir ${dataDir}\``,
    );
    const ready = (): Promise<number> =>
      fetch(`${base}/v1/health/ready`, { headers: { authorization: `Bearer ${admin}` } }).then(
        (r) => r.status,
        () => 0,
      );
    await until(async () => (await ready()) === 200, {
      what: 'the installed server to be ready',
      deadlineMs: 60_000,
    });
    expect((await fetch(`${base}/`)).status).toBe(200); // the dashboard, from the package's dist/web

    const made = await run(
      'flashbulb',
      ['keys', 'create', '--workspace', 'default', '--label', 'installed'],
      { cwd: elsewhere, env: userEnv({ FLASHBULB_DATA_DIR: dataDir }) },
    );
    const key = made.stdout.trim();
    expect(key).toMatch(/^fb_live_\w+$/);
    const remember = (): Promise<Response> =>
      fetch(`${base}/v1/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'The ferry to the island leaves at dawn.' }),
      });
    await until(async () => (await remember()).status === 201, {
      what: 'the new key to be accepted (the server re-reads its key file)',
      deadlineMs: 10_000,
    });
    const client = connectGrpc(grpc, { auth: { key } });
    try {
      const hits = await client.call('MemoryService', 'Recall', {
        cue: 'when does the boat sail?',
        strategies: [{ strategy_type: 'SIMILARITY', top_k: 1 }],
      });
      expect(hits.results.map((r) => r.memory?.content)).toEqual([
        'The ferry to the island leaves at dawn.',
      ]);
    } finally {
      client.close();
    }
    server.kill('SIGTERM');
    expect(await exited, serverLog).toBe(0);
  });
});
