/**
 * Text is valid Unicode everywhere (issue 23, item 2). Before the fix REST stored content holding
 * a lone UTF-16 surrogate (`"\ud800"`), and from then on every MCP answer carrying it held the
 * JSON escape `\ud800`, which strict parsers refuse: pydantic's, which the Python MCP SDK parses
 * messages with (`JSONRPCMessage.model_validate_json`), fails with "unexpected end of hex escape"; the
 * TypeScript SDK's client (JSON.parse) accepts it, so `strictJson` below parses as strictly as
 * pydantic: bytes must be UTF-8 and no string may hold a lone surrogate.
 *
 * Now every edge refuses such text naming the field (REST 400, gRPC INVALID_ARGUMENT, MCP
 * -32602, import lines), and text stored before the check is repaired on the way out of every
 * transport. A fast-check property sends arbitrary code-unit strings through REST, MCP and gRPC.
 */
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_ADMIN, DEFAULT_WORKSPACE } from '../../src/auth/principal.ts';
import { unicodeProblem } from '../../src/model/unicode.ts';
import { resolveCtx } from '../../src/verbs/context.ts';
import { remember } from '../../src/verbs/remember.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, failsWith, type GrpcClient } from '../helpers/grpc.ts';
import { subscribeSse, type SseEvent } from '../helpers/sse.ts';

const LONE = 'bad \ud800 text';
const fatal = new TextDecoder('utf-8', { fatal: true });

/** Parses a reply as strictly as pydantic: UTF-8 bytes, JSON, and no lone surrogate in any string or key. */
function strictJson(bytes: Uint8Array): unknown {
  const value: unknown = JSON.parse(fatal.decode(bytes));
  const problem = unicodeProblem('reply', value);
  if (problem !== null) throw new Error(problem);
  return value;
}

/** Every line of an NDJSON or SSE body, strictly. */
function strictLines(bytes: Uint8Array, prefix = ''): unknown[] {
  return fatal
    .decode(bytes)
    .split('\n')
    .filter((l) => l.startsWith(prefix) && l.length > prefix.length)
    .map((l) => strictJson(new TextEncoder().encode(l.slice(prefix.length))));
}

let t: TestApp;
let rpc: GrpcClient;

async function rest(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${t.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${t.adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: strictJson(new Uint8Array(await res.arrayBuffer())) };
}

let rpcId = 1;
async function mcp(method: string, params?: unknown): Promise<any> {
  const res = await fetch(`${t.base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${t.adminKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: rpcId++,
      method,
      ...(params === undefined ? {} : { params }),
    }),
  });
  return strictJson(new Uint8Array(await res.arrayBuffer()));
}

beforeAll(async () => {
  t = await startTestApp();
  rpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey } });
});
afterAll(async () => {
  rpc.close();
  await t.stop();
});

describe('the edges refuse text that is not valid Unicode, naming the field', () => {
  it('REST: content, context keys and values, entity_id, cue, a subscription feed', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['/v1/memories', { content: LONE }, /content is not valid Unicode/],
      [
        '/v1/memories',
        { content: 'ok', context: { topic: LONE } },
        /context\.topic is not valid Unicode/,
      ],
      [
        '/v1/memories',
        { content: 'ok', context: { ['k\udc00']: 1 } },
        /has a key that is not valid Unicode/,
      ],
      ['/v1/memories', { content: 'ok', entity_id: '\udbff' }, /entity_id is not valid Unicode/],
      ['/v1/recall', { cue: LONE, strategies: ['similarity'] }, /cue is not valid Unicode/],
    ];
    for (const [path, body, message] of cases) {
      const res = await rest('POST', path, body);
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      expect(res.json.error_code).toBe('invalid_input');
      expect(res.json.message).toMatch(message);
    }
    const { stream, id } = await subscribeSse(t.base, t.adminKey);
    const feed = await rest('POST', `/v1/subscribe/${id}/feed`, { text: LONE });
    expect(feed.status).toBe(400);
    expect(feed.json.message).toMatch(/text is not valid Unicode/);
    stream.destroy();
  });

  it('gRPC: a string field that is not UTF-8 is INVALID_ARGUMENT naming the field', async () => {
    // protobufjs writes the lone surrogate as ED A0 80, which is not UTF-8.
    const err = await failsWith(
      rpc.call('MemoryService', 'Remember', { content: LONE }),
      grpc.status.INVALID_ARGUMENT,
    );
    expect(err.details).toMatch(/^content is not valid UTF-8/);
    const cue = await failsWith(
      rpc.call('MemoryService', 'Recall', {
        cue: LONE,
        strategies: [{ strategy_type: 'SIMILARITY' }],
      }),
      grpc.status.INVALID_ARGUMENT,
    );
    expect(cue.details).toMatch(/^cue is not valid UTF-8/);
    // A real U+FFFD is valid text and is stored as it is.
    const ok = (await rpc.call('MemoryService', 'Remember', { content: 'a real \ufffd' })) as {
      memory: { content: string };
    };
    expect(ok.memory.content).toBe('a real \ufffd');
  });

  it('MCP: tool arguments get -32602 naming the argument', async () => {
    const reply = await mcp('tools/call', { name: 'remember', arguments: { content: LONE } });
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.message).toMatch(/params\.arguments\.content is not valid Unicode/);
  });

  it('NDJSON import: the line is refused, naming it', async () => {
    const line = JSON.stringify({
      memory: { memory_id: `${'0'.repeat(31)}1`, content: LONE, kind: 'episode' },
      versions: [],
      edges: [],
    });
    const res = await fetch(`${t.base}/v1/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/x-ndjson' },
      body: `${line}\n`,
    });
    const summary = strictJson(new Uint8Array(await res.arrayBuffer())) as {
      error_count: number;
      errors: Array<{ line: number; message: string }>;
    };
    expect(summary.error_count).toBe(1);
    expect(summary.errors[0]?.message).toMatch(/content is not valid Unicode/);
  });
});

describe('text stored before the check is repaired on the way out of every transport', () => {
  let id = '';
  let pushed: SseEvent[] = [];
  beforeAll(async () => {
    // What an older version stored: the verb below the edges takes it as it is.
    const ctx = resolveCtx(t.app.svc, ANONYMOUS_ADMIN, DEFAULT_WORKSPACE, { strict: true });
    const memory = await remember(ctx, {
      content: `stored ${LONE} long ago`,
      entity_id: 'entity-\udc00',
    });
    id = memory.id;
    const { stream, id: sub } = await subscribeSse(t.base, t.adminKey, { confidence_threshold: 0 });
    expect(
      (await rest('POST', `/v1/subscribe/${sub}/feed`, { text: 'stored bad text long ago' }))
        .status,
    ).toBeLessThan(300);
    await stream.waitForPushes(1);
    pushed = stream.named('message');
    stream.destroy();
  });

  it('the SSE push of it holds U+FFFD, not the escape of a lone surrogate', () => {
    expect(pushed.length).toBeGreaterThan(0);
    for (const ev of pushed) {
      expect(ev.data).not.toMatch(/\\ud[89a-f]/);
      expect(unicodeProblem('push', ev.json)).toBeNull();
    }
    expect(JSON.stringify(pushed.map((e) => e.json))).toContain('stored bad \ufffd text');
  });

  it('REST replies, the NDJSON export and an SSE feed are valid UTF-8 JSON holding U+FFFD', async () => {
    const got = await rest('GET', `/v1/memories/${id}`);
    expect(got.status, JSON.stringify(got.json)).toBe(200);
    expect(got.json.content).toBe('stored bad \ufffd text long ago');
    expect(got.json.entity_id).toBe('entity-\ufffd');
    expect((await rest('GET', '/v1/memories')).status).toBe(200);
    const recalled = await rest('POST', '/v1/recall', {
      cue: 'stored text',
      strategies: ['similarity'],
    });
    expect(recalled.status, JSON.stringify(recalled.json)).toBe(200);
    const exported = await fetch(`${t.base}/v1/export`, {
      headers: { authorization: `Bearer ${t.adminKey}` },
    });
    const lines = strictLines(new Uint8Array(await exported.arrayBuffer())) as Array<{
      memory: { content: string };
    }>;
    expect(lines.map((l) => l.memory.content)).toContain('stored bad \ufffd text long ago');
  });

  it('MCP: list_memories, recall, resources/list and resources/read parse strictly', async () => {
    for (const [name, args] of [
      ['list_memories', {}],
      ['recall', { cue: 'stored text' }],
      ['get_memory', { memory_id: id }],
    ] as const) {
      const reply = await mcp('tools/call', { name, arguments: args });
      expect(reply.result.isError, JSON.stringify(reply)).toBeFalsy();
      const inner = strictJson(new TextEncoder().encode(reply.result.content[0].text));
      expect(JSON.stringify(inner)).toContain('stored bad \ufffd text');
    }
    const listed = await mcp('resources/list', {});
    expect(listed.result.resources.map((r: { name: string }) => r.name)).toContain(
      'stored bad \ufffd text long ago',
    );
    const read = await mcp('resources/read', { uri: `flashbulb://memories/${id}` });
    expect(
      (strictJson(new TextEncoder().encode(read.result.contents[0].text)) as { content: string })
        .content,
    ).toBe('stored bad \ufffd text long ago');
  });

  it('gRPC: Get and Recall carry UTF-8 strings', async () => {
    const got = (await rpc.call('MemoryService', 'Get', { memory_id: Buffer.from(id, 'hex') })) as {
      memory: { content: string; entity_id: string };
    };
    expect(unicodeProblem('reply', got)).toBeNull();
    expect(got.memory.content).toBe('stored bad \ufffd text long ago');
    const recalled = await rpc.call('MemoryService', 'Recall', {
      cue: 'stored text',
      strategies: [{ strategy_type: 'SIMILARITY' }],
    });
    expect(unicodeProblem('reply', recalled)).toBeNull();
  });
});

describe('malformed MCP requests get -32602 naming the parameter', () => {
  it.each([
    ['tools/call', undefined, /params is required/],
    [
      'tools/call',
      { name: 'recall', arguments: ['not', 'an', 'object'] },
      /params\.arguments must be an object/,
    ],
    ['tools/call', { name: 5, arguments: {} }, /params\.name must be a string/],
    ['tools/call', { arguments: {} }, /params\.name must be a string/],
    ['resources/read', undefined, /params is required/],
    ['resources/read', {}, /params\.uri must be a string/],
    ['resources/list', { cursor: 5 }, /params\.cursor must be a string/],
    ['resources/list', { cursor: 'not-a-cursor' }, /params\.cursor/],
  ])('%s %j', async (method, params, message) => {
    const reply = await mcp(method, params);
    expect(reply.error?.code, JSON.stringify(reply)).toBe(-32602);
    expect(reply.error.message).toMatch(message);
  });
});

describe('property: arbitrary code-unit strings through every transport', () => {
  const codeUnits = fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
    minLength: 1,
    maxLength: 40,
  });

  it('every reply parses strictly; a string is refused exactly when it is not well formed', async () => {
    await fc.assert(
      fc.asyncProperty(codeUnits, async (s) => {
        const wellFormed = s.isWellFormed();
        const stored = await rest('POST', '/v1/memories', {
          content: s,
          context: { [s]: s },
          entity_id: s,
        });
        // A well-formed string may still be refused for another reason (blank content), never for its text.
        if (wellFormed && stored.status !== 201)
          expect(JSON.stringify(stored.json)).not.toMatch(/Unicode/);
        if (!wellFormed) expect(stored.json.message).toMatch(/is not valid Unicode/);
        const recalled = await rest('POST', '/v1/recall', { cue: s, strategies: ['similarity'] });
        if (!wellFormed) expect(recalled.json.message).toMatch(/\bcue is not valid Unicode/);
        else if (recalled.status !== 200)
          expect(JSON.stringify(recalled.json)).not.toMatch(/Unicode/); // a blank cue

        const tool = await mcp('tools/call', {
          name: 'remember',
          arguments: { content: s, entity_id: s },
        });
        if (wellFormed) expect(tool.error, JSON.stringify(tool)).toBeUndefined();
        else expect(tool.error?.code).toBe(-32602);

        const call = rpc.call('MemoryService', 'Remember', { content: s, entity_id: s }).then(
          (reply) => ({ ok: true as const, reply }),
          (err: grpc.ServiceError) => ({ ok: false as const, err }),
        );
        const out = await call;
        if (out.ok) {
          expect(wellFormed).toBe(true);
          expect(unicodeProblem('reply', out.reply)).toBeNull();
        } else if (!wellFormed) {
          expect(out.err.code).toBe(grpc.status.INVALID_ARGUMENT);
          expect(out.err.details).toMatch(/is not valid UTF-8/);
        } else {
          expect(`${out.err.code} ${out.err.message}`).not.toMatch(/UTF-8/);
        }
      }),
      { numRuns: 60, interruptAfterTimeLimit: 30_000 },
    );
    // Whatever was stored, listing it back is valid on REST and MCP.
    expect((await rest('GET', '/v1/memories?limit=1000')).status).toBe(200);
    expect((await mcp('resources/list', {})).result).toBeDefined();
  }, 90_000);
});
