/**
 * The activity log (issue 53): writes, revisions, forgets, imports, workspaces and keys land in it
 * with the key that made them; it is for admin keys only (a workspace key gets 403); it pages
 * newest first with a cursor that later writes do not disturb; it filters; it shows a memory's
 * current content and none once the memory is forgotten. And the metrics history: the interval
 * still open carries each operation's count and percentiles computed from its requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

describe('GET /v1/admin/activity', () => {
  it('records changes with key, workspace and current content, pages newest first, and forgets content', async () => {
    const key = await t.inject('POST', '/v1/keys', {
      body: { workspace: 'default', role: 'admin', label: 'auditor' },
    });
    expect(key.status).toBe(201);
    const ws = await t.inject('POST', '/v1/workspaces', { body: { slug: 'audit' } });
    const wsKey = ws.body.api_key as string;
    const mine = await t.inject('POST', '/v1/memories', {
      key: wsKey,
      body: { content: 'The vault code is written on the back of the map', entity_id: 'vault' },
    });
    const id = mine.body.memory_id as string;
    await t.inject('PUT', `/v1/revise/${id}`, { key: wsKey, body: { importance: 0.9 } });
    const other = await t.inject('POST', '/v1/memories', {
      key: key.body.api_key,
      body: { content: 'Admin note in default' },
    });
    expect(other.status).toBe(201);

    const page = await t.inject('GET', '/v1/admin/activity?limit=3');
    expect(page.status, page.text).toBe(200);
    expect(page.body.capacity).toBe(10_000);
    const [newest, revised, written] = page.body.entries;
    expect(newest).toMatchObject({
      action: 'remember',
      workspace: 'default',
      key_id: key.body.key_id,
      key_label: 'auditor',
      count: 1,
    });
    expect(newest.memories).toEqual([
      { memory_id: other.body.memory_id, content: 'Admin note in default' },
    ]);
    expect(revised).toMatchObject({
      action: 'revise',
      workspace: 'audit',
      key_id: ws.body.key_id,
      key_label: 'created with the workspace',
      detail: 'importance',
    });
    expect(written).toMatchObject({
      action: 'remember',
      workspace: 'audit',
      detail: 'entity vault',
    });
    expect(written.memories[0].content).toBe('The vault code is written on the back of the map');
    expect(newest.seq).toBeGreaterThan(revised.seq);
    expect(Number.isInteger(newest.at_us)).toBe(true);

    // Older entries from the cursor; a write meanwhile does not shift them.
    await t.inject('POST', '/v1/memories', { body: { content: 'written while paging' } });
    const older = await t.inject(
      'GET',
      `/v1/admin/activity?limit=2&cursor=${page.body.next_cursor}`,
    );
    expect(older.body.entries.map((e: any) => e.action)).toEqual([
      'workspace_create',
      'key_create',
    ]);
    expect(older.body.entries[0].detail).toMatch(/^workspace audit and key key_/);
    expect(older.body.entries[1]).toMatchObject({
      workspace: 'default',
      detail: expect.stringMatching(/^admin key key_\w+ \(auditor\)$/),
    });

    const filtered = await t.inject('GET', '/v1/admin/activity?workspace=audit&action=remember');
    expect(filtered.body.entries).toHaveLength(1);

    const forgot = await t.inject('POST', '/v1/forget', { key: wsKey, body: { memory_ids: [id] } });
    expect(forgot.body.forgotten_count).toBe(1);
    const after = await t.inject('GET', '/v1/admin/activity?workspace=audit');
    expect(after.body.entries[0]).toMatchObject({
      action: 'forget',
      count: forgot.body.forgotten_count + forgot.body.cascade_count,
      detail: '1 id',
      memories: [{ memory_id: id, content: null }],
    });
    expect(after.text).not.toContain('vault code');
  });

  it('refuses workspace keys, and names the problem in a bad cursor', async () => {
    const ws = await t.inject('POST', '/v1/workspaces', { body: { slug: 'nosy' } });
    const refused = await t.inject('GET', '/v1/admin/activity', { key: ws.body.api_key });
    expect(refused.status).toBe(403);
    expect(refused.body.error_code).toBe('forbidden');
    expect(
      (await t.inject('GET', '/v1/workspaces/nosy/admin/activity', { key: ws.body.api_key }))
        .status,
    ).toBe(404);
    const bad = await t.inject('GET', '/v1/admin/activity?cursor=abc');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(
      /^cursor 'abc' is not valid: next_cursor of the previous page/,
    );
    expect((await t.inject('GET', '/v1/admin/activity?action=read')).status).toBe(400);
  });

  it('records key revocations, workspace deletions and imports', async () => {
    const made = await t.inject('POST', '/v1/keys', {
      body: { workspace: 'default', role: 'workspace', label: 'temp' },
    });
    await t.inject('DELETE', `/v1/keys/${made.body.key_id}`);
    await t.inject('POST', '/v1/workspaces', { body: { slug: 'gone' } });
    const lines = [{ memory: { content: 'imported one' } }, { memory: { content: 'imported two' } }]
      .map((l) => JSON.stringify(l))
      .join('\n');
    const imported = await t.inject('POST', '/v1/workspaces/gone/import', {
      raw: `${lines}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.body.imported).toBe(2);
    await t.inject('DELETE', '/v1/workspaces/gone');
    const page = await t.inject('GET', '/v1/admin/activity?limit=5');
    expect(page.body.entries.map((e: any) => e.action)).toEqual([
      'workspace_delete',
      'import',
      'workspace_create',
      'key_revoke',
      'key_create',
    ]);
    expect(page.body.entries[0]).toMatchObject({
      workspace: 'gone',
      count: 2,
      detail: '2 memories deleted, 1 key revoked',
    });
    expect(page.body.entries[1]).toMatchObject({
      count: 2,
      detail: '2 lines: 2 imported, 0 skipped, 0 expired, 0 errors',
    });
    // The workspace is gone with its memories: ids stay, content does not.
    expect(page.body.entries[1].memories.map((m: any) => m.content)).toEqual([null, null]);
    expect(page.body.entries[3].detail).toMatch(/^workspace key key_\w+ \(temp\)$/);
  });
});

describe('GET /v1/metrics/history', () => {
  it('answers the open interval with counts and computed percentiles per operation, and the gauges', async () => {
    for (let i = 0; i < 5; i++) await t.inject('GET', '/v1/entities');
    await t.inject('GET', '/v1/memories/00000000000000000000000000000000');
    const r = await t.inject('GET', '/v1/metrics/history');
    expect(r.status, r.text).toBe(200);
    expect(r.body.interval_s).toBe(10);
    expect(r.body.capacity).toBe(360);
    const entities = r.body.current.ops.entities;
    expect(entities.count).toBeGreaterThanOrEqual(5);
    expect(entities.errors).toBe(0);
    expect(entities.p50_ms).toBeGreaterThan(0);
    expect(entities.p50_ms).toBeLessThanOrEqual(entities.p95_ms);
    expect(entities.p95_ms).toBeLessThanOrEqual(entities.p99_ms);
    expect(entities.p99_ms).toBeLessThanOrEqual(entities.max_ms);
    expect(r.body.current.ops.get.errors).toBeGreaterThanOrEqual(1);
    expect(r.body.current.gauges).toMatchObject({ shards: 2, shards_down: 0, embedding_queue: 0 });
    expect(r.body.current.gauges.memories).toEqual(expect.any(Number));
    expect(r.body.current.gauges.rss_mb).toBeGreaterThan(0);
  });
});
