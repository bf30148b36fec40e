/**
 * @flashbulb/client as a user gets it: `npm pack` in clients/typescript (its prepack builds dist/),
 * the tarball installed into an empty project beside the agent frameworks its README uses
 * (`npm install --prefer-offline`: the versions this repository pins, so npm's cache from
 * `npm ci` serves them), the README's examples type-checked against the installed declarations
 * and run from that project, as separate processes configured only by FLASHBULB_URL and
 * FLASHBULB_API_KEY, against a live server. About 1.5 min on a loaded machine (npm install, the
 * type check with LangGraph's declarations, one process per example).
 * The Python wheel's twin is clients/python/tests/test_examples.py (python-client.test.ts).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { EXPECTED, MOCK_MODEL, readmeExamples } from '../helpers/client-readme.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLIENT = join(ROOT, 'clients/typescript');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The version of a package this repository installed, so the empty project gets the same one. */
function pinned(name: string): string {
  return `${name}@${(JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version}`;
}

let t: TestApp;
let dir: string;
let project: string;

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_REFLECT_ENABLED: 'false' });
  dir = mkdtempSync(join(tmpdir(), 'flashbulb-client-pack-'));
  project = join(dir, 'project');
}, 60_000);
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('@flashbulb/client from its tarball', () => {
  it('packs, installs into an empty project, and its README examples type-check and run there', async () => {
    await run(NPM, ['pack', '--pack-destination', dir, '--silent'], {
      cwd: CLIENT,
      timeout: 300_000,
    });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBe('flashbulb-client-0.1.0.tgz');

    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'agent', private: true, type: 'module' }),
    );
    const deps = [
      join(dir, tarball as string),
      pinned('@langchain/langgraph'),
      pinned('@langchain/core'),
      pinned('ai'),
    ];
    await run(
      NPM,
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', ...deps],
      { cwd: project, timeout: 300_000 },
    );
    const installed = JSON.parse(
      readFileSync(join(project, 'node_modules/@flashbulb/client/package.json'), 'utf8'),
    ) as { name: string; version: string };
    expect(installed).toMatchObject({ name: '@flashbulb/client', version: '0.1.0' });
    expect(
      readdirSync(join(project, 'node_modules/@flashbulb/client/dist'))
        .filter((f) => f.endsWith('.d.ts'))
        .sort(),
    ).toEqual(['ai.d.ts', 'generated.d.ts', 'index.d.ts', 'langgraph.d.ts', 'mcp-tools.d.ts']);

    const examples = readmeExamples();
    expect(examples.map((e) => e.section)).toEqual(Object.keys(EXPECTED));
    for (const e of examples) writeFileSync(join(project, `${e.name}.ts`), e.code);
    writeFileSync(join(project, 'model.ts'), MOCK_MODEL);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          allowImportingTsExtensions: true,
          skipLibCheck: true,
        },
        include: ['*.ts'],
      }),
    );
    const tsc = await run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project],
      { cwd: project, timeout: 120_000 },
    ).catch((e: { stdout: string }) => e);
    expect(tsc.stdout, 'the README examples type-check against the installed package').toBe('');

    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('FLASHBULB_') && v !== undefined) env[k] = v;
    Object.assign(env, { FLASHBULB_URL: t.base, FLASHBULB_API_KEY: t.adminKey });
    for (const e of examples) {
      const out = await run(
        process.execPath,
        [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), `${e.name}.ts`],
        { cwd: project, env, timeout: 120_000 },
      );
      EXPECTED[e.section]?.(out.stdout.trimEnd().split('\n'));
    }
  }, 600_000);
});
