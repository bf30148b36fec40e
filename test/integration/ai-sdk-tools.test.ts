/**
 * `flashbulbTools(client)` (@flashbulb/client/ai) against a live server: the tools are the MCP
 * server's (same names, descriptions, input schemas), and a model's tool calls made through the
 * AI SDK's own `generateText` — with its mock language model — reach the server and come back.
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flashbulbTools } from '../../clients/typescript/src/ai.ts';
import { FlashbulbClient } from '../../clients/typescript/src/index.ts';
import { MCP_TOOLS } from '../../clients/typescript/src/mcp-tools.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let client: FlashbulbClient;

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_REFLECT_ENABLED: 'false' });
  const ws = await new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey }).workspacesCreate({
    slug: 'ai-sdk',
  });
  client = new FlashbulbClient({ baseUrl: t.base, apiKey: ws.api_key });
});
afterAll(async () => t.stop());

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model that calls one tool with `input`, then answers with the text of the tool's result. */
function callingModel(toolName: string, input: object): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const last = options.prompt.at(-1);
      if (last?.role === 'tool') {
        const part = last.content[0];
        const output = part?.type === 'tool-result' ? JSON.stringify(part.output) : 'no result';
        return {
          content: [{ type: 'text', text: output }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: USAGE,
          warnings: [],
        };
      }
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `call-${toolName}`,
            toolName,
            input: JSON.stringify(input),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

describe('flashbulbTools (AI SDK)', () => {
  it('offers the MCP tools as the server lists them', async () => {
    const res = await t.req('POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(res.status, res.text).toBe(200);
    const listed = (
      res.body.result.tools as Array<{ name: string; description: string; inputSchema: object }>
    ).map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
    expect(
      MCP_TOOLS.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    ).toEqual(listed);
    const tools = flashbulbTools(client);
    expect(Object.keys(tools).sort()).toEqual(listed.map((x) => x.name).sort());
    expect(Object.keys(flashbulbTools(client, { readOnly: true })).sort()).toEqual([
      'explore_graph',
      'get_insights',
      'get_memory',
      'list_entities',
      'list_memories',
      'prime',
      'recall',
    ]);
    expect(Object.keys(flashbulbTools(client, { exclude: ['forget'] }))).not.toContain('forget');
  });

  it('a model remembers, recalls and forgets through generateText', async () => {
    const tools = flashbulbTools(client);
    const stored = await generateText({
      model: callingModel('remember', {
        content: 'Dana keeps bees on her roof',
        entity_id: 'dana',
      }),
      tools,
      prompt: 'Remember that Dana keeps bees.',
      stopWhen: stepCountIs(3),
    });
    const call = stored.steps[0]?.toolResults[0];
    expect(call?.toolName).toBe('remember');
    const memoryId = (call!.output as { memory_id: string }).memory_id;
    expect((await client.get(memoryId)).content).toBe('Dana keeps bees on her roof');

    const recalled = await generateText({
      model: callingModel('recall', { cue: 'who keeps bees?', top_k: 3 }),
      tools,
      prompt: 'Who keeps bees?',
      stopWhen: stepCountIs(3),
    });
    expect(recalled.text).toContain('Dana keeps bees on her roof');

    const forgotten = await generateText({
      model: callingModel('forget', { memory_ids: [memoryId] }),
      tools,
      prompt: 'Forget it.',
      stopWhen: stepCountIs(3),
    });
    expect(forgotten.text).toContain('"forgotten_count":1');
    await expect(client.get(memoryId)).rejects.toMatchObject({ code: 'not_found' });
  });

  it("minRelevance floors recall and prime when the model gives none; the model's own min_relevance wins", async () => {
    const ws = await new FlashbulbClient({ baseUrl: t.base, apiKey: t.adminKey }).ensureWorkspace(
      'ai-sdk-floor',
    );
    await ws.remember({ content: 'Erin grows tomatoes on her balcony' });
    const recall = async (options: Parameters<typeof flashbulbTools>[1], input: object) => {
      const out = await generateText({
        model: callingModel('recall', input),
        tools: flashbulbTools(ws, options),
        prompt: 'x',
        stopWhen: stepCountIs(3),
      });
      return (out.steps[0]!.toolResults[0]!.output as { results: Array<{ relevance: number }> })
        .results;
    };
    const noise = await recall({}, { cue: 'zzzz qqqq' });
    expect(noise.length, 'without a floor, recall answers a nonsense cue').toBe(1);
    const good =
      (await recall({}, { cue: 'Erin grows tomatoes on her balcony' }))[0]?.relevance ?? 0;
    const floor = ((noise[0]?.relevance ?? 0) + good) / 2;
    expect(await recall({ minRelevance: floor }, { cue: 'zzzz qqqq' })).toEqual([]);
    expect(
      await recall({ minRelevance: floor }, { cue: 'Erin grows tomatoes on her balcony' }),
    ).toHaveLength(1);
    expect(
      await recall({ minRelevance: floor }, { cue: 'zzzz qqqq', min_relevance: 0 }),
    ).toHaveLength(1);
    const sent: unknown[] = [];
    const recording = new FlashbulbClient({
      baseUrl: t.base,
      apiKey: t.adminKey,
      workspace: 'ai-sdk-floor',
      fetch: async (url, init) => {
        sent.push(JSON.parse(String(init?.body)));
        return fetch(url, init);
      },
    });
    await generateText({
      model: callingModel('prime', { entity_id: 'erin' }),
      tools: flashbulbTools(recording, { minRelevance: 0.3 }),
      prompt: 'x',
      stopWhen: stepCountIs(3),
    });
    expect(sent).toEqual([{ entity_id: 'erin', min_relevance: 0.3 }]);
  });

  it('a failed call reaches the model as a tool error naming the problem', async () => {
    const out = await generateText({
      model: callingModel('get_memory', { memory_id: '00000000000000000000000000000000' }),
      tools: flashbulbTools(client),
      prompt: 'x',
      stopWhen: stepCountIs(3),
    });
    const error = out.steps[0]?.content.find((p) => p.type === 'tool-error');
    expect(error && 'error' in error ? String(error.error) : '').toMatch(/not found/i);
  });
});
