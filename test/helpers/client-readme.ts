/**
 * The TypeScript client's README examples (clients/typescript/README.md), for the tests that run
 * them against a live server: in the repository (client-examples.test.ts) and from the packed
 * tarball in an empty project (client-packages.test.ts). A complete program is a `ts` block that
 * begins with an import; each has a check of what it prints, keyed by the section it sits in.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const CLIENT_README = fileURLToPath(
  new URL('../../clients/typescript/README.md', import.meta.url),
);

export interface ReadmeExample {
  /** The `##` heading above the block. */
  section: string;
  /** A file name for it: the heading in lower case, non-letters as dashes. */
  name: string;
  code: string;
}

/** Every complete program of the README, in order. */
export function readmeExamples(): ReadmeExample[] {
  const out: ReadmeExample[] = [];
  let section = '';
  const text = readFileSync(CLIENT_README, 'utf8');
  for (const part of text.split(/^(## .*)$/m)) {
    if (part.startsWith('## ')) {
      section = part.slice(3).trim();
      continue;
    }
    for (const [, code] of part.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
      if (code?.startsWith('import '))
        out.push({
          section,
          name: section
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-|-$/g, ''),
          code,
        });
    }
  }
  return out;
}

/** What each section's example prints (its stdout, as lines), run for the first time or again. */
export const EXPECTED: Record<string, (lines: string[]) => void> = {
  Quickstart: (lines) => expect(lines[0]).toContain('Lisbon'),
  Conversations: (lines) => expect(lines).toEqual(['2 true']),
  'LangGraph.js': (lines) => expect(lines).toEqual(["[ 'Alice drinks green tea' ]"]),
  'Vercel AI SDK': (lines) => expect(lines).toEqual(['Dana keeps bees']),
};

/** `./model.ts` for the AI SDK example: a scripted model that remembers, recalls, then answers with the recall's first result. */
export const MOCK_MODEL = `
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
