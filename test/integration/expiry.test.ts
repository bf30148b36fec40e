/**
 * Expiry over the wire (REST and gRPC), with real short TTLs: validation, the workspace default
 * TTL, revise, the expirations metric, and a memory that expires across a `kill -9`. The server
 * runs in worker threads and child processes on the real clock, so these wait until the clock has
 * passed an expiry (a condition read from the clock); the shard's own expiry rules are tested on
 * a clock the test sets, in test/unit/shard-expiry.test.ts.
 */
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import {
  ensureBuilt,
  filesContaining,
  http,
  killQuietly,
  startServer,
  waitExit,
  type ChildServer,
} from '../helpers/child.ts';
import { connectGrpc, failsWith, type GrpcClient } from '../helpers/grpc.ts';
import { until, untilClockPasses } from '../helpers/wait.ts';

const nowUs = (): number => Date.now() * 1000;

/** Polls `check` until it is true or `limitMs` passes; returns its last answer. */
async function eventually(check: () => Promise<boolean>, limitMs = 10_000): Promise<boolean> {
  return until(check, { what: 'the condition', deadlineMs: limitMs, everyMs: 50 }).then(
    () => true,
    () => false,
  );
}

describe('expiry over REST and gRPC', () => {
  let t: TestApp;
  let rpc: GrpcClient;

  beforeAll(async () => {
    t = await startTestApp();
    rpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey } });
  });
  afterAll(async () => {
    rpc.close();
    await t.stop();
  });

  it('remember takes ttl_s or expires_at_us and returns expires_at; bad values are 400s naming the field', async () => {
    const before = nowUs();
    const a = await t.req('POST', '/v1/memories', { body: { content: 'ttl memory', ttl_s: 3600 } });
    expect(a.status).toBe(201);
    expect(a.body.expires_at).toBe(a.body.created_at + 3600 * 1e6);
    const at = nowUs() + 7_200_000_000;
    const b = await t.req('POST', '/v1/memories', {
      body: { content: 'absolute expiry', expires_at_us: at },
    });
    expect(b.body.expires_at).toBe(at);
    const c = await t.req('POST', '/v1/memories', { body: { content: 'forever' } });
    expect(c.body.expires_at).toBeNull();

    const bad: Array<[object, RegExp]> = [
      [{ ttl_s: 0 }, /ttl_s must be more than 0 and at most 3153600000, got 0/],
      [{ ttl_s: -5 }, /ttl_s must be more than 0/],
      [{ ttl_s: 10, expires_at_us: at }, /not both/],
      [{ expires_at_us: before - 1 }, /expires_at_us .* not in the future/],
      [{ expires_at_us: 1.5 }, /expires_at_us 1.5 is not an integer number of microseconds/],
      [{ ttl_s: 'soon' }, /ttl_s must be/],
    ];
    for (const [extra, message] of bad) {
      const res = await t.req('POST', '/v1/memories', { body: { content: 'x', ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
  });

  it('a memory with a short TTL disappears from get, list, recall and prime, and the metric counts it', async () => {
    const word = `ephemeral${randomUUID().slice(0, 8)}`;
    const m = await t.req('POST', '/v1/memories', {
      body: { content: `the ${word} note`, ttl_s: 0.4, entity_id: word },
    });
    expect(m.status).toBe(201);
    expect((await t.req('GET', `/v1/memories/${m.body.memory_id}`)).status).toBe(200);
    await untilClockPasses(m.body.expires_at);
    expect((await t.req('GET', `/v1/memories/${m.body.memory_id}`)).status).toBe(404);
    expect(
      (await t.req('GET', `/v1/memories?entity_id=${word}&include_superseded=true`)).body.memories,
    ).toEqual([]);
    const recall = await t.req('POST', '/v1/recall', {
      body: { cue: `the ${word} note`, strategies: ['similarity', 'temporal'], entity_id: word },
    });
    expect(recall.body.results).toEqual([]);
    const primed = await t.req('POST', '/v1/prime', {
      body: { entity_id: word, similarity_cue: word },
    });
    expect(primed.body.results).toEqual([]);
    const counted = await eventually(async () => {
      const text = (await t.req('GET', '/v1/metrics')).text;
      const line = text.split('\n').find((l) => l.startsWith('flashbulb_memories_expired_total '));
      return Number(line?.split(' ')[1] ?? 0) >= 1;
    });
    expect(counted, 'flashbulb_memories_expired_total counted the expiry').toBe(true);
  });

  it('revise sets, extends or removes the expiry; removing needs expires_at_us: null', async () => {
    const m = await t.req('POST', '/v1/memories', {
      body: { content: 'revisable expiry', ttl_s: 0.5 },
    });
    const extended = await t.req('PUT', `/v1/revise/${m.body.memory_id}`, {
      body: { ttl_s: 3600 },
    });
    expect(extended.status).toBe(200);
    expect(extended.body.expires_at).toBe(extended.body.updated_at + 3600 * 1e6);
    await untilClockPasses(m.body.expires_at);
    const cleared = await t.req('PUT', `/v1/revise/${m.body.memory_id}`, {
      body: { expires_at_us: null },
    });
    expect(cleared.body.expires_at).toBeNull();
    expect(cleared.body.logical_clock).toBe(2);
    expect(
      (await t.req('PUT', `/v1/revise/${m.body.memory_id}`, { body: { ttl_s: -1 } })).status,
    ).toBe(400);
  });

  it('a workspace default TTL applies to memories written without one; ttl_s: null opts out', async () => {
    const slug = `ttl-${randomUUID().slice(0, 8)}`;
    const created = await t.req('POST', '/v1/workspaces', { body: { slug, default_ttl_s: 60 } });
    expect(created.status).toBe(201);
    expect(created.body.workspace.default_ttl_s).toBe(60);
    const a = await t.req('POST', `/v1/workspaces/${slug}/memories`, {
      body: { content: 'inherits the default' },
    });
    expect(a.body.expires_at).toBe(a.body.created_at + 60e6);
    const b = await t.req('POST', `/v1/workspaces/${slug}/memories`, {
      body: { content: 'opts out', ttl_s: null },
    });
    expect(b.body.expires_at).toBeNull();
    // Uploads follow the default too: the document and each proposition.
    const form = new FormData();
    form.append('files', new Blob(['Bob grows tomatoes. Bob lives in Lyon.\n']), 'notes/bob.md');
    const up = await fetch(`${t.base}/v1/workspaces/${slug}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}` },
      body: form,
    });
    expect(up.status).toBe(200);
    const uploaded = (
      await t.req(
        'GET',
        `/v1/workspaces/${slug}/memories?filter=${encodeURIComponent('{"kind":{"$in":["document","proposition"]}}')}`,
      )
    ).body.memories as any[];
    expect(uploaded.length).toBeGreaterThanOrEqual(2);
    for (const m of uploaded) expect(m.expires_at).toBe(m.created_at + 60e6);
    const changed = await t.req('PUT', `/v1/workspaces/${slug}`, { body: { default_ttl_s: null } });
    expect(changed.body.default_ttl_s).toBeNull();
    const c = await t.req('POST', `/v1/workspaces/${slug}/memories`, {
      body: { content: 'after removing the default' },
    });
    expect(c.body.expires_at).toBeNull();
    expect(
      (await t.req('PUT', `/v1/workspaces/${slug}`, { body: { default_ttl_s: 0 } })).status,
    ).toBe(400);
    expect((await t.req('PUT', `/v1/workspaces/${slug}`, { body: {} })).status).toBe(400);
    expect(
      (await t.req('PUT', '/v1/workspaces/no-such-ws', { body: { default_ttl_s: 5 } })).status,
    ).toBe(404);
  });

  it('gRPC: Remember takes ttl_s / expires_at_us, Memory carries expires_at_us, Revise can clear it', async () => {
    const mem = (method: string, req: object): Promise<any> =>
      rpc.call('MemoryService', method, req);
    const { memory } = await mem('Remember', { content: 'grpc ttl', ttl_s: 120 });
    expect(Number(memory.expires_at_us)).toBeGreaterThan(nowUs() + 100e6);
    const at = nowUs() + 999e6;
    const { memory: second } = await mem('Remember', {
      content: 'grpc absolute',
      expires_at_us: String(at),
    });
    expect(Number(second.expires_at_us)).toBe(at);
    const { memory: plain } = await mem('Remember', { content: 'grpc forever' });
    expect(plain.expires_at_us).toBeUndefined();
    await failsWith(
      mem('Remember', { content: 'both', ttl_s: 5, expires_at_us: String(at) }),
      grpc.status.INVALID_ARGUMENT,
    );
    const { memory: cleared } = await mem('Revise', {
      memory_id: memory.memory_id,
      clear_expiry: true,
    });
    expect(cleared.expires_at_us).toBeUndefined();
  });
});

describe('expiry across kill -9 (the real server process)', () => {
  const dirs: string[] = [];
  const children: ChildServer[] = [];
  beforeAll(() => ensureBuilt());
  afterAll(async () => {
    for (const c of children) await killQuietly(c);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a memory whose TTL ends while the server is down is gone after the restart, and erased from disk', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-expiry-proc-'));
    dirs.push(dataDir);
    const first = await startServer({ dataDir, env: { FLASHBULB_ERASE_WITHIN_S: '60' } });
    children.push(first);
    const secret = `expiring-${randomUUID()}`;
    const short = await http(first.base, 'POST', '/v1/memories', { content: secret, ttl_s: 1 });
    const long = await http(first.base, 'POST', '/v1/memories', { content: 'stays', ttl_s: 3600 });
    expect([short.status, long.status]).toEqual([201, 201]);
    first.proc.kill('SIGKILL');
    expect((await waitExit(first)).signal).toBe('SIGKILL');
    expect(
      filesContaining(dataDir, secret).length,
      'precondition: the content is on disk',
    ).toBeGreaterThan(0);
    await untilClockPasses(short.body.expires_at);

    const eraseWithinS = 2;
    const second = await startServer({
      dataDir,
      env: { FLASHBULB_ERASE_WITHIN_S: String(eraseWithinS) },
    });
    children.push(second);
    expect((await http(second.base, 'GET', `/v1/memories/${short.body.memory_id}`)).status).toBe(
      404,
    );
    expect(
      (await http(second.base, 'GET', `/v1/memories/${long.body.memory_id}`)).body.expires_at,
    ).toBe(long.body.expires_at);
    const erased = await eventually(
      async () => filesContaining(dataDir, secret).length === 0,
      eraseWithinS * 1000,
    );
    expect(erased, 'expired content still on disk after the restart').toBe(true);
    second.proc.kill('SIGTERM');
    expect(await waitExit(second)).toEqual({ code: 0, signal: null });
  });
});
