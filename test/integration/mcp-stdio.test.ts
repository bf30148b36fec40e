/**
 * `flashbulb mcp` on stdio, driven by the SDK's Client as an MCP host would start it: relaying to
 * a running server with FLASHBULB_URL + FLASHBULB_API_KEY, and embedded on a data directory.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { CLI, ROOT, ensureBuilt } from '../helpers/child.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let wsKey: string;

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('FLASHBULB_') && v !== undefined) env[k] = v;
  return env;
}

async function spawnMcp(args: string[], env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    env: { ...baseEnv(), ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'flashbulb-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const res = await client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
  return res.structuredContent;
}

beforeAll(async () => {
  ensureBuilt();
  t = await startTestApp();
  wsKey = (await t.req('POST', '/v1/workspaces', { body: { slug: 'stdio-ws' } })).body.api_key;
});
afterAll(async () => t.stop());

describe('flashbulb mcp (stdio)', () => {
  it('answers a message over its read limit with an error naming it, and goes on relaying; ends with 0 when stdin closes', async () => {
    const relay = spawn(process.execPath, [CLI, 'mcp'], {
      env: { ...baseEnv(), FLASHBULB_URL: t.base, FLASHBULB_API_KEY: wsKey },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    relay.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    relay.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    relay.stdin.on('error', () => undefined); // a relay that died is seen in the replies it never sends
    const exited = new Promise<number | null>((resolve) =>
      relay.once('exit', (code) => resolve(code)),
    );
    const replies = (): Array<{ id: unknown; result?: any; error?: { message: string } }> =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    const reply = (
      id: number,
    ): Promise<{ id: unknown; result?: any; error?: { message: string } }> =>
      until(() => replies().find((r) => r.id === id), {
        what: `the reply to request ${id}; stderr: ${err}`,
        deadlineMs: 30_000,
      });
    const send = (message: unknown): void => void relay.stdin.write(`${JSON.stringify(message)}\n`);
    const remember = (id: number, content: string): unknown => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'remember', arguments: { content } },
    });
    try {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      expect((await reply(1)).result?.protocolVersion).toBeDefined();
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      // 20 MiB: past the relay's 10 MiB read limit (the SDK's own transport closed itself here and the relay exited 0).
      send(remember(2, 'x'.repeat(20 * 1024 * 1024)));
      expect((await reply(2)).error?.message).toMatch(
        /the message of \d+ bytes is over the limit of 10485760 bytes a message on stdio may have/,
      );
      expect(err).toMatch(/flashbulb mcp: the message of \d+ bytes is over the limit/);
      // 2 MiB: read, relayed, and refused by the server's body limit.
      send(remember(3, 'y'.repeat(2 * 1024 * 1024)));
      expect((await reply(3)).error?.message).toMatch(/payload_too_large|413/);
      send(remember(4, 'remembered after the oversized message'));
      expect((await reply(4)).result?.structuredContent?.content).toBe(
        'remembered after the oversized message',
      );
      relay.stdin.end();
      expect(await exited).toBe(0);
    } finally {
      relay.kill();
    }
  });

  it('relays to a running server, in the workspace of FLASHBULB_API_KEY', async () => {
    const client = await spawnMcp([], { FLASHBULB_URL: t.base, FLASHBULB_API_KEY: wsKey });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toContain('remember');
      const m = await call(client, 'remember', { content: 'stored through the stdio relay' });
      const hits = await call(client, 'recall', { cue: 'stdio relay' });
      expect(hits.results[0].memory.memory_id).toBe(m.memory_id);
      const rest = await t.req('GET', `/v1/memories/${m.memory_id}`, { key: wsKey });
      expect(rest.body.content).toBe('stored through the stdio relay');
      const read = await client.readResource({ uri: `flashbulb://memories/${m.memory_id}` });
      expect(
        JSON.parse(String((read.contents[0] as { text?: string } | undefined)?.text)).memory_id,
      ).toBe(m.memory_id);
    } finally {
      await client.close();
    }
  });

  it("works as configured by docs/clients/mcp.md's snippet, started from another directory", async () => {
    const page = readFileSync(join(ROOT, 'docs/clients/mcp.md'), 'utf8');
    const block = [...page.matchAll(/```json\n([\s\S]*?)```/g)]
      .map((m) => m[1] ?? '')
      .find((b) => b.includes('"command": "node"'));
    const server = JSON.parse(block ?? '{}').mcpServers.flashbulb as {
      command: string;
      args: string[];
      env: Record<string, string>;
    };
    expect(server.env.FLASHBULB_URL).toBe('http://localhost:6381');
    expect(server.args).toEqual(['/path/to/flashbulb/dist/cli.js', 'mcp']);
    const args = server.args.map((a) => a.replace('/path/to/flashbulb/dist/cli.js', CLI));
    const env = { ...baseEnv(), ...server.env, FLASHBULB_URL: t.base, FLASHBULB_API_KEY: wsKey };
    const cwd = mkdtempSync(join(tmpdir(), 'flashbulb-mcp-host-'));
    const transport = new StdioClientTransport({
      command: server.command,
      args,
      env,
      cwd,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'readme-host', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect((await client.listTools()).tools).toHaveLength(12);
      const m = await call(client, 'remember', { content: 'configured from the docs' });
      expect(
        (await call(client, 'recall', { cue: 'configured from the docs' })).results[0].memory
          .memory_id,
      ).toBe(m.memory_id);
    } catch (err) {
      throw new Error(`${String(err)}; the command's stderr: ${stderr || '(empty)'}`);
    } finally {
      await client.close();
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('reports a bad key as an error instead of hanging', async () => {
    await expect(
      spawnMcp([], { FLASHBULB_URL: t.base, FLASHBULB_API_KEY: 'fb_live_wrong' }),
    ).rejects.toThrow(/401|unauthenticated/i);
  });

  it('runs embedded on a data directory, and what it stores is there on the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashbulb-mcp-'));
    const env = {
      FLASHBULB_EMBEDDER: 'hash',
      FLASHBULB_SHARDS: '1',
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
    };
    try {
      const first = await spawnMcp(['--data-dir', dir], env);
      const m = await call(first, 'remember', {
        content: 'embedded memory survives restarts',
        entity_id: 'me',
      });
      await first.close();
      const second = await spawnMcp(['--data-dir', dir], env);
      try {
        expect((await call(second, 'get_memory', { memory_id: m.memory_id })).content).toBe(
          'embedded memory survives restarts',
        );
        expect((await call(second, 'list_entities', {})).entities).toEqual(['me']);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
