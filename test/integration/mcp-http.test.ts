/**
 * MCP over Streamable HTTP at /mcp, driven by the SDK's own Client: the tool list with schemas
 * and annotations, every tool called, resources listed and read, errors as tool errors carrying
 * the Flashbulb code, authentication, and workspace isolation (the key decides the workspace).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let wsKey: string;
const clients: Client[] = [];

async function connect(path: string, key: string | null): Promise<Client> {
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  const transport = new StreamableHTTPClientTransport(new URL(path, t.base), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'flashbulb-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Calls a tool that must succeed; returns its structured content. */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<any> {
  const res = await client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
  expect(JSON.parse((res.content as Array<{ text: string }>)[0]?.text ?? '')).toEqual(
    res.structuredContent,
  );
  return res.structuredContent;
}

/** Calls a tool that must fail; returns the parsed {error_code, message}. */
async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ error_code: string; message: string }> {
  const res = await client.callTool({ name, arguments: args });
  expect(res.isError).toBe(true);
  return JSON.parse((res.content as Array<{ text: string }>)[0]?.text ?? '');
}

beforeAll(async () => {
  t = await startTestApp();
  const created = await t.req('POST', '/v1/workspaces', { body: { slug: 'mcp-a' } });
  wsKey = created.body.api_key;
  expect((await t.req('POST', '/v1/workspaces', { body: { slug: 'mcp-b' } })).status).toBe(201);
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t.stop();
});

describe('MCP over Streamable HTTP', () => {
  it('lists every tool with input and output schemas, annotations and a description', async () => {
    const client = await connect('/mcp', wsKey);
    expect(client.getServerVersion()?.name).toBe('flashbulb');
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([
      'add_messages',
      'explore_graph',
      'forget',
      'get_insights',
      'get_memory',
      'list_entities',
      'list_memories',
      'prime',
      'recall',
      'reflect',
      'remember',
      'revise_memory',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description?.length).toBeGreaterThan(60);
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
      expect(JSON.stringify(tool.outputSchema)).not.toContain('$ref');
    }
    const byName = new Map(tools.map((x) => [x.name, x]));
    expect(byName.get('forget')?.annotations).toMatchObject({
      destructiveHint: true,
      readOnlyHint: false,
    });
    expect(byName.get('recall')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('remember')?.inputSchema.required).toEqual(['content']);
    expect(Object.keys(byName.get('recall')?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['cue', 'strategies', 'entity_id', 'top_k', 'time_range']),
    );
  });

  it('calls every tool against the workspace of the key', async () => {
    const client = await connect('/mcp', wsKey);
    const first = await call(client, 'remember', {
      content: 'Alice prefers green tea in the morning',
      entity_id: 'alice',
      importance: 0.8,
    });
    expect(first.memory_id).toMatch(/^[0-9a-f]{32}$/);
    const second = await call(client, 'remember', {
      content: 'Alice switched to coffee after her trip',
      entity_id: 'alice',
      edges: [{ target_id: first.memory_id, edge_type: 'followed_by' }],
    });
    const recalled = await call(client, 'recall', {
      cue: 'what does Alice drink',
      entity_id: 'alice',
      top_k: 5,
    });
    expect(recalled.results.map((r: any) => r.memory.memory_id)).toEqual(
      expect.arrayContaining([first.memory_id, second.memory_id]),
    );
    const temporal = await call(client, 'recall', {
      cue: 'alice',
      strategies: ['temporal'],
      time_range: { start_us: 0 },
    });
    expect(temporal.results[0].strategy_details[0].strategy).toBe('temporal');
    expect((await call(client, 'get_memory', { memory_id: first.memory_id })).content).toBe(
      'Alice prefers green tea in the morning',
    );
    const page = await call(client, 'list_memories', { entity_id: 'alice', limit: 1 });
    expect(page.memories).toHaveLength(1);
    expect(page.next_cursor).not.toBeNull();
    const revised = await call(client, 'revise_memory', {
      memory_id: first.memory_id,
      importance: 0.3,
    });
    expect(revised.importance).toBe(0.3);
    expect((await call(client, 'prime', { entity_id: 'alice' })).results.length).toBe(2);
    const g = await call(client, 'explore_graph', { center_id: second.memory_id });
    expect(g.edges).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          source_id: second.memory_id,
          target_id: first.memory_id,
          edge_type: 'followed_by',
        }),
      ]),
    );
    expect((await call(client, 'list_entities')).entities).toEqual(['alice']);
    expect(await call(client, 'reflect', { entity_id: 'alice' })).toMatchObject({
      insights_created: expect.any(Number),
    });
    expect((await call(client, 'get_insights', { entity_id: 'alice' })).insights).toEqual(
      expect.any(Array),
    );
    expect((await call(client, 'forget', { memory_ids: [second.memory_id] })).forgotten_count).toBe(
      1,
    );
    // The same memories, seen over REST with the same key: one workspace, one truth.
    const rest = await t.req('GET', '/v1/memories?entity_id=alice', { key: wsKey });
    const ids = rest.body.memories.map((m: any) => m.memory_id);
    expect(ids).toContain(first.memory_id);
    expect(ids).not.toContain(second.memory_id);
  });

  it('exposes memories as resources, listed and read by flashbulb://memories/<id>', async () => {
    const client = await connect('/mcp', wsKey);
    const m = await call(client, 'remember', { content: 'a memory to read as a resource' });
    const { resources } = await client.listResources();
    const uri = `flashbulb://memories/${m.memory_id}`;
    expect(resources.map((r) => r.uri)).toContain(uri);
    const read = await client.readResource({ uri });
    expect(read.contents[0]?.mimeType).toBe('application/json');
    expect(
      JSON.parse(String((read.contents[0] as { text?: string } | undefined)?.text)),
    ).toMatchObject({ memory_id: m.memory_id, content: 'a memory to read as a resource' });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates[0]?.uriTemplate).toBe('flashbulb://memories/{memory_id}');
    await expect(
      client.readResource({ uri: 'flashbulb://memories/00000000000000000000000000000000' }),
    ).rejects.toMatchObject({ code: -32002 });
  });

  it('answers bad arguments and unknown memories with tool errors carrying the Flashbulb code', async () => {
    const client = await connect('/mcp', wsKey);
    expect(await callError(client, 'remember', { content: 42 })).toEqual({
      error_code: 'invalid_input',
      message: 'content must be string',
    });
    expect((await callError(client, 'remember', { content: '  ' })).message).toMatch(
      /content must not be empty/,
    );
    expect((await callError(client, 'get_memory', { memory_id: '0'.repeat(32) })).error_code).toBe(
      'not_found',
    );
    expect((await callError(client, 'forget', {})).message).toMatch(
      /give at least one of memory_ids, entity_id, staleness_threshold_us/,
    );
  });

  it('refuses a missing or wrong key', async () => {
    await expect(connect('/mcp', null)).rejects.toThrow(/401|unauthenticated/i);
    await expect(connect('/mcp', 'fb_live_not-a-key')).rejects.toThrow(/401|unauthenticated/i);
  });

  it('keeps a workspace key in its workspace; admin keys reach others through the prefix', async () => {
    const admin = await connect('/v1/workspaces/mcp-b/mcp', t.adminKey);
    const inB = await call(admin, 'remember', { content: 'only in workspace b' });
    const a = await connect('/mcp', wsKey);
    expect((await callError(a, 'get_memory', { memory_id: inB.memory_id })).error_code).toBe(
      'not_found',
    );
    expect(
      (await call(a, 'recall', { cue: 'only in workspace b' })).results.map(
        (r: any) => r.memory.memory_id,
      ),
    ).not.toContain(inB.memory_id);
    await expect(connect('/v1/workspaces/mcp-b/mcp', wsKey)).rejects.toThrow(/403|forbidden/i);
    const b = await t.req('GET', '/v1/memories', { key: t.adminKey, headers: {} });
    expect(b.body.memories.map((m: any) => m.memory_id)).not.toContain(inB.memory_id);
    expect(
      (await t.req('GET', '/v1/workspaces/mcp-b/memories')).body.memories.map(
        (m: any) => m.memory_id,
      ),
    ).toEqual([inB.memory_id]);
  });
});
