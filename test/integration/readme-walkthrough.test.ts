/**
 * The README's walk-through, run as a new user runs it: the server started as `node dist/cli.js
 * serve` with its defaults (the real model, authentication on, a fresh data directory), the admin
 * key read from the banner it prints, and every `sh` block of the README's "A five-minute
 * walk-through" section pasted into one bash, top to bottom, in the repository's directory. The
 * first block sets KEY and B: the test gives them this server's key and address, and nothing else
 * of the README is changed. Under `set -euo pipefail` any call that fails (the blocks use
 * `curl --fail-with-body`) stops the run, naming the command; then what the blocks printed is
 * checked for what the walk-through says they print.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killQuietly, ROOT, spawnServer, type ChildServer } from '../helpers/child.ts';
import { until } from '../helpers/wait.ts';

const SECTION = '## A five-minute walk-through';

/** The `sh` blocks of the README's walk-through section, in order. */
export function walkthroughBlocks(readme: string): string[] {
  const start = readme.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const rest = readme.slice(start + SECTION.length + 2);
  const end = rest.search(/\n## /);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

/** The first block with its KEY= and B= lines given these values (and the rest of it as printed). */
export function withServer(block: string, key: string, base: string): string {
  let key_ = 0;
  let base_ = 0;
  const out = block
    .replace(/^KEY=\S*/m, () => {
      key_++;
      return `KEY='${key}'`;
    })
    .replace(/^B=\S*/m, () => {
      base_++;
      return `B='${base}'`;
    });
  if (key_ !== 1 || base_ !== 1)
    throw new Error(
      `the walk-through's first block must set KEY= and B= at the start of a line:\n${block}`,
    );
  return out;
}

function missing(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0;
}

const tools = ['bash', 'curl', 'jq'].filter(missing);
const required = process.env['FLASHBULB_E2E_REQUIRED'] !== undefined;

describe.skipIf(tools.length > 0 && !required)("the README's walk-through", () => {
  let server: ChildServer | undefined;
  let dataDir = '';
  let key = '';

  beforeAll(async () => {
    if (tools.length > 0)
      throw new Error(`the walk-through needs ${tools.join(', ')} (.ci/run installs them)`);
    ensureBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-walkthrough-'));
    // The server as `npm start` runs it: its own defaults (real model, auth on), only the address,
    // port and data directory chosen here.
    server = await spawnServer({
      dataDir,
      env: { FLASHBULB_EMBEDDER: 'model', FLASHBULB_AUTH_ENABLED: 'true', FLASHBULB_SHARDS: '2' },
    });
    key = await until(() => /fb_admin_[0-9A-Za-z]+/.exec(server?.stderr() ?? '')?.[0], {
      what: "the first start's admin key on stderr",
      deadlineMs: 60_000,
    });
    await until(
      async () =>
        (
          await fetch(`${server?.base}/v1/health/ready`, {
            headers: { authorization: `Bearer ${key}` },
          }).catch(() => null)
        )?.status === 200,
      { what: 'the server to be ready', deadlineMs: 60_000 },
    );
  }, 90_000);

  afterAll(async () => {
    await killQuietly(server);
    if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs every block, top to bottom, and prints what it says', async () => {
    const blocks = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const script = [
      'set -euo pipefail',
      `trap 'echo "walk-through failed at: $BASH_COMMAND" >&2' ERR`,
      ...blocks.map(
        (b, i) =>
          `echo '>>> block ${i + 1}'\n${i === 0 ? withServer(b, key, server?.base ?? '') : b}`,
      ),
      "echo '>>> done'",
    ].join('\n');
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('FLASHBULB_') && v !== undefined) env[k] = v;
    const run = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn('bash', ['-c', script], {
        cwd: ROOT,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      // A block that hangs (a stream that never opens) ends the whole group, background jobs too.
      const timer = setTimeout(() => {
        err += '\n(killed after 150 s)';
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      }, 150_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out, err });
      });
    });
    const transcript = `${run.out}\n--- stderr ---\n${run.err}\n--- server ---\n${server?.stderr().slice(-3000) ?? ''}`;
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    writeFileSync(join(ROOT, 'test-artifacts', 'readme-walkthrough.txt'), transcript);
    expect(run.code, transcript).toBe(0);
    expect(run.out, transcript).toContain('>>> done');
    expect(run.out, transcript).not.toContain('"error_code"');
    // What the blocks say they print.
    const block = (n: number): string =>
      run.out.split(`>>> block ${n}\n`)[1]?.split('>>> ')[0] ?? '';
    expect(block(3), 'the causal recall walks from the tiredness to its cause').toContain(
      'Alice switched to coffee',
    );
    expect(block(5), 'the upload is recalled').toContain('keeps bees');
    expect(run.out, 'the subscription opened and closed').toMatch(
      /event: subscribed[\s\S]*event: closed/,
    );
    expect(run.out, 'the import into acme').toMatch(/"imported":[1-9]/);
    expect(run.out, 'the forgotten memory is gone').toMatch(/^404$/m);
    expect(block(9), 'the contradiction check linked the update to the older statement').toMatch(
      /"edge_type":"revised_from"/,
    );
  }, 200_000);
});
