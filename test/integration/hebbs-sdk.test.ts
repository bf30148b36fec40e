/**
 * Compatibility with the real HEBBS Python SDK (PyPI `hebbs==0.4.1`, `HebbsClient`): starts
 * Flashbulb in-process (real sockets, hash embedder, authentication on), then runs
 * test/compat/run.sh, which prepares a cached virtual environment and drives every SDK method
 * against it (test/compat/hebbs_sdk_test.py). The first run installs the SDK (about a minute);
 * later runs reuse node_modules/.cache/hebbs-venv.
 *
 * Skipped only when python3 or its venv module is missing. A failing pip install is a failure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Background reflection writes insight memories whenever enough new episodes arrive, which would
 * change counts and orderings these tests assert exactly; it is off here (explicit RPCs still run).
 */
const QUIET_ENV = { FLASHBULB_REFLECT_ENABLED: 'false' };

const RUN_SH = fileURLToPath(new URL('../compat/run.sh', import.meta.url));
const GRPC_PAGE = fileURLToPath(new URL('../../docs/api/grpc.md', import.meta.url));
const VENV_PYTHON = fileURLToPath(
  new URL('../../node_modules/.cache/hebbs-venv/bin/python', import.meta.url),
);
const PYTHON = process.env['PYTHON'] ?? 'python3';

/** Why the suite cannot run here, or null when python3 can create a venv with pip. */
function pythonUnavailable(): string | null {
  const probe = spawnSync(
    PYTHON,
    ['-c', 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 3)'],
    { encoding: 'utf8' },
  );
  if (probe.error) return `${PYTHON} not found (${probe.error.message})`;
  if (probe.status === 3) return `${PYTHON} is older than 3.10 (the hebbs SDK needs 3.10+)`;
  if (probe.status !== 0)
    return `${PYTHON} has no venv/ensurepip module (install python3-venv): ${probe.stderr.trim().split('\n').pop() ?? ''}`;
  return null;
}

const unavailable = pythonUnavailable();
if (unavailable) console.warn(`hebbs-sdk compatibility suite SKIPPED: ${unavailable}`);

describe.skipIf(unavailable !== null)('the hebbs Python SDK (0.4.1) against Flashbulb', () => {
  let t: TestApp;
  let workspace: string;
  let workspaceKey: string;

  beforeAll(async () => {
    t = await startTestApp({}, QUIET_ENV);
    workspace = `sdk-${process.pid}`;
    const res = await t.req('POST', '/v1/workspaces', { body: { slug: workspace } });
    expect(res.status, res.text).toBe(201);
    workspaceKey = res.body.api_key;
  });
  afterAll(async () => t?.stop());

  it('passes every SDK test (test/compat/run.sh exits 0)', async () => {
    const env = {
      ...process.env,
      FLASHBULB_HOST: '127.0.0.1',
      FLASHBULB_GRPC_PORT: String(t.app.grpcPort),
      FLASHBULB_API_KEY: t.adminKey,
      FLASHBULB_WORKSPACE: workspace,
      FLASHBULB_WORKSPACE_KEY: workspaceKey,
      PYTHON,
    };
    const { code, output } = await new Promise<{ code: number | null; output: string }>(
      (resolve, reject) => {
        // Asynchronous: the server under test lives in this process and must keep answering.
        const child = spawn('bash', [RUN_SH], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', (c) => resolve({ code: c, output: out }));
      },
    );
    if (code !== 0 || process.env['HEBBS_SDK_VERBOSE']) console.log(output);
    expect(code, output).toBe(0);
    // With a key, a second workspace and the schema descriptor, every test must really have run.
    expect(output).toMatch(/\d+ passed, 0 failed, 0 skipped/);
  }, 300_000);

  it("runs docs/api/grpc.md's example as printed (with this server's address and key)", async () => {
    const page = readFileSync(GRPC_PAGE, 'utf8');
    const at = page.indexOf('## Python over gRPC (the `hebbs` SDK)');
    expect(at).toBeGreaterThanOrEqual(0);
    const section = page.slice(at);
    const example = /```python\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    expect(example).toContain('HebbsClient("localhost:6380", api_key="fb_live_…")');
    const code = example
      .replace('localhost:6380', `127.0.0.1:${t.app.grpcPort}`)
      .replace('fb_live_…', workspaceKey);
    // Asynchronous, like the suite above: the server answering it lives in this process.
    const {
      code: exit,
      out,
      err,
    } = await new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
      const child = spawn(VENV_PYTHON, ['-c', code], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, out: stdout, err: stderr }));
    });
    expect(exit, err).toBe(0);
    expect(out.trim()).toBe('Alice flies to Lisbon in May');
  }, 90_000);
});
