/**
 * The TypeScript client's examples (clients/typescript/README.md, and the same blocks on
 * docs/clients/typescript.md: the quickstart, conversations, LangGraph.js and the Vercel AI SDK), run as printed
 * against a fresh server that holds nothing
 * they did not make, configured only by FLASHBULB_URL and FLASHBULB_API_KEY: each block is
 * written to a file whose package imports point at this repository's sources
 * (`@flashbulb/client…` → clients/typescript/src, `./model.ts` → the AI SDK's mock language
 * model), imported twice (a second run must work as well as the first), and what it prints is
 * checked. client-packages.test.ts runs the same blocks from the packed tarball.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { format } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FlashbulbClient } from '../../clients/typescript/src/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { EXPECTED, MOCK_MODEL, readmeExamples } from '../helpers/client-readme.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = `${ROOT}test-artifacts/client-examples/`;
const CLIENT = `${ROOT}clients/typescript/src/`;

let t: TestApp;
const saved = {
  url: process.env['FLASHBULB_URL'],
  key: process.env['FLASHBULB_API_KEY'],
  ws: process.env['FLASHBULB_WORKSPACE'],
};

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_REFLECT_ENABLED: 'false' });
  process.env['FLASHBULB_URL'] = t.base;
  process.env['FLASHBULB_API_KEY'] = t.adminKey;
  delete process.env['FLASHBULB_WORKSPACE'];
  mkdirSync(OUT, { recursive: true });
  writeFileSync(`${OUT}model.ts`, MOCK_MODEL);
});
afterAll(async () => {
  for (const [name, value] of [
    ['FLASHBULB_URL', saved.url],
    ['FLASHBULB_API_KEY', saved.key],
    ['FLASHBULB_WORKSPACE', saved.ws],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await t.stop();
});

/** Writes the example with its imports pointed at this repository, imports it, returns what it printed. */
async function run(name: string, code: string, round: number): Promise<string[]> {
  const file = `${OUT}${name}-${round}.ts`;
  writeFileSync(
    file,
    code
      .replace("'@flashbulb/client/langgraph'", JSON.stringify(`${CLIENT}langgraph.ts`))
      .replace("'@flashbulb/client/ai'", JSON.stringify(`${CLIENT}ai.ts`))
      .replace("'@flashbulb/client'", JSON.stringify(`${CLIENT}index.ts`))
      .replace("'./model.ts'", JSON.stringify(`${OUT}model.ts`)),
  );
  const printed: string[] = [];
  const spy = vi
    .spyOn(console, 'log')
    .mockImplementation((...args: unknown[]) => void printed.push(...format(...args).split('\n')));
  try {
    await import(`${file}?${Date.now()}`);
  } finally {
    spy.mockRestore();
  }
  return printed;
}

const examples = readmeExamples();

describe("the TypeScript client README's examples", () => {
  it('are the quickstart, conversations, LangGraph.js and the Vercel AI SDK, each short and each checked', () => {
    expect(examples.map((e) => e.section)).toEqual(Object.keys(EXPECTED));
    for (const e of examples)
      expect(
        e.code.split('\n').filter((l) => l.trim() !== '').length,
        e.section,
      ).toBeLessThanOrEqual(12);
  });

  it('docs/clients/typescript.md shows the same programs, verbatim', () => {
    const page = readFileSync(`${ROOT}docs/clients/typescript.md`, 'utf8');
    const programs = [...page.matchAll(/^```ts\n([\s\S]*?)^```$/gm)]
      .map((m) => m[1])
      .filter((c) => c?.startsWith('import '));
    expect(programs).toEqual(examples.map((e) => e.code));
  });

  it.each(examples.map((e) => [e.section, e] as const))(
    '%s runs as printed, twice',
    async (_section, e) => {
      for (const round of [1, 2]) EXPECTED[e.section]?.(await run(e.name, e.code, round));
    },
  );

  it('the LangGraph.js example made the workspace it uses, and the AI SDK example stored what the model remembered', async () => {
    const admin = new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey });
    expect((await admin.workspacesList()).workspaces.map((w) => w.slug)).toContain('agent-memory');
    expect((await admin.list()).memories.map((m) => m.content)).toContain('Dana keeps bees');
  });
});
