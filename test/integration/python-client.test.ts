/**
 * The Python client (clients/python: `flashbulb`, with `flashbulb.langgraph.FlashbulbStore`):
 * runs its pytest suite, which starts a real server from dist/ and drives every route, the SSE
 * subscription, export/import, the typed reply models (checked stale against the live document),
 * the LangGraph store over both clients beside LangGraph's own InMemoryStore, small LangGraph
 * graphs, and the examples of its README and docs/clients/python.md, also from the wheel
 * `python -m build` makes, installed into a fresh venv. The first run installs httpx, pydantic, pytest, langgraph, build and
 * datamodel-code-generator into node_modules/.cache/flashbulb-py-venv (2–3 minutes); later runs
 * reuse it. The suite takes about 3 minutes on a loaded machine, the wheel's venv most of it.
 *
 * Skipped only when python3 (3.10+) or its venv module is missing. A failing pip install is a failure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const RUN_SH = fileURLToPath(new URL('../../clients/python/run-tests.sh', import.meta.url));
const PYTHON = process.env['PYTHON'] ?? 'python3';

function pythonUnavailable(): string | null {
  const probe = spawnSync(
    PYTHON,
    ['-c', 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 3)'],
    { encoding: 'utf8' },
  );
  if (probe.error) return `${PYTHON} not found (${probe.error.message})`;
  if (probe.status === 3) return `${PYTHON} is older than 3.10`;
  if (probe.status !== 0) return `${PYTHON} has no venv/ensurepip module (install python3-venv)`;
  return null;
}

const unavailable = pythonUnavailable();
if (unavailable) console.warn(`Python client suite SKIPPED: ${unavailable}`);

describe.skipIf(unavailable !== null)('the Python client (clients/python)', () => {
  it('passes its pytest suite against a live server', async () => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('FLASHBULB_') && v !== undefined) env[k] = v;
    const { code, output } = await new Promise<{ code: number | null; output: string }>(
      (resolve, reject) => {
        const child = spawn('bash', [RUN_SH], {
          env: { ...env, PYTHON },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', (c) => resolve({ code: c, output: out }));
      },
    );
    if (code !== 0) console.log(output);
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ passed/);
    expect(output).not.toMatch(/\d+ (failed|skipped|error)/);
  }, 900_000);
});
