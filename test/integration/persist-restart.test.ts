/**
 * Restart persistence, in-process: memories, revisions (and their superseded versions), edges,
 * entities and forgets come back identical after stop/start, across several shards.
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardFor } from '../../src/router/shard-map.ts';
import { shardDir } from '../../src/data-dir.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const SHARDS = 3;

/** Workspace slugs that between them land on every shard. */
function slugsCoveringShards(): string[] {
  const byShard = new Map<number, string>();
  for (let i = 0; byShard.size < SHARDS; i++) {
    const slug = `team-${i}`;
    if (!byShard.has(shardFor(slug, SHARDS))) byShard.set(shardFor(slug, SHARDS), slug);
  }
  return [...byShard.values()];
}

interface Scenario {
  slug: string;
  ids: { m1: string; m2: string; m3: string; m4: string };
}

function withoutDecay(m: Record<string, unknown>): Record<string, unknown> {
  const { decay_score: _decay, ...rest } = m;
  return rest;
}

describe('restart persistence (in-process, several shards)', () => {
  let t: TestApp;
  const scenarios: Scenario[] = [];
  const ws = (slug: string, path: string): string => `/v1/workspaces/${slug}${path}`;

  async function ok(method: string, path: string, body?: unknown, status = 200): Promise<any> {
    const res = await t.req(method, path, body === undefined ? {} : { body });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
    return res.body;
  }

  async function buildScenario(slug: string): Promise<Scenario> {
    await ok('POST', '/v1/workspaces', { slug, name: `Team ${slug}` }, 201);
    const m1 = (
      await ok(
        'POST',
        ws(slug, '/memories'),
        {
          content: `${slug}: the deploy failed`,
          entity_id: 'alice',
          context: { a: 1, tags: ['x'] },
          importance: 0.9,
        },
        201,
      )
    ).memory_id;
    const m2 = (
      await ok(
        'POST',
        ws(slug, '/memories'),
        {
          content: `${slug}: the disk was full`,
          entity_id: 'bob',
          edges: [{ target_id: m1, edge_type: 'caused_by', confidence: 0.7 }],
        },
        201,
      )
    ).memory_id;
    const m3 = (
      await ok(
        'POST',
        ws(slug, '/memories'),
        {
          content: `${slug}: we added an alert`,
          edges: [{ target_id: m2, edge_type: 'FOLLOWED_BY' }],
        },
        201,
      )
    ).memory_id;
    const m4 = (
      await ok(
        'POST',
        ws(slug, '/memories'),
        {
          content: `${slug}: to be forgotten`,
          entity_id: 'carol',
          edges: [{ target_id: m1, edge_type: 'RelatedTo' }],
        },
        201,
      )
    ).memory_id;
    const r1 = await ok('PUT', ws(slug, `/revise/${m1}`), {
      content: `${slug}: the deploy failed twice`,
      context: { b: 2 },
      entity_id: 'dave',
    });
    expect(r1).toMatchObject({
      memory_id: m1,
      kind: 'revision',
      logical_clock: 1,
      context: { a: 1, tags: ['x'], b: 2 },
    });
    const r2 = await ok('PUT', ws(slug, `/revise/${m1}`), {
      importance: 0.25,
      context: { c: 3 },
      context_mode: 'replace',
    });
    expect(r2).toMatchObject({ logical_clock: 2, importance: 0.25, context: { c: 3 } });
    expect(await ok('POST', ws(slug, '/forget'), { memory_ids: [m4] })).toMatchObject({
      forgotten_count: 1,
      tombstone_count: 1,
    });
    return { slug, ids: { m1, m2, m3, m4 } };
  }

  /** Everything a client can read about a workspace. */
  async function observe(s: Scenario): Promise<unknown> {
    const pages: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { memories: Record<string, unknown>[]; next_cursor: string | null } = await ok(
        'GET',
        ws(s.slug, `/memories?include_superseded=true&limit=2${cursor ? `&cursor=${cursor}` : ''}`),
      );
      pages.push(page.memories.map(withoutDecay));
      cursor = page.next_cursor;
    } while (cursor);
    const live = (await ok('GET', ws(s.slug, '/memories'))).memories.map(withoutDecay);
    const all = pages.flat() as Array<{ memory_id: string }>;
    const one: Record<string, unknown> = {};
    const edges: Record<string, unknown> = {};
    for (const m of all) {
      one[m.memory_id] = withoutDecay(await ok('GET', ws(s.slug, `/memories/${m.memory_id}`)));
      edges[m.memory_id] = await ok('GET', ws(s.slug, `/memories/${m.memory_id}/edges`));
    }
    const entities = await ok('GET', ws(s.slug, '/entities'));
    const forgotten = await t.req('GET', ws(s.slug, `/memories/${s.ids.m4}`));
    return { pages, live, one, edges, entities, forgotten: forgotten.status };
  }

  beforeAll(async () => {
    t = await startTestApp({ shards: SHARDS });
    for (const slug of slugsCoveringShards()) scenarios.push(await buildScenario(slug));
  });
  afterAll(async () => t.stop());

  it('the scenario reads as expected before any restart', async () => {
    for (const s of scenarios) {
      const seen = (await observe(s)) as {
        pages: unknown[][];
        live: unknown[];
        edges: Record<string, any>;
        entities: string[];
        forgotten: number;
      };
      expect(seen.pages.flat()).toHaveLength(5); // m1, m2, m3 and two superseded versions of m1
      expect(seen.live).toHaveLength(3);
      expect(seen.entities).toEqual(['bob', 'dave']);
      expect(seen.forgotten).toBe(404);
      const m1Edges = seen.edges[s.ids.m1];
      expect(m1Edges.outgoing.filter((e: any) => e.edge_type === 'revised_from')).toHaveLength(2);
      expect(m1Edges.incoming).toEqual([
        expect.objectContaining({ source_id: s.ids.m2, edge_type: 'caused_by', confidence: 0.7 }),
      ]);
    }
  });

  it('everything a client can read is identical after a restart, and after a second one', async () => {
    const before = await Promise.all(scenarios.map(observe));
    await t.restart();
    expect(await Promise.all(scenarios.map(observe))).toEqual(before);
    await t.restart();
    expect(await Promise.all(scenarios.map(observe))).toEqual(before);
  });

  it('a clean stop leaves a snapshot in every shard', () => {
    for (let i = 0; i < SHARDS; i++) {
      const files = readdirSync(shardDir(t.dataDir, i));
      expect(
        files.some((f) => /^snap-\d{8}\.snap$/.test(f)),
        `shard ${i}: ${files.join(', ')}`,
      ).toBe(true);
    }
  });

  it('writes after a restart get ids after every recovered id, and persist too', async () => {
    for (const s of scenarios) {
      const listed = (await ok('GET', ws(s.slug, '/memories?include_superseded=true&limit=1000')))
        .memories as Array<{ memory_id: string }>;
      const newest = listed
        .map((m) => m.memory_id)
        .sort()
        .at(-1) as string;
      const created = await ok(
        'POST',
        ws(s.slug, '/memories'),
        {
          content: `${s.slug}: after restart`,
          edges: [{ target_id: s.ids.m3, edge_type: 'related_to' }],
        },
        201,
      );
      expect(created.memory_id > newest).toBe(true);
      const revised = await ok('PUT', ws(s.slug, `/revise/${s.ids.m2}`), {
        content: `${s.slug}: the disk was full (confirmed)`,
      });
      expect(revised.logical_clock).toBe(1);
      expect(await ok('POST', ws(s.slug, '/forget'), { memory_ids: [s.ids.m3] })).toMatchObject({
        forgotten_count: 1,
      });
    }
    const before = await Promise.all(scenarios.map(observe));
    await t.restart();
    expect(await Promise.all(scenarios.map(observe))).toEqual(before);
    for (const s of scenarios) {
      expect((await t.req('GET', ws(s.slug, `/memories/${s.ids.m3}`))).status).toBe(404);
      const live = (await ok('GET', ws(s.slug, '/memories'))).memories as Array<{
        content: string;
      }>;
      expect(live.map((m) => m.content).sort()).toEqual(
        [
          `${s.slug}: after restart`,
          `${s.slug}: the deploy failed twice`,
          `${s.slug}: the disk was full (confirmed)`,
        ].sort(),
      );
    }
  });

  it('forget by entity persists, superseded versions included', async () => {
    const s = scenarios[0] as Scenario;
    const res = await ok('POST', ws(s.slug, '/forget'), { entity_id: 'dave' });
    expect(res).toMatchObject({ forgotten_count: 1, cascade_count: 2, tombstone_count: 3 });
    await t.restart();
    expect((await t.req('GET', ws(s.slug, `/memories/${s.ids.m1}`))).status).toBe(404);
    const all = (await ok('GET', ws(s.slug, '/memories?include_superseded=true')))
      .memories as Array<{ memory_id: string; superseded_by?: string }>;
    expect(all.filter((m) => m.superseded_by === s.ids.m1)).toEqual([]);
    expect(await ok('GET', ws(s.slug, '/entities'))).toEqual(['bob']);
    const edges = await ok('GET', ws(s.slug, `/memories/${s.ids.m2}/edges`));
    expect(edges.outgoing.filter((e: { target_id: string }) => e.target_id === s.ids.m1)).toEqual(
      [],
    );
    expect(edges.outgoing).toHaveLength(1); // its own revised_from link
  });
});
