/**
 * Bounded replies (issue 48, item 1), the probe's batch amplification at a small scale: a JSON-RPC
 * batch of `list_memories` calls that together would pass the per-request reply budget is refused
 * per call (a JSON-RPC error naming the limit) while the rest of the batch is answered; a large
 * result is sent once; REST refuses a recall over the budget with 413, while a list pages at it
 * (a shorter page and its cursor); and while 32 such batches
 * run at once, another workspace's requests are all answered and the server process lives. Its
 * latency during the storm is logged, not asserted (native-bench/mcp-batch.ts measures it at the
 * probe's full size).
 */
import { loadavg, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killQuietly, startServer, type ChildServer } from '../helpers/child.ts';

const KB = 1024;
const PER_REQUEST = 256 * KB;
const MEMORY_BYTES = 8 * KB;

interface RpcReply {
  id: number;
  result?: {
    structuredContent?: { memories?: unknown[] };
    content?: Array<{ text: string }>;
    isError?: boolean;
  };
  error?: { code: number; message: string; data?: { error_code: string; limit: string } };
}

let server: ChildServer;
let dataDir: string;

async function rest(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, text: await res.text() };
}

async function batch(
  ws: string,
  calls: Array<{ name: string; arguments: Record<string, unknown> }>,
): Promise<{ status: number; bytes: number; replies: RpcReply[] }> {
  const body = calls.map((c, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: c,
  }));
  const res = await fetch(`${server.base}/v1/workspaces/${ws}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  // A batch of one is answered with the one reply, not an array of it.
  const parsed = res.status === 200 ? (JSON.parse(text) as RpcReply | RpcReply[]) : [];
  const replies = (Array.isArray(parsed) ? parsed : [parsed]).sort((a, b) => a.id - b.id);
  return { status: res.status, bytes: Buffer.byteLength(text), replies };
}

const list = (limit: number): { name: string; arguments: Record<string, unknown> } => ({
  name: 'list_memories',
  arguments: { limit },
});
/** A recall of `topK` memories (every one matches: the cue is a word each holds). */
const recallOf = (topK: number): { name: string; arguments: Record<string, unknown> } => ({
  name: 'recall',
  arguments: { cue: 'memory', top_k: topK },
});

beforeAll(async () => {
  ensureBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-reply-budget-'));
  server = await startServer({
    dataDir,
    env: {
      FLASHBULB_MAX_REPLY_BYTES: String(PER_REQUEST),
      FLASHBULB_MAX_REPLY_BYTES_PER_WORKSPACE: String(1024 * KB),
      FLASHBULB_MAX_REPLY_BYTES_IN_FLIGHT: String(4096 * KB),
      FLASHBULB_RATE_LIMIT_READS: '0',
      FLASHBULB_RATE_LIMIT_WRITES: '0',
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
    },
  });
  for (let i = 0; i < 40; i++) {
    const res = await rest('POST', '/v1/workspaces/noisy/memories', {
      content: `memory ${i} ${'n'.repeat(MEMORY_BYTES)}`,
    });
    expect(res.status, res.text).toBe(201);
  }
  expect(
    (
      await rest('POST', '/v1/workspaces/quiet/memories', {
        content: 'the quiet tenant remembers tea',
      })
    ).status,
  ).toBe(201);
}, 120_000);

afterAll(async () => {
  await killQuietly(server);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('bounded replies', () => {
  it("refuses, per call, the calls of a batch that would pass the request's budget, and answers the rest", async () => {
    const { status, replies } = await batch('noisy', [
      list(20),
      recallOf(40),
      { name: 'list_entities', arguments: {} },
      list(20),
    ]);
    expect(status).toBe(200);
    expect(replies.map((r) => r.id)).toEqual([1, 2, 3, 4]);
    expect(replies[0]?.result?.structuredContent?.memories).toHaveLength(20);
    // Alone over the budget (40 memories of 8 KB).
    expect(replies[1]?.error?.code).toBe(-32010);
    expect(replies[1]?.error?.data).toEqual({
      error_code: 'payload_too_large',
      limit: 'FLASHBULB_MAX_REPLY_BYTES',
    });
    expect(replies[1]?.error?.message).toMatch(
      /, over the limit of 262144 bytes per request \(FLASHBULB_MAX_REPLY_BYTES\)/,
    );
    expect(replies[1]?.error?.message).not.toMatch(/together/);
    expect(replies[2]?.result?.isError).toBeFalsy();
    // Over the budget beside the first.
    expect(replies[3]?.error?.message).toMatch(
      /together over the limit of 262144 bytes per request/,
    );
  });

  it('sends a large tool result once: structured content, and a short summary as text', async () => {
    const mcp = await batch('noisy', [list(20)]);
    const listed = await rest('GET', '/v1/workspaces/noisy/memories?limit=20');
    expect(listed.status).toBe(200);
    const reply = mcp.replies[0];
    expect(reply?.result?.structuredContent?.memories).toHaveLength(20);
    const text = reply?.result?.content?.[0]?.text ?? '';
    expect(text).toMatch(/^The whole result \(\d+ bytes of JSON\) is in structuredContent/);
    expect(text.length).toBeLessThan(5000);
    expect(mcp.bytes).toBeLessThan(Buffer.byteLength(listed.text) + 8 * KB);
  });

  it('refuses a REST reply over the budget with 413 naming the limit', async () => {
    const res = await rest('POST', '/v1/workspaces/noisy/recall', { cue: 'memory', top_k: 40 });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toMatchObject({ error_code: 'payload_too_large' });
    expect(JSON.parse(res.text).message).toMatch(/FLASHBULB_MAX_REPLY_BYTES/);
    expect(
      (await rest('POST', '/v1/workspaces/noisy/recall', { cue: 'memory', top_k: 20 })).status,
    ).toBe(200);
  });

  it('pages a REST list at the budget: a shorter page, and its cursor goes on to every memory', async () => {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await rest(
        'GET',
        `/v1/workspaces/noisy/memories?limit=40${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      expect(res.status, res.text).toBe(200);
      const body = JSON.parse(res.text) as {
        memories: Array<{ memory_id: string }>;
        next_cursor: string | null;
      };
      ids.push(...body.memories.map((m) => m.memory_id));
      sizes.push(body.memories.length);
      expect(Buffer.byteLength(res.text)).toBeLessThan(PER_REQUEST);
      cursor = body.next_cursor;
    } while (cursor !== null && sizes.length < 10);
    expect(sizes[0]).toBeLessThan(40);
    expect(sizes.length).toBeGreaterThan(1);
    expect(new Set(ids).size).toBe(40);
  });

  it('survives 32 such batches at once while another workspace is answered every time', async () => {
    let storming = true;
    const quiet: Array<{ status: number; ms: number }> = [];
    const quietLoop = (async () => {
      while (storming) {
        const t = performance.now();
        const res = await rest('GET', '/v1/workspaces/quiet/memories?limit=1');
        quiet.push({ status: res.status, ms: performance.now() - t });
      }
    })();
    const storm = await Promise.all(
      Array.from({ length: 32 }, () =>
        batch(
          'noisy',
          Array.from({ length: 10 }, () => list(20)),
        ),
      ),
    );
    storming = false;
    await quietLoop;
    for (const b of storm) {
      expect(b.status).toBe(200);
      expect(b.replies).toHaveLength(10);
      // Every call was answered: a page, or an error naming a budget.
      for (const r of b.replies) {
        if (r.error)
          expect([
            'FLASHBULB_MAX_REPLY_BYTES',
            'FLASHBULB_MAX_REPLY_BYTES_PER_WORKSPACE',
          ]).toContain(r.error.data?.limit);
        else expect(r.result?.structuredContent?.memories).toHaveLength(20);
      }
      expect(b.replies.filter((r) => r.result).length).toBeLessThanOrEqual(1);
    }
    expect(quiet.length).toBeGreaterThan(0);
    expect(quiet.every((q) => q.status === 200)).toBe(true);
    expect(server.proc.exitCode).toBeNull();
    expect((await rest('GET', '/v1/health/ready')).status).toBe(200);
    const ms = quiet.map((q) => q.ms).sort((a, b) => a - b);
    const at = (p: number): string =>
      (ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] ?? 0).toFixed(1);
    console.log(
      `reply budget: quiet tenant during 32 batches: ${ms.length} requests, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms (load ${loadavg()[0]?.toFixed(1)})`,
    );
  }, 180_000);
});
