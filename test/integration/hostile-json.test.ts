/**
 * Issue 12, defects 1, 7 and 8: deeply nested or very wide JSON is refused at the edge with a 400
 * naming the limit (REST bodies, context, cue_context; gRPC Structs); one workspace cannot take a
 * shard's whole in-flight capacity; readiness names a shard that cannot answer; undecodable gRPC
 * messages are INVALID_ARGUMENT; a workspace key's malformed tenant_id is ignored like any other.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_LIMITS, jsonShapeProblem, jsonTextDepth } from '../../src/model/json-shape.ts';
import { shardProblem, UNRESPONSIVE_MS } from '../../src/router/shard-handle.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, failsWith, grpcMetadata, struct, type GrpcClient } from '../helpers/grpc.ts';
import type { JsonObject } from '../../src/model/memory.ts';

let t: TestApp;
let rpc: GrpcClient;
let key: string;

beforeAll(async () => {
  t = await startTestApp({}, { FLASHBULB_MAX_INFLIGHT_PER_WORKSPACE: '2' });
  rpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey } });
  const ws = await t.req('POST', '/v1/workspaces', { body: { slug: `hostile-${process.pid}` } });
  key = ws.body.api_key;
});
afterAll(async () => {
  rpc.close();
  await t.stop();
});

/** `{"d": [[[…]]]}` with `levels` levels in all. */
function nestedText(levels: number): string {
  return `{"d":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
}

function nestedObject(levels: number): JsonObject {
  let v: JsonObject = { leaf: true };
  for (let i = 1; i < levels; i++) v = { n: v };
  return v;
}

async function memoryCount(): Promise<number> {
  const res = await t.req('GET', '/v1/memories?limit=1000', { key });
  expect(res.status).toBe(200);
  return res.body.memories.length;
}

describe('nesting depth and keys at the JSON edge (REST)', () => {
  it('a context nested 2,000 levels (4 KB) is a prompt 400 naming the limit, and nothing is stored', async () => {
    const before = await memoryCount();
    for (const levels of [2000, 5000, 100_000]) {
      const raw = `{"content":"deep","context":${nestedText(levels)}}`;
      const res = await t.req('POST', '/v1/memories', {
        key,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
      expect(res.body.message).toContain(`limit of ${JSON_LIMITS.depth} levels`);
    }
    expect(await memoryCount()).toBe(before);
    // Every later request still answers.
    expect((await t.req('GET', '/v1/memories', { key })).status).toBe(200);
  });

  it('the limit is exact: a body nested 32 levels is stored, 33 is refused', async () => {
    // The body is level 1 and context level 2, so a context of 31 levels makes a body of 32.
    const ok = await t.req('POST', '/v1/memories', {
      key,
      body: { content: 'at the limit', context: nestedObject(JSON_LIMITS.depth - 1) },
    });
    expect(ok.status, ok.text).toBe(201);
    const got = await t.req('GET', `/v1/memories/${ok.body.memory_id}`, { key });
    expect(got.body.context).toEqual(nestedObject(JSON_LIMITS.depth - 1));
    const over = await t.req('POST', '/v1/memories', {
      key,
      body: { content: 'over the limit', context: nestedObject(JSON_LIMITS.depth) },
    });
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/deeper than the limit of 32 levels/);
  });

  it('an object with more keys than the limit is a 400 naming the field and the limit', async () => {
    const wide: JsonObject = {};
    for (let i = 0; i <= JSON_LIMITS.keysPerObject; i++) wide[`k${i}`] = 0;
    const res = await t.req('POST', '/v1/memories', {
      key,
      body: { content: 'wide', context: wide },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      `request body.context has ${JSON_LIMITS.keysPerObject + 1} keys; the limit is ${JSON_LIMITS.keysPerObject} keys per object`,
    );
  });

  it('cue_context on recall and context on revise are bounded the same way', async () => {
    const recall = await t.req('POST', '/v1/recall', {
      key,
      raw: `{"cue":"x","cue_context":${nestedText(3000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(recall.status).toBe(400);
    expect(recall.body.message).toContain('limit of 32 levels');
    const m = await t.req('POST', '/v1/memories', { key, body: { content: 'to revise' } });
    const revise = await t.req('PUT', `/v1/revise/${m.body.memory_id}`, {
      key,
      body: { context: nestedObject(40) },
    });
    expect(revise.status).toBe(400);
    expect(revise.body.message).toContain('limit of 32 levels');
  });

  it('brackets inside strings do not count towards depth', () => {
    expect(jsonTextDepth('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"[[["}')).toBe(1);
    expect(jsonTextDepth(nestedText(10))).toBe(10);
    expect(jsonShapeProblem('x', JSON.parse(nestedText(40)))).toContain('x.d');
    expect(jsonShapeProblem('x', { a: [1, { b: 2 }] })).toBeNull();
  });
});

describe('nesting depth at the gRPC edge', () => {
  it('a Struct context or cue_context past the limit is INVALID_ARGUMENT naming the field', async () => {
    const err = await failsWith(
      rpc.call('MemoryService', 'Remember', {
        content: 'deep',
        context: struct(nestedObject(JSON_LIMITS.depth + 1)),
      }),
      grpc.status.INVALID_ARGUMENT,
    );
    expect(err.details).toMatch(/^context\.n.*limit of 32 levels/);
    const cue = await failsWith(
      rpc.call('MemoryService', 'Recall', {
        cue: 'x',
        strategies: [{ strategy_type: 'SIMILARITY' }],
        cue_context: struct(nestedObject(50)),
      }),
      grpc.status.INVALID_ARGUMENT,
    );
    expect(cue.details).toMatch(/^cue_context/);
    const ok = await rpc.call('MemoryService', 'Remember', {
      content: 'within',
      context: struct(nestedObject(JSON_LIMITS.depth)),
    });
    expect(ok.memory.content).toBe('within');
  });

  it('bytes that are not a protobuf message are INVALID_ARGUMENT, not INTERNAL (defect 7)', async () => {
    const client = new grpc.Client(
      `127.0.0.1:${t.app.grpcPort}`,
      grpc.credentials.createInsecure(),
    );
    const garbage = (method: string, bytes: Buffer): Promise<unknown> =>
      new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          method,
          (b: Buffer) => b,
          (b: Buffer) => b,
          bytes,
          grpcMetadata({ key: t.adminKey }),
          (err, res) => (err ? reject(err) : resolve(res)),
        );
      });
    try {
      for (const method of [
        '/hebbs.v1.MemoryService/Remember',
        '/hebbs.v1.MemoryService/Recall',
        '/hebbs.v1.ReflectService/GetInsights',
      ]) {
        // A field key with nothing after it; wire type 7 (there is none).
        for (const bytes of [Buffer.from([0x0b]), Buffer.alloc(11, 0xff)]) {
          const err = await failsWith(garbage(method, bytes), grpc.status.INVALID_ARGUMENT, method);
          expect(err.details).toMatch(/could not be decoded/);
        }
      }
    } finally {
      client.close();
    }
  });

  it('a workspace key with a malformed tenant_id acts on its own workspace (defect 8)', async () => {
    const auth = { key };
    const m = await rpc.call(
      'MemoryService',
      'Remember',
      { content: 'mine whatever tenant_id says', tenant_id: '../default' },
      auth,
    );
    const got = await t.req('GET', `/v1/memories/${m.memory.memory_id.toString('hex')}`, { key });
    expect(got.status).toBe(200);
    expect(
      (
        await rpc.call(
          'MemoryService',
          'Get',
          { memory_id: m.memory.memory_id, tenant_id: 'Not A Slug' },
          auth,
        )
      ).memory.content,
    ).toBe('mine whatever tenant_id says');
    // An admin key naming a malformed workspace still gets INVALID_ARGUMENT: it would act there.
    await failsWith(
      rpc.call(
        'MemoryService',
        'Remember',
        { content: 'x', tenant_id: '../default' },
        { key: t.adminKey },
      ),
      grpc.status.INVALID_ARGUMENT,
    );
  });
});

describe('in-flight fairness and readiness', () => {
  it('one workspace at its in-flight cap is refused while another on the same shard is served', async () => {
    const pool = t.app.svc.shards;
    // Same shard: with 2 shards, pick two workspaces that hash together.
    const a = 'fair-a';
    const calls = [pool.call(a, 'count', {}), pool.call(a, 'count', {}), pool.call(a, 'count', {})];
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const third = settled[2] as PromiseRejectedResult;
    expect(third.reason).toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining(`workspace '${a}' has 2 requests in flight`),
    });
    // Other workspaces, sent while `a` is at its cap, are not refused.
    const others = ['fair-b', 'fair-c', 'fair-d', 'fair-e'];
    const mixed = await Promise.allSettled([
      pool.call(a, 'count', {}),
      pool.call(a, 'count', {}),
      ...others.map((w) => pool.call(w, 'count', {})),
    ]);
    expect(mixed.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
  });

  it('readiness names a shard that is silent, saturated, not answering, cannot write its log or crashed', () => {
    const base = {
      ready: true,
      down: null,
      pendingSize: 0,
      oldestSentAt: null,
      lastHeardAt: 1000,
      lastReplyAt: 1000,
    };
    expect(shardProblem(base, 1500, 10)).toBeNull();
    expect(shardProblem({ ...base, ready: false }, 1500, 10)).toBe('is not running');
    expect(shardProblem(base, 1000 + UNRESPONSIVE_MS + 1000, 10)).toMatch(
      /has sent nothing for 6 s/,
    );
    expect(shardProblem({ ...base, pendingSize: 10 }, 1500, 10)).toMatch(/in-flight limit of 10/);
    // Metrics keep arriving, but the oldest request has waited with no reply at all since.
    const stuck = {
      ...base,
      pendingSize: 1,
      oldestSentAt: 2000,
      lastHeardAt: 9000,
      lastReplyAt: 1000,
    };
    expect(shardProblem(stuck, 2000 + UNRESPONSIVE_MS + 1, 10)).toMatch(/has not answered for 5 s/);
    // Replies arriving since the oldest was sent mean the shard is answering.
    expect(shardProblem({ ...stuck, lastReplyAt: 8000 }, 9000, 10)).toBeNull();
    const restarting =
      'cannot write its log (log write failed: ENOSPC); it refuses requests and is restarted from its files until that works';
    const full = { cause: 'storage', why: 'log write failed: ENOSPC' } as const;
    expect(shardProblem({ ...base, down: full }, 1500, 10)).toBe(restarting);
    expect(shardProblem({ ...base, ready: false, down: full }, 1500, 10)).toBe(restarting);
    expect(
      shardProblem({ ...base, ready: false, down: { cause: 'crash', why: 'boom' } }, 1500, 10),
    ).toBe('crashed (boom); it is restarted from its files until that works');
  });

  it('/v1/health/ready is 200 while every shard answers', async () => {
    const res = await t.req('GET', '/v1/health/ready');
    expect(res.status).toBe(200);
    expect(t.app.svc.shards.problems()).toEqual([]);
  });
});
