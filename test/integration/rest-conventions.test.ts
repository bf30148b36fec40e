/**
 * REST conventions agent developers expect from their other tools: recall without `strategies`
 * means similarity, and DELETE on a memory's URL forgets it with forget's semantics (tombstone,
 * superseded versions with it, erasure from disk), 404 for an id the workspace does not hold.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesContaining } from '../helpers/child.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const ERASE_WITHIN_S = 2;

describe('REST conventions', () => {
  let t: TestApp;

  async function remember(content: string, path = '/v1/memories'): Promise<string> {
    const res = await t.inject('POST', path, { body: { content } });
    expect(res.status, res.text).toBe(201);
    return res.body.memory_id as string;
  }

  beforeAll(async () => {
    t = await startTestApp({ eraseWithinS: ERASE_WITHIN_S });
  });
  afterAll(async () => t.stop());

  it('recall without strategies runs similarity, over REST and MCP', async () => {
    await remember('green tea in the morning');
    const res = await t.inject('POST', '/v1/recall', { body: { cue: 'tea' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.length).toBeGreaterThan(0);
    for (const hit of res.body.results)
      expect(hit.strategy_details.map((d: any) => d.strategy)).toEqual(['similarity']);
    const same = await t.inject('POST', '/v1/recall', {
      body: { cue: 'tea', strategies: ['similarity'] },
    });
    expect(res.body.results.map((h: any) => h.memory.memory_id)).toEqual(
      same.body.results.map((h: any) => h.memory.memory_id),
    );

    const mcp = await t.inject('POST', '/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'recall', arguments: { cue: 'tea' } },
      },
    });
    expect(mcp.body.result.structuredContent.results[0].strategy_details[0].strategy).toBe(
      'similarity',
    );
  });

  it('min_relevance drops weaker results, so a nonsense cue can return nothing (REST and MCP); prime keeps its recent half', async () => {
    await t.inject('POST', '/v1/workspaces', { body: { slug: 'floor' } });
    for (const content of [
      'green tea in the morning',
      'the cat sleeps on the sofa',
      'bought a new bicycle',
    ])
      await remember(content, '/v1/workspaces/floor/memories');
    const loose = await t.inject('POST', '/v1/workspaces/floor/recall', {
      body: { cue: 'zzzz qqqq' },
    });
    expect(loose.body.results).toHaveLength(3);
    const none = await t.inject('POST', '/v1/workspaces/floor/recall', {
      body: { cue: 'zzzz qqqq', min_relevance: 0.15 },
    });
    expect(none.body.results).toEqual([]);
    const some = await t.inject('POST', '/v1/workspaces/floor/recall', {
      body: { cue: 'green tea', min_relevance: 0.5 },
    });
    expect(some.body.results.map((h: any) => h.memory.content)).toEqual([
      'green tea in the morning',
    ]);
    for (const h of some.body.results) expect(h.relevance).toBeGreaterThanOrEqual(0.5);

    const mcp = await t.inject('POST', '/v1/workspaces/floor/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'recall', arguments: { cue: 'zzzz qqqq', min_relevance: 0.15 } },
      },
    });
    expect(mcp.body.result.structuredContent.results, mcp.text).toEqual([]);

    const prime = await t.inject('POST', '/v1/workspaces/floor/prime', {
      body: { similarity_cue: 'zzzz qqqq', min_relevance: 0.15, max_memories: 4 },
    });
    expect(prime.body).toMatchObject({ similarity_count: 0, temporal_count: 3 });
    const primeLoose = await t.inject('POST', '/v1/workspaces/floor/prime', {
      body: { similarity_cue: 'zzzz qqqq', max_memories: 4 },
    });
    expect(primeLoose.body.similarity_count).toBeGreaterThan(0);

    for (const bad of [-0.1, 1.5, 'high']) {
      const res = await t.inject('POST', '/v1/workspaces/floor/recall', {
        body: { cue: 'tea', min_relevance: bad },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^min_relevance/);
    }
  });

  it('DELETE /v1/memories/{id} forgets the memory and its superseded versions, and erases them from disk', async () => {
    const before = `before-${randomUUID()}`;
    const after = `after-${randomUUID()}`;
    const id = await remember(before);
    const revised = await t.inject('PUT', `/v1/revise/${id}`, { body: { content: after } });
    expect(revised.status, revised.text).toBe(200);
    const edges = await t.inject('GET', `/v1/memories/${id}/edges`);
    const versionId = edges.body.outgoing.find(
      (e: any) => e.edge_type === 'revised_from',
    )?.target_id;
    expect((await t.inject('GET', `/v1/memories/${versionId}`)).body).toMatchObject({
      content: before,
      superseded_by: id,
    });

    const since = Date.now();
    const res = await t.inject('DELETE', `/v1/memories/${id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      forgotten_count: 1,
      cascade_count: 1,
      truncated: false,
      tombstone_count: 2,
    });
    expect((await t.inject('GET', `/v1/memories/${id}`)).status).toBe(404);
    expect((await t.inject('GET', `/v1/memories/${versionId}`)).status).toBe(404);
    let holding: string[] = [];
    const find = (): string[] =>
      (holding = [before, after].flatMap((n) => filesContaining(t.dataDir, n)));
    await until(() => find().length === 0, {
      what: 'deleted content to leave every file',
      deadlineMs: Math.max(0, since + ERASE_WITHIN_S * 1000 - Date.now()),
      everyMs: 50,
    }).catch(() => undefined);
    expect(holding).toEqual([]);
  });

  it("a superseded version's id forgets that version alone", async () => {
    const id = await remember(`first-${randomUUID()}`);
    await t.inject('PUT', `/v1/revise/${id}`, { body: { content: 'second wording' } });
    const edges = await t.inject('GET', `/v1/memories/${id}/edges`);
    const versionId = edges.body.outgoing.find(
      (e: any) => e.edge_type === 'revised_from',
    )?.target_id;
    expect(versionId, edges.text).toBeDefined();
    const res = await t.inject('DELETE', `/v1/memories/${versionId}`);
    expect(res.body).toEqual({
      forgotten_count: 1,
      cascade_count: 0,
      truncated: false,
      tombstone_count: 1,
    });
    expect((await t.inject('GET', `/v1/memories/${versionId}`)).status).toBe(404);
    const live = await t.inject('GET', `/v1/memories/${id}`);
    expect(live.status).toBe(200);
    expect(live.body.content).toBe('second wording');
  });

  it('an id the workspace does not hold is 404, a malformed one 400; the workspace-scoped form reaches only its workspace', async () => {
    const unknown = await t.inject('DELETE', `/v1/memories/${'0'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      error_code: 'not_found',
      message: `memory ${'0'.repeat(32)} not found`,
    });
    const bad = await t.inject('DELETE', '/v1/memories/not-an-id');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/memory_id 'not-an-id' is not a memory id/);

    expect((await t.inject('POST', '/v1/workspaces', { body: { slug: 'acme' } })).status).toBe(201);
    const inAcme = await remember('acme only', '/v1/workspaces/acme/memories');
    expect((await t.inject('DELETE', `/v1/memories/${inAcme}`)).status).toBe(404);
    const scoped = await t.inject('DELETE', `/v1/workspaces/acme/memories/${inAcme}`);
    expect(scoped.status, scoped.text).toBe(200);
    expect(scoped.body.forgotten_count).toBe(1);
    const again = await t.inject('DELETE', `/v1/workspaces/acme/memories/${inAcme}`);
    expect(again.status).toBe(404);
  });
});
