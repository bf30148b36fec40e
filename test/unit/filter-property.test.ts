/**
 * Metadata filters against a brute-force reference on random data (a seeded property test): for
 * random memories and random filter trees, recall (similarity, temporal), list and the filter's
 * own predicate agree with an independent evaluator of the JSON filter. Small workspaces are
 * searched exactly, so results must be identical; past 1,024 vectors the HNSW graph answers, and
 * every result must match and `top_k` must come back whenever that many memories match.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { MemoryView } from '../../src/model/memory.ts';
import { parseFilter } from '../../src/recall/filter.ts';
import { DEFAULT_WEIGHTS, type StrategySpec } from '../../src/recall/types.ts';
import { Shard } from '../../src/shard/shard.ts';
import { until } from '../helpers/wait.ts';
import { mulberry32 } from '../../src/analysis/cluster.ts';

const DIM = 16;
const dirs: string[] = [];
const shards: Shard[] = [];
afterAll(async () => {
  vi.useRealTimers();
  for (const s of shards) await s.shutdown();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** mulberry32 (analysis/cluster.ts): seeded, so every run sees the same cases and a failure names its seed. */
const rng = mulberry32;

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const maybe = (r: R, p = 0.5): boolean => r() < p;

const SOURCES = ['chat', 'email', 'doc', 'Chat'];
const TAGS = ['a', 'b', 'c', 'd'];
const T0 = Date.UTC(2026, 0, 1);

function randomContext(r: R): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  if (maybe(r, 0.8)) c['source'] = pick(r, SOURCES);
  if (maybe(r, 0.7)) c['n'] = Math.floor(r() * 10);
  if (maybe(r, 0.3)) c['n'] = String(Math.floor(r() * 10)); // a string where others have numbers
  if (maybe(r, 0.6)) c['tags'] = TAGS.filter(() => maybe(r, 0.4));
  if (maybe(r, 0.5)) c['nested'] = { level: Math.floor(r() * 4) };
  if (maybe(r, 0.4)) c['flag'] = maybe(r);
  if (maybe(r, 0.2)) c['nul'] = null;
  return c;
}

function vector(r: R): Float32Array {
  const v = new Float32Array(DIM);
  let norm = 0;
  for (let i = 0; i < DIM; i++) {
    v[i] = r() * 2 - 1;
    norm += (v[i] as number) ** 2;
  }
  for (let i = 0; i < DIM; i++) v[i] = (v[i] as number) / Math.sqrt(norm);
  return v;
}

// ─── random filters in the JSON form ─────────────────────────────────────────────────────

const FIELDS: Record<string, (r: R) => unknown> = {
  importance: (r) => Math.round(r() * 10) / 10,
  created_at: (r) => (T0 + Math.floor(r() * 300_000)) * 1000,
  kind: (r) => pick(r, ['episode', 'insight', 'document']),
  entity_id: (r) => pick(r, ['e1', 'e2', 'e3']),
  'context.source': (r) => pick(r, SOURCES),
  'context.n': (r) => (maybe(r, 0.8) ? Math.floor(r() * 10) : String(Math.floor(r() * 10))),
  'context.tags': (r) => pick(r, TAGS),
  'context.nested.level': (r) => Math.floor(r() * 4),
  'context.flag': (r) => maybe(r),
  'context.nul': () => null,
  'context.absent': (r) => pick(r, ['x', 1]),
};

function randomCondition(r: R, field: string): unknown {
  const value = FIELDS[field] as (r: R) => unknown;
  switch (Math.floor(r() * 8)) {
    case 0:
      return value(r);
    case 1:
      return { [pick(r, ['$eq', '$ne'])]: value(r) };
    case 2:
      return {
        [pick(r, ['$in', '$nin'])]: Array.from({ length: 1 + Math.floor(r() * 3) }, () => value(r)),
      };
    case 3:
      return { $exists: maybe(r) };
    default: {
      // Ranges: one or two bounds; the bound may be a number or a string.
      // Ranges take numbers or strings: draw until the field gives one.
      const bound = (): unknown => {
        const v = value(r);
        return typeof v === 'number' || typeof v === 'string' ? v : Math.floor(r() * 10);
      };
      const cond: Record<string, unknown> = { [pick(r, ['$gt', '$gte', '$lt', '$lte'])]: bound() };
      if (maybe(r)) cond[pick(r, ['$gt', '$gte', '$lt', '$lte'])] = bound();
      return cond;
    }
  }
}

function randomFilter(r: R, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const clauses = 1 + Math.floor(r() * 2);
  for (let i = 0; i < clauses; i++) {
    if (depth < 3 && maybe(r, 0.3)) {
      out[pick(r, ['$and', '$or'])] = Array.from({ length: 1 + Math.floor(r() * 3) }, () =>
        randomFilter(r, depth + 1),
      );
    } else {
      const field = pick(r, Object.keys(FIELDS));
      const cond = randomCondition(r, field);
      const prev = out[field];
      // Two conditions on one field merge their operators (a value and an operator object cannot).
      if (
        prev !== undefined &&
        typeof prev === 'object' &&
        prev !== null &&
        !Array.isArray(prev) &&
        typeof cond === 'object' &&
        cond !== null
      )
        Object.assign(prev, cond);
      else out[field] = cond;
    }
  }
  return out;
}

// ─── the reference: evaluates the JSON form directly, as docs/concepts/filters.md describes it ─────────────

function fieldValue(m: MemoryView, field: string): unknown {
  const attrs: Record<string, unknown> = {
    importance: m.importance,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    last_accessed_at: m.lastAccessedAt,
    access_count: m.accessCount,
    kind: m.kind,
    entity_id: m.entityId ?? undefined,
  };
  if (!field.startsWith('context.')) return attrs[field];
  let v: unknown = m.context;
  for (const key of field.slice(8).split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !(key in v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function refMatches(m: MemoryView, f: Record<string, unknown>): boolean {
  return Object.entries(f).every(([key, cond]) => {
    if (key === '$and')
      return (cond as Array<Record<string, unknown>>).every((g) => refMatches(m, g));
    if (key === '$or')
      return (cond as Array<Record<string, unknown>>).some((g) => refMatches(m, g));
    const v = fieldValue(m, key);
    const values = v === undefined ? [] : Array.isArray(v) ? v : [v];
    const ops =
      typeof cond === 'object' && cond !== null ? (cond as Record<string, unknown>) : { $eq: cond };
    return Object.entries(ops).every(([op, x]) => {
      switch (op) {
        case '$eq':
          return values.some((y) => y === x);
        case '$ne':
          return !values.some((y) => y === x);
        case '$in':
          return values.some((y) => (x as unknown[]).includes(y));
        case '$nin':
          return !values.some((y) => (x as unknown[]).includes(y));
        case '$exists':
          return (v !== undefined) === x;
        default:
          return values.some(
            (y) =>
              typeof y === typeof x &&
              (op === '$gt'
                ? (y as number) > (x as number)
                : op === '$gte'
                  ? (y as number) >= (x as number)
                  : op === '$lt'
                    ? (y as number) < (x as number)
                    : (y as number) <= (x as number)),
          );
      }
    });
  });
}

// ─── the workspace under test ────────────────────────────────────────────────────────────

async function build(
  n: number,
  seed: number,
): Promise<{ shard: Shard; vectors: Map<string, Float32Array> }> {
  const dir = mkdtempSync(join(tmpdir(), 'flashbulb-filter-'));
  dirs.push(dir);
  const shard = new Shard({
    shard: 0,
    dir,
    durability: 'os',
    snapshotIntervalS: 3600,
    snapshotWalBytes: 1 << 30,
    eraseWithinS: 60,
  });
  shards.push(shard);
  const r = rng(seed);
  const vectors = new Map<string, Float32Array>();
  vi.useFakeTimers({ toFake: ['Date'] });
  for (let i = 0; i < n; i++) {
    // Creation times advance (ids sort by creation time, as they do for real), unevenly.
    vi.setSystemTime(T0 + i * 200 + Math.floor(r() * 150));
    const embedding = vector(r);
    const [m] = await shard.handle('remember', 'w', {
      items: [
        {
          content: `memory ${i}`,
          importance: Math.round(r() * 10) / 10,
          context: randomContext(r) as never,
          entityId: maybe(r, 0.8) ? pick(r, ['e1', 'e2', 'e3']) : null,
          kind: pick(r, ['episode', 'insight', 'document'] as const),
          embedding: embedding.slice(),
          edges: [],
        },
      ],
    });
    vectors.set(m?.id as string, embedding);
  }
  vi.useRealTimers();
  await until(() => shard.backlogs().index === 0, {
    what: 'the background indexer to finish',
    deadlineMs: 30_000,
    everyMs: 10,
  });
  return { shard, vectors };
}

async function everything(shard: Shard): Promise<MemoryView[]> {
  const out: MemoryView[] = [];
  let cursor: string | null = null;
  do {
    const page: { memories: MemoryView[]; nextCursor: string | null } = await shard.handle(
      'list',
      'w',
      { entityId: null, kind: null, cursor, limit: 1000, includeSuperseded: false },
    );
    out.push(...page.memories);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

function spec(strategy: 'similarity' | 'temporal', topK: number, ef: number): StrategySpec {
  return {
    strategy,
    topK,
    efSearch: ef,
    entityId: null,
    timeRange: null,
    seedId: null,
    edgeTypes: null,
    maxDepth: 5,
    alpha: 0.5,
  };
}

function dotp(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

async function check(
  shard: Shard,
  vectors: Map<string, Float32Array>,
  r: R,
  exact: boolean,
): Promise<{ found: number; wanted: number; overlap: number }> {
  const json = randomFilter(r);
  const filter = parseFilter(json);
  const all = await everything(shard);
  const matching = all.filter((m) => refMatches(m, json));
  const label = JSON.stringify(json);

  const listed = await shard.handle('list', 'w', {
    entityId: null,
    kind: null,
    cursor: null,
    limit: 1000,
    includeSuperseded: false,
    filter,
  });
  expect(
    listed.memories.map((m) => m.id),
    `list ${label}`,
  ).toEqual(matching.slice(0, 1000).map((m) => m.id));

  const k = 1 + Math.floor(r() * 20);
  const newest = [...matching]
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
    .slice(0, k);
  const temporal = await shard.handle('recall', 'w', {
    cue: vector(r),
    cueText: '',
    similarityMode: 'dense',
    cueContext: null,
    strategies: [spec('temporal', k, 50)],
    weights: DEFAULT_WEIGHTS,
    withEmbedding: false,
    filter,
  });
  expect(
    temporal.results.map((h) => h.memory.id),
    `temporal ${label}`,
  ).toEqual(newest.map((m) => m.id));

  const cue = vector(r);
  const want = matching
    .map((m) => ({ id: m.id, sim: dotp(cue, vectors.get(m.id) as Float32Array) }))
    .sort((a, b) => b.sim - a.sim)
    .slice(0, k)
    .map((x) => x.id);
  const similar = await shard.handle('recall', 'w', {
    cue,
    cueText: '',
    similarityMode: 'dense',
    cueContext: null,
    strategies: [spec('similarity', k, 100)],
    withEmbedding: false,
    filter,
    weights: {
      ...DEFAULT_WEIGHTS,
      w_relevance: 1,
      w_recency: 0,
      w_importance: 0,
      w_reinforcement: 0,
    },
  });
  const got = similar.results.map((h) => h.memory.id);
  const matchingIds = new Set(matching.map((m) => m.id));
  expect(
    got.every((id) => matchingIds.has(id)),
    `similarity returned a memory the filter rejects: ${label}`,
  ).toBe(true);
  expect(got.length, `similarity returns top_k whenever that many match: ${label}`).toBe(
    Math.min(k, matching.length),
  );
  if (exact) expect(got, `similarity ${label}`).toEqual(want);
  return { found: got.filter((id) => want.includes(id)).length, wanted: want.length, overlap: 0 };
}

describe('metadata filters against a brute-force reference', () => {
  it('small workspace (exact search): list, temporal and similarity equal the reference for 150 random filters', async () => {
    const { shard, vectors } = await build(300, 7);
    const r = rng(1234);
    let nonEmpty = 0;
    for (let i = 0; i < 150; i++) {
      const res = await check(shard, vectors, r, true);
      if (res.wanted > 0) nonEmpty += 1;
    }
    // The generator must exercise filters that select something, not only empty sets.
    expect(nonEmpty).toBeGreaterThan(60);
  });

  it('past 1,024 vectors (HNSW with the filter inside the search): only matches, top_k whenever that many match, recall@k ≥ 0.9', async () => {
    const { shard, vectors } = await build(1500, 99);
    const r = rng(4321);
    let found = 0;
    let wanted = 0;
    for (let i = 0; i < 60; i++) {
      const res = await check(shard, vectors, r, false);
      found += res.found;
      wanted += res.wanted;
    }
    expect(found / wanted).toBeGreaterThanOrEqual(0.9);
  });
});

describe('filter validation', () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ source: 'chat' }, /filter\.source: unknown field 'source'.*context\.source/],
    [{ importance: { $gte: 'x', $foo: 1 } }, /filter\.importance\.\$foo: unknown operator/],
    [{ $or: [] }, /filter\.\$or must be a non-empty array/],
    [{ $or: [{ kind: 'episode' }, 'x'] }, /filter\.\$or\[1\] must be an object/],
    [{ 'context.tags': ['a', 'b'] }, /use \{"\$in": \[\.\.\.\]\}/],
    [{ 'context.n': { $in: 3 } }, /filter\.context\.n\.\$in must be an array/],
    [{ 'context.n': { $gt: true } }, /\$gt must be a number/],
    [{ 'context.n': { $exists: 'yes' } }, /\$exists must be true or false/],
    [{ 'context.': 1 }, /unknown field/],
    [{ 'context.a..b': 1 }, /empty path segment/],
    [{ $not: { kind: 'episode' } }, /unknown operator '\$not'/],
    [[1], /filter must be an object/],
  ];
  for (const [json, message] of bad) {
    it(`rejects ${JSON.stringify(json)}`, () => {
      expect(() => parseFilter(json)).toThrow(message);
    });
  }
});
