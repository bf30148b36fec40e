/**
 * Erasure (DESIGN 3.4): forgotten content is gone from every file in the data directory within
 * FLASHBULB_ERASE_WITHIN_S seconds; what was not forgotten survives a restart.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesContaining } from '../helpers/child.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const ERASE_WITHIN_S = 2;

function marker(label: string): string {
  return `${label}-${randomUUID()}`;
}

describe('erasure of forgotten content', () => {
  let t: TestApp;

  async function remember(body: Record<string, unknown>, path = '/v1/memories'): Promise<string> {
    const res = await t.req('POST', path, { body });
    expect(res.status, res.text).toBe(201);
    return res.body.memory_id as string;
  }

  /** Polls until no file under the data dir holds any needle, or the erasure deadline passes. */
  async function expectErasedWithin(needles: string[], since: number): Promise<void> {
    let holding: string[] = [];
    const left = since + ERASE_WITHIN_S * 1000 - Date.now();
    const find = (): string[] =>
      (holding = needles.flatMap((n) => filesContaining(t.dataDir, n).map((f) => `${n} in ${f}`)));
    await until(() => find().length === 0, {
      what: 'forgotten content to leave every file',
      deadlineMs: Math.max(0, left),
      everyMs: 50,
    }).catch(() => undefined);
    expect(holding, `still on disk ${Date.now() - since} ms after the forget`).toEqual([]);
  }

  beforeAll(async () => {
    t = await startTestApp({ eraseWithinS: ERASE_WITHIN_S });
  });
  afterAll(async () => t.stop());

  it('a forgotten memory leaves every file; the others survive a restart', async () => {
    const secret = marker('secret-marker');
    const keep = [marker('keep-one'), marker('keep-two')];
    const keepIds = [await remember({ content: keep[0], entity_id: 'ops' })];
    const secretId = await remember({
      content: `the code is ${secret}`,
      entity_id: 'ops',
      context: { note: 'sensitive' },
    });
    keepIds.push(
      await remember({
        content: keep[1],
        edges: [
          { target_id: secretId, edge_type: 'related_to' },
          { target_id: keepIds[0], edge_type: 'caused_by' },
        ],
      }),
    );
    // Acknowledged writes are durable, so the content is in the files now.
    expect(filesContaining(t.dataDir, secret).length).toBeGreaterThan(0);

    const since = Date.now();
    const res = await t.req('POST', '/v1/forget', { body: { memory_ids: [secretId] } });
    expect(res.body).toMatchObject({ forgotten_count: 1, tombstone_count: 1 });
    await expectErasedWithin([secret], since);

    // The tombstone keeps the content's hash, never the content.
    const sha = createHash('sha256').update(`the code is ${secret}`).digest('hex');
    expect(filesContaining(t.dataDir, sha).length).toBeGreaterThan(0);

    await t.restart();
    expect((await t.req('GET', `/v1/memories/${secretId}`)).status).toBe(404);
    for (const [i, id] of keepIds.entries()) {
      const got = await t.req('GET', `/v1/memories/${id}`);
      expect(got.status).toBe(200);
      expect(got.body.content).toBe(keep[i]);
    }
    const edges = await t.req('GET', `/v1/memories/${keepIds[1]}/edges`);
    expect(edges.body.outgoing).toEqual([
      expect.objectContaining({ target_id: keepIds[0], edge_type: 'caused_by' }),
    ]);
    expect(filesContaining(t.dataDir, secret)).toEqual([]);
  });

  it('forgetting a revised memory erases the old and the new content', async () => {
    const oldText = marker('old-content');
    const newText = marker('new-content');
    const bystander = marker('bystander');
    const bystanderId = await remember({ content: bystander });
    const id = await remember({ content: oldText, entity_id: 'revised-one' });
    const revised = await t.req('PUT', `/v1/revise/${id}`, { body: { content: newText } });
    expect(revised.status, revised.text).toBe(200);
    expect(filesContaining(t.dataDir, oldText).length).toBeGreaterThan(0);
    expect(filesContaining(t.dataDir, newText).length).toBeGreaterThan(0);

    const since = Date.now();
    const res = await t.req('POST', '/v1/forget', { body: { memory_ids: [id] } });
    expect(res.body).toMatchObject({ forgotten_count: 1, cascade_count: 1, tombstone_count: 2 });
    await expectErasedWithin([oldText, newText], since);

    await t.restart();
    expect((await t.req('GET', `/v1/memories/${id}`)).status).toBe(404);
    expect((await t.req('GET', `/v1/memories/${bystanderId}`)).body.content).toBe(bystander);
    const all = await t.req('GET', '/v1/memories?include_superseded=true&limit=1000');
    expect(all.body.memories.map((m: { content: string }) => m.content)).not.toContain(oldText);
    expect(filesContaining(t.dataDir, oldText)).toEqual([]);
    expect(filesContaining(t.dataDir, newText)).toEqual([]);
  });

  it('forgetting by entity erases every matching memory', async () => {
    const texts = [marker('entity-a'), marker('entity-b')];
    for (const text of texts) await remember({ content: text, entity_id: 'to-erase' });
    const survivor = marker('other-entity');
    await remember({ content: survivor, entity_id: 'to-keep' });
    const since = Date.now();
    const res = await t.req('POST', '/v1/forget', { body: { entity_id: 'to-erase' } });
    expect(res.body).toMatchObject({ forgotten_count: 2 });
    await expectErasedWithin(texts, since);
    expect(filesContaining(t.dataDir, survivor).length).toBeGreaterThan(0);
  });

  it('deleting a workspace erases its memories', async () => {
    const created = await t.req('POST', '/v1/workspaces', { body: { slug: 'doomed' } });
    expect(created.status, created.text).toBe(201);
    const text = marker('doomed-content');
    await remember({ content: text }, '/v1/workspaces/doomed/memories');
    expect(filesContaining(t.dataDir, text).length).toBeGreaterThan(0);
    const since = Date.now();
    const res = await t.req('DELETE', '/v1/workspaces/doomed');
    expect(res.status, res.text).toBe(200);
    await expectErasedWithin([text], since);
    await t.restart();
    expect((await t.req('GET', '/v1/workspaces/doomed')).status).toBe(404);
  });
});
