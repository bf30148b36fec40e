/**
 * The LangGraph.js and Vercel AI SDK examples of docs/clients/typescript.md, run as printed
 * against a live server: each `ts` block is written to a file whose package imports point at this
 * repository's sources (`@flashbulb/client…` → clients/typescript/src, `./model.ts` → the AI SDK's
 * mock language model), then imported, and what it logs is checked.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FlashbulbClient } from '../../clients/typescript/src/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = `${ROOT}test-artifacts/docs-examples/`;
const PAGE = `${ROOT}docs/clients/typescript.md`;
const CLIENT = `${ROOT}clients/typescript/src/`;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_REFLECT_ENABLED: 'false' });
  await new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey }).workspacesCreate({ slug: 'agent-memory' });
  process.env['FLASHBULB_URL'] = t.base;
  process.env['FLASHBULB_API_KEY'] = t.adminKey;
});
afterAll(async () => {
  delete process.env['FLASHBULB_URL'];
  delete process.env['FLASHBULB_API_KEY'];
  await t.stop();
});

/** The `ts` block of the page's section with this heading. */
function example(heading: string): string {
  const page = readFileSync(PAGE, 'utf8');
  const start = page.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" in ${PAGE}`);
  const section = page.slice(start + 1);
  const end = section.indexOf('\n## ');
  const block = /```ts\n([\s\S]*?)```/.exec(end < 0 ? section : section.slice(0, end))?.[1];
  if (block === undefined) throw new Error(`no ts example under "## ${heading}"`);
  return block;
}

/** Writes the example with its imports pointed at this repository, imports it, returns what it logged. */
async function run(name: string, code: string): Promise<unknown[]> {
  mkdirSync(OUT, { recursive: true });
  const file = `${OUT}${name}.ts`;
  writeFileSync(file, code
    .replace("'@flashbulb/client/langgraph'", JSON.stringify(`${CLIENT}langgraph.ts`))
    .replace("'@flashbulb/client/ai'", JSON.stringify(`${CLIENT}ai.ts`))
    .replace("'@flashbulb/client'", JSON.stringify(`${CLIENT}index.ts`))
    .replace("'./model.ts'", JSON.stringify(`${OUT}model.ts`)));
  const logged: unknown[] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(...args));
  try {
    await import(`${file}?${Date.now()}`);
  } finally {
    spy.mockRestore();
  }
  return logged;
}

describe("docs/clients/typescript.md's examples", () => {
  it('LangGraph.js: a graph writes and searches through FlashbulbStore', async () => {
    const code = example('LangGraph.js');
    expect(code.split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(12);
    expect(await run('langgraph', code)).toEqual([['Alice drinks green tea']]);
  });

  it('AI SDK: a model remembers and recalls through flashbulbTools', async () => {
    writeFileSync(`${OUT}model.ts`, MOCK_MODEL);
    const code = example('Vercel AI SDK');
    expect(code.split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(12);
    const [text] = await run('ai-sdk', code);
    expect(text).toContain('Dana keeps bees');
    const stored = await new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey }).list();
    expect(stored.memories.map((m) => m.content)).toContain('Dana keeps bees');
  });
});

/** A scripted model: remember, then recall, then answer with the recall's first result. */
const MOCK_MODEL = `
import { MockLanguageModelV3 } from 'ai/test';
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
const call = (toolName: string, input: object) => ({ content: [{ type: 'tool-call' as const, toolCallId: toolName, toolName, input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage, warnings: [] });
export const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
    if (results.length === 0) return call('remember', { content: 'Dana keeps bees' });
    if (results.length === 1) return call('recall', { cue: 'who keeps bees?' });
    const last = results.at(-1);
    const output = last && last.type === 'tool-result' && last.output.type === 'json' ? (last.output.value as { results: Array<{ memory: { content: string } }> }) : undefined;
    return { content: [{ type: 'text' as const, text: output?.results[0]?.memory.content ?? 'nothing found' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] };
  },
});
`;
