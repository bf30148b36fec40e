/**
 * An OpenAI-compatible language model for reflection (DESIGN.md 9; FLASHBULB_LLM_BASE_URL,
 * FLASHBULB_LLM_MODEL, FLASHBULB_LLM_API_KEY): a fake chat endpoint on a real socket (node:http,
 * port 0) answers POST {base}/chat/completions. With it, an insight's text is the model's
 * (context.method 'llm'), and the request is a proper chat call (model, system + user messages,
 * Bearer key). When the model fails — HTTP 500, a reply without JSON, a body that is not JSON, a
 * refusal ("valid": false), a timeout — reflection still succeeds with the extractive text and
 * flashbulb_llm_failures_total counts the failure. Uncertain contradiction candidates get the
 * model's verdict on reflect.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const THEMES: Record<string, string[]> = {
  garden: [
    'Garden tomato plants need garden watering each morning.',
    'Garden compost feeds the garden tomato beds.',
    'Garden slugs attacked the garden tomato seedlings.',
    'Garden basil grows beside garden tomato plants.',
    'Raised garden beds hold garden tomato vines.',
    'Garden drip hose waters garden tomato roots.',
  ],
  database: [
    'Postgres database query slow: missing Postgres index.',
    'Postgres index made the database query faster.',
    'Nightly Postgres database vacuum reclaims database space.',
    'Postgres query plan showed a database sequential scan.',
    'Postgres database replica lagged behind the primary database.',
    'Slow Postgres database queries are logged.',
  ],
};

type Mode = 'ok' | 'error500' | 'prose' | 'not-json' | 'invalid' | 'slow';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

const MODEL = 'fake-model-1';
const API_KEY = 'sk-fake-0123456789';
const TIMEOUT_MS = 800;

let mode: Mode = 'ok';
let seen: Seen[] = [];
let replies: string[] = [];
let fake: Server;
let t: TestApp;
let n = 0;

/** The fake model: an insight naming how many memories it read and the first of them; a fixed verdict for contradiction prompts. */
function answer(body: any): { status: number; text: string } {
  if (mode === 'error500')
    return { status: 500, text: JSON.stringify({ error: { message: 'the model is on fire' } }) };
  if (mode === 'not-json') return { status: 200, text: '<html>Bad gateway</html>' };
  const system = String(body?.messages?.[0]?.content ?? '');
  const user = String(body?.messages?.[1]?.content ?? '');
  let content: string;
  if (/conflict/i.test(system)) {
    content = JSON.stringify({ verdict: 'contradiction', confidence: 0.93 });
  } else {
    const lines = user.split('\n').filter((l) => /^\d+\. /.test(l));
    const insight = `LLM-INSIGHT ${replies.length + 1}: ${lines.length} memories, led by "${(lines[0] ?? '').replace(/^\d+\. /, '')}"`;
    replies.push(insight);
    content =
      mode === 'prose'
        ? 'I am sorry, but I cannot summarise these memories.'
        : mode === 'invalid'
          ? JSON.stringify({ insight: '', confidence: 0.1, valid: false })
          : `Here you go:\n\`\`\`json\n${JSON.stringify({ insight, confidence: 0.9, valid: true })}\n\`\`\``;
  }
  return {
    status: 200,
    text: JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    }),
  };
}

beforeAll(async () => {
  fake = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const reply = (): void => {
        const { status, text } = answer(body);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(text);
      };
      if (mode === 'slow') setTimeout(reply, TIMEOUT_MS * 3).unref();
      else reply();
    });
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  const port = (fake.address() as AddressInfo).port;
  t = await startTestApp(
    {
      llmBaseUrl: `http://127.0.0.1:${port}/v1`,
      llmModel: MODEL,
      llmApiKey: API_KEY,
      llmTimeoutMs: TIMEOUT_MS,
    },
    { FLASHBULB_CONTRADICTIONS_ENABLED: 'true' },
  );
});
afterAll(async () => {
  await t?.stop();
  fake?.closeAllConnections();
  await new Promise((r) => fake?.close(r));
});
beforeEach(() => {
  mode = 'ok';
  seen = [];
  replies = [];
});

type Req = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any; headers: Headers; text: string }>;

async function workspaceWithThemes(): Promise<{ req: Req; contentOf: Map<string, string> }> {
  const slug = `llm-${++n}-${Date.now().toString(36)}`;
  const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.api_key as string;
  const req: Req = (method, path, body) =>
    t.req(method, path, body === undefined ? { key } : { key, body });
  const contentOf = new Map<string, string>();
  for (const texts of Object.values(THEMES)) {
    for (const content of texts) {
      const res = await req('POST', '/v1/memories', { content });
      expect(res.status, res.text).toBe(201);
      contentOf.set(res.body.memory_id, content);
    }
  }
  return { req, contentOf };
}

async function llmFailures(): Promise<number> {
  const text = (await t.req('GET', '/v1/metrics')).text;
  const m = /^flashbulb_llm_failures_total\{purpose="insight"\} (\S+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

/** Reflects and checks that every insight fell back to the extractive text. */
async function expectExtractiveFallback(): Promise<void> {
  const ws = await workspaceWithThemes();
  const before = await llmFailures();
  const res = await ws.req('POST', '/v1/reflect', {});
  expect(res.status, res.text).toBe(200);
  expect(res.body.insights_created).toBeGreaterThanOrEqual(1);
  const insights = (await ws.req('GET', '/v1/insights')).body as any[];
  expect(insights).toHaveLength(res.body.insights_created);
  for (const ins of insights) {
    expect(ins.context.method).toBe('extractive');
    expect(ins.content).not.toContain('LLM-INSIGHT');
    expect(ins.content).toContain('related memories');
    expect(ins.source_memory_ids.length).toBeGreaterThanOrEqual(3);
  }
  expect(seen.length, 'the model was asked').toBeGreaterThanOrEqual(insights.length);
  expect(await llmFailures()).toBe(before + insights.length);
}

describe('reflection with an OpenAI-compatible model', () => {
  it('writes the model’s insight text (method llm) from a well-formed chat request', async () => {
    const ws = await workspaceWithThemes();
    const failuresBefore = await llmFailures();
    const res = await ws.req('POST', '/v1/reflect', {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.insights_created).toBeGreaterThanOrEqual(1);
    const insights = (await ws.req('GET', '/v1/insights')).body as any[];
    expect(insights).toHaveLength(res.body.insights_created);
    for (const ins of insights) {
      expect(replies, `not the model's text: ${ins.content}`).toContain(ins.content);
      expect(ins.context.method).toBe('llm');
      expect(ins.context.confidence).toBeGreaterThan(0);
      expect(ins.context.confidence).toBeLessThanOrEqual(1);
      expect(ins.kind).toBe('insight');
      // The model read this insight's own sources: it names one of them.
      const led = /led by "(.*)"$/.exec(ins.content)?.[1];
      expect(ins.source_memory_ids.map((id: string) => ws.contentOf.get(id))).toContain(led);
    }
    // One chat call per insight, each a proper OpenAI-style request.
    const calls = seen.filter((s) => !/conflict/i.test(String(s.body?.messages?.[0]?.content)));
    expect(calls).toHaveLength(insights.length);
    for (const call of calls) {
      expect(call.method).toBe('POST');
      expect(call.url).toBe('/v1/chat/completions');
      expect(call.headers['authorization']).toBe(`Bearer ${API_KEY}`);
      expect(call.headers['content-type']).toMatch(/^application\/json/);
      expect(call.body.model).toBe(MODEL);
      expect(call.body.messages).toHaveLength(2);
      expect(call.body.messages[0].role).toBe('system');
      expect(call.body.messages[0].content).toMatch(/insight/i);
      expect(call.body.messages[1].role).toBe('user');
      const statements = [...ws.contentOf.values()].filter((c) =>
        call.body.messages[1].content.includes(c),
      );
      expect(statements.length).toBeGreaterThanOrEqual(3);
    }
    expect(await llmFailures()).toBe(failuresBefore);
  });

  it('falls back to the extractive insight when the endpoint answers 500', async () => {
    mode = 'error500';
    await expectExtractiveFallback();
  });

  it('falls back when the reply holds no JSON', async () => {
    mode = 'prose';
    await expectExtractiveFallback();
  });

  it('falls back when the response body is not JSON at all', async () => {
    mode = 'not-json';
    await expectExtractiveFallback();
  });

  it('falls back when the model declares the group has no theme (valid: false, empty insight)', async () => {
    mode = 'invalid';
    await expectExtractiveFallback();
  });

  it(`falls back when the model does not answer within FLASHBULB_LLM_TIMEOUT_MS (${TIMEOUT_MS} ms)`, async () => {
    mode = 'slow';
    await expectExtractiveFallback();
  });

  it('an uncertain contradiction candidate gets the model’s verdict on reflect', async () => {
    const slug = `llm-contra-${Date.now().toString(36)}`;
    const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
    const key = created.body.api_key as string;
    const older = (
      await t.req('POST', '/v1/memories', {
        key,
        body: { content: 'The chess club has 32 members.' },
      })
    ).body.memory_id as string;
    const newer = (
      await t.req('POST', '/v1/memories', {
        key,
        body: { content: 'The chess club has 48 paying adult junior members.' },
      })
    ).body.memory_id as string;
    let pending: any[] = [];
    await until(
      async () =>
        (pending = (await t.req('POST', '/v1/contradictions/prepare', { key })).body).length > 0,
      { what: 'a pending contradiction', deadlineMs: 2_500, everyMs: 50 },
    ).catch(() => undefined);
    expect(pending).toHaveLength(1);
    const res = await t.req('POST', '/v1/reflect', { key, body: {} });
    expect(res.status, res.text).toBe(200);
    const judged = seen.filter((s) => /conflict/i.test(String(s.body?.messages?.[0]?.content)));
    expect(judged).toHaveLength(1);
    expect(judged[0]?.body.messages[1].content).toContain('The chess club has 32 members.');
    expect(judged[0]?.body.messages[1].content).toContain('48 paying adult junior members');
    expect((await t.req('POST', '/v1/contradictions/prepare', { key })).body).toEqual([]);
    const edges = (await t.req('GET', `/v1/memories/${newer}/edges`, { key })).body;
    expect(
      edges.outgoing.filter((e: any) => e.edge_type === 'contradicts').map((e: any) => e.target_id),
    ).toEqual([older]);
    expect(
      edges.incoming.filter((e: any) => e.edge_type === 'contradicts').map((e: any) => e.source_id),
    ).toEqual([older]);
  });
});
