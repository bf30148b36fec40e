/**
 * gRPC `hebbs.v1.MemoryService` write and read paths over real HTTP/2 (DESIGN.md 4, 3.2;
 * HEBBS-WIRE.md 2.3–2.4): Remember, Get, Revise, Forget, SetPolicy, plus ReflectService
 * GetInsights and the RPCs that are not implemented yet. The client is generated at run time
 * from proto/hebbs.proto with the server's own loader options, so uint64 fields arrive as
 * decimal strings, enums as names and bytes as Buffers.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, failsWith, hex, plain, struct, type GrpcClient } from '../helpers/grpc.ts';
import { untilClockPasses } from '../helpers/wait.ts';

/**
 * Background reflection writes insight memories whenever enough new episodes arrive, which would
 * change counts and orderings these tests assert exactly; it is off here (explicit RPCs still run).
 */
const QUIET_ENV = { FLASHBULB_REFLECT_ENABLED: 'false' };

const nowUs = (): bigint => BigInt(Date.now()) * 1000n;

// ─── tests ───────────────────────────────────────────────────────────────────────────────

describe('gRPC MemoryService (auth on, admin key)', () => {
  let t: TestApp;
  let rpc: GrpcClient;
  const mem = (method: string, req: object): Promise<any> => rpc.call('MemoryService', method, req);
  const remember = async (req: object): Promise<any> => (await mem('Remember', req)).memory;

  beforeAll(async () => {
    t = await startTestApp({}, QUIET_ENV);
    rpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey } });
  });
  afterAll(async () => {
    rpc.close();
    await t.stop();
  });

  describe('Remember', () => {
    it('stores a memory and returns the full hebbs.v1 Memory', async () => {
      const before = nowUs();
      const m = await remember({
        content: 'the grpc remember path works',
        importance: 0.7,
        entity_id: 'acme',
      });
      const after = nowUs();
      expect(Buffer.isBuffer(m.memory_id)).toBe(true);
      expect(m.memory_id).toHaveLength(16);
      expect(m.content).toBe('the grpc remember path works');
      expect(m.importance).toBeCloseTo(0.7, 5);
      expect(m.entity_id).toBe('acme');
      expect(m.kind).toBe('MEMORY_KIND_EPISODE');
      // uint64 fields come back as decimal strings (longs: String); timestamps are µs.
      for (const f of [
        'created_at',
        'updated_at',
        'last_accessed_at',
        'access_count',
        'logical_clock',
      ])
        expect(typeof m[f], f).toBe('string');
      const created = BigInt(m.created_at);
      expect(m.created_at).toMatch(/^\d{16}$/);
      expect(
        created >= before - 1000n && created <= after + 1000n,
        `${created} in [${before}, ${after}]`,
      ).toBe(true);
      expect(m.updated_at).toBe(m.created_at);
      expect(m.access_count).toBe('0');
      expect(m.logical_clock).toBe('0');
      expect(m.decay_score).toBeGreaterThan(0);
      expect(m.decay_score).toBeLessThanOrEqual(1);
      expect(m.embedding).toHaveLength(384);
      expect(m.device_id).toBeUndefined();
      expect(m.source_memory_ids).toEqual([]);
      // No context was given: the field is unset, not an empty Struct.
      expect(m.context ?? null).toBeNull();
      // It is really stored, in the admin key's default workspace.
      const rest = await t.req('GET', `/v1/memories/${hex(m.memory_id)}`);
      expect(rest.status).toBe(200);
      expect(rest.body).toMatchObject({
        content: 'the grpc remember path works',
        entity_id: 'acme',
        kind: 'episode',
      });
      expect(rest.body.created_at).toBe(Number(m.created_at));
    });

    it('defaults importance to 0.5, kind to episode and leaves entity_id unset', async () => {
      const m = await remember({ content: 'defaults only' });
      expect(m.importance).toBeCloseTo(0.5, 6);
      expect(m.kind).toBe('MEMORY_KIND_EPISODE');
      expect(m.entity_id).toBeUndefined();
    });

    it('round-trips a context Struct with every value kind (nested struct, list, number, bool, null)', async () => {
      const context = {
        tier: 'enterprise',
        seats: 250,
        ratio: 0.25,
        active: true,
        note: null,
        tags: ['crm', 7, false, null],
        owner: { name: 'Ada', level: 3, sub: { deep: 'yes' } },
      };
      const m = await remember({ content: 'context round trip', context: struct(context) });
      expect(plain(m.context)).toEqual(context);
      const got = (await mem('Get', { memory_id: m.memory_id })).memory;
      expect(plain(got.context)).toEqual(context);
      const rest = await t.req('GET', `/v1/memories/${hex(m.memory_id)}`);
      expect(rest.body.context).toEqual(context);
    });

    it('an empty context Struct is stored as no context', async () => {
      const m = await remember({ content: 'empty struct', context: { fields: {} } });
      expect(m.context ?? null).toBeNull();
      expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`)).body.context).toEqual({});
    });

    it('stores edges of every EDGE_TYPE_* with their confidence', async () => {
      const target = await remember({ content: 'edge target' });
      const types = [
        'EDGE_TYPE_CAUSED_BY',
        'EDGE_TYPE_RELATED_TO',
        'EDGE_TYPE_FOLLOWED_BY',
        'EDGE_TYPE_REVISED_FROM',
        'EDGE_TYPE_INSIGHT_FROM',
        'EDGE_TYPE_CONTRADICTS',
        'EDGE_TYPE_HAS_ENTITY',
        'EDGE_TYPE_ENTITY_RELATION',
        'EDGE_TYPE_PROPOSITION_OF',
      ];
      // Only the edges to `target` are ours: background contradiction checks may link the
      // (similar) sources to each other.
      const sources: string[] = [];
      for (const [i, edge_type] of types.entries()) {
        const confidence = i === 0 ? undefined : 0.5;
        const m = await remember({
          content: `edge source ${i}`,
          edges: [
            {
              target_id: target.memory_id,
              edge_type,
              ...(confidence === undefined ? {} : { confidence }),
            },
          ],
        });
        sources.push(hex(m.memory_id));
        const edges = await t.req('GET', `/v1/memories/${hex(m.memory_id)}/edges`);
        expect(edges.status).toBe(200);
        const toTarget = edges.body.outgoing.filter(
          (e: any) => e.target_id === hex(target.memory_id),
        );
        expect(toTarget, edge_type).toHaveLength(1);
        expect(toTarget[0]).toMatchObject({
          source_id: hex(m.memory_id),
          target_id: hex(target.memory_id),
          edge_type: edge_type.slice('EDGE_TYPE_'.length).toLowerCase(),
          confidence: confidence ?? 1,
        });
      }
      const incoming = (
        await t.req('GET', `/v1/memories/${hex(target.memory_id)}/edges`)
      ).body.incoming.filter((e: any) => sources.includes(e.source_id));
      expect(incoming.map((e: any) => e.edge_type)).toEqual(
        expect.arrayContaining(types.map((x) => x.slice('EDGE_TYPE_'.length).toLowerCase())),
      );
    });

    it('an edge to a memory that does not exist is INVALID_ARGUMENT and stores nothing', async () => {
      const before = (await t.req('GET', '/v1/memories?limit=1000')).body.memories.length;
      await failsWith(
        mem('Remember', {
          content: 'dangling edge',
          edges: [{ target_id: Buffer.alloc(16, 7), edge_type: 'EDGE_TYPE_RELATED_TO' }],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
      expect((await t.req('GET', '/v1/memories?limit=1000')).body.memories).toHaveLength(before);
    });

    it('rejects a bad edge (unspecified type, short target id, confidence > 1) with INVALID_ARGUMENT', async () => {
      const target = await remember({ content: 'bad edge target' });
      await failsWith(
        mem('Remember', {
          content: 'x',
          edges: [{ target_id: target.memory_id, edge_type: 'EDGE_TYPE_UNSPECIFIED' }],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Remember', {
          content: 'x',
          edges: [{ target_id: Buffer.alloc(8), edge_type: 'EDGE_TYPE_RELATED_TO' }],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Remember', {
          content: 'x',
          edges: [
            { target_id: target.memory_id, edge_type: 'EDGE_TYPE_RELATED_TO', confidence: 1.5 },
          ],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('honours kind, and MEMORY_KIND_UNSPECIFIED means episode', async () => {
      for (const kind of [
        'MEMORY_KIND_EPISODE',
        'MEMORY_KIND_INSIGHT',
        'MEMORY_KIND_DOCUMENT',
        'MEMORY_KIND_PROPOSITION',
      ]) {
        const m = await remember({ content: `kind ${kind}`, kind });
        expect(m.kind).toBe(kind);
        expect((await mem('Get', { memory_id: m.memory_id })).memory.kind).toBe(kind);
      }
      expect(
        (await remember({ content: 'kind unspecified', kind: 'MEMORY_KIND_UNSPECIFIED' })).kind,
      ).toBe('MEMORY_KIND_EPISODE');
    });

    it('rejects empty content, importance outside [0, 1] and an over-long entity with INVALID_ARGUMENT', async () => {
      await failsWith(mem('Remember', { content: '' }), grpc.status.INVALID_ARGUMENT);
      await failsWith(mem('Remember', { content: '   ' }), grpc.status.INVALID_ARGUMENT);
      await failsWith(
        mem('Remember', { content: 'x', importance: 1.5 }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Remember', { content: 'x', importance: -0.1 }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Remember', { content: 'x', entity_id: 'e'.repeat(257) }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Remember', { content: 'x'.repeat(64 * 1024 + 1) }),
        grpc.status.INVALID_ARGUMENT,
      );
    });
  });

  describe('Get', () => {
    it('returns the memory by its 16-byte id, with a 384-float embedding (hash embedder)', async () => {
      const m = await remember({
        content: 'get me by id',
        entity_id: 'getter',
        context: struct({ k: 'v' }),
      });
      const got = (await mem('Get', { memory_id: m.memory_id })).memory;
      expect(hex(got.memory_id)).toBe(hex(m.memory_id));
      expect(got).toMatchObject({
        content: 'get me by id',
        entity_id: 'getter',
        kind: 'MEMORY_KIND_EPISODE',
        created_at: m.created_at,
        logical_clock: '0',
      });
      expect(got.embedding).toHaveLength(384);
      const norm = Math.sqrt(got.embedding.reduce((s: number, x: number) => s + x * x, 0));
      expect(norm).toBeCloseTo(1, 3);
      expect(got.embedding).toEqual(m.embedding);
      expect(got.source_memory_ids).toEqual([]);
    });

    it('an id that is not 16 bytes is INVALID_ARGUMENT', async () => {
      for (const len of [0, 1, 15, 17, 32])
        await failsWith(
          mem('Get', { memory_id: Buffer.alloc(len, 1) }),
          grpc.status.INVALID_ARGUMENT,
        );
      // The hex text of an id is 32 bytes on the wire: still wrong.
      const m = await remember({ content: 'hex is not bytes' });
      await failsWith(
        mem('Get', { memory_id: Buffer.from(hex(m.memory_id)) }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('an unknown id is NOT_FOUND', async () => {
      await failsWith(mem('Get', { memory_id: Buffer.alloc(16, 0xab) }), grpc.status.NOT_FOUND);
    });
  });

  describe('Revise', () => {
    it('revises content in place: same id, kind revision, logical_clock 1, re-embedded, older version kept', async () => {
      const m = await remember({
        content: 'the plan is alpha',
        entity_id: 'rev',
        context: struct({ stage: 'draft' }),
      });
      const r = (await mem('Revise', { memory_id: m.memory_id, content: 'the plan is omega' }))
        .memory;
      expect(hex(r.memory_id)).toBe(hex(m.memory_id));
      expect(r.content).toBe('the plan is omega');
      expect(r.kind).toBe('MEMORY_KIND_REVISION');
      expect(r.logical_clock).toBe('1');
      expect(r.entity_id).toBe('rev');
      expect(plain(r.context)).toEqual({ stage: 'draft' });
      expect(BigInt(r.updated_at) >= BigInt(m.updated_at)).toBe(true);
      expect(r.created_at).toBe(m.created_at);
      expect(r.embedding).toHaveLength(384);
      expect(r.embedding).not.toEqual(m.embedding);
      expect(r.source_memory_ids).toEqual([]);
      const r2 = (await mem('Revise', { memory_id: m.memory_id, importance: 0.9 })).memory;
      expect(r2.logical_clock).toBe('2');
      expect(r2.importance).toBeCloseTo(0.9, 5);
      expect(r2.content).toBe('the plan is omega');
      const versions = await t.req('GET', '/v1/memories?include_superseded=true&entity_id=rev');
      expect(versions.body.memories).toHaveLength(3);
    });

    it('context_mode MERGE (and UNSPECIFIED) merges keys; REPLACE replaces the whole context', async () => {
      const m = await remember({ content: 'context modes', context: struct({ a: 1, b: 'two' }) });
      const merged = (
        await mem('Revise', {
          memory_id: m.memory_id,
          context: struct({ b: 'deux', c: true }),
          context_mode: 'CONTEXT_MODE_MERGE',
        })
      ).memory;
      expect(plain(merged.context)).toEqual({ a: 1, b: 'deux', c: true });
      const unspecified = (
        await mem('Revise', { memory_id: m.memory_id, context: struct({ d: null }) })
      ).memory;
      expect(plain(unspecified.context)).toEqual({ a: 1, b: 'deux', c: true, d: null });
      const replaced = (
        await mem('Revise', {
          memory_id: m.memory_id,
          context: struct({ only: ['x'] }),
          context_mode: 'CONTEXT_MODE_REPLACE',
        })
      ).memory;
      expect(plain(replaced.context)).toEqual({ only: ['x'] });
      expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`)).body.context).toEqual({
        only: ['x'],
      });
    });

    it('entity_id: a value sets it, absent keeps it, an empty string clears it', async () => {
      const m = await remember({ content: 'entity moves', entity_id: 'first' });
      const moved = (await mem('Revise', { memory_id: m.memory_id, entity_id: 'second' })).memory;
      expect(moved.entity_id).toBe('second');
      const kept = (await mem('Revise', { memory_id: m.memory_id, importance: 0.2 })).memory;
      expect(kept.entity_id).toBe('second');
      const cleared = (await mem('Revise', { memory_id: m.memory_id, entity_id: '' })).memory;
      expect(cleared.entity_id).toBeUndefined();
      expect((await t.req('GET', `/v1/memories/${hex(m.memory_id)}`)).body.entity_id).toBeNull();
    });

    it('adds edges given with the revision', async () => {
      const target = await remember({ content: 'revise edge target' });
      const m = await remember({ content: 'revise edge source' });
      await mem('Revise', {
        memory_id: m.memory_id,
        edges: [{ target_id: target.memory_id, edge_type: 'EDGE_TYPE_FOLLOWED_BY' }],
      });
      const edges = await t.req('GET', `/v1/memories/${hex(m.memory_id)}/edges`);
      expect(edges.body.outgoing.map((e: any) => [e.edge_type, e.target_id])).toContainEqual([
        'followed_by',
        hex(target.memory_id),
      ]);
    });

    it('errors: nothing to revise / bad id length / bad importance → INVALID_ARGUMENT; unknown id → NOT_FOUND', async () => {
      const m = await remember({ content: 'revise errors' });
      await failsWith(mem('Revise', { memory_id: m.memory_id }), grpc.status.INVALID_ARGUMENT);
      await failsWith(
        mem('Revise', { memory_id: Buffer.alloc(4), content: 'x' }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Revise', { memory_id: m.memory_id, importance: 2 }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Revise', {
          memory_id: m.memory_id,
          edges: [{ target_id: Buffer.alloc(16, 9), edge_type: 'EDGE_TYPE_RELATED_TO' }],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Revise', { memory_id: Buffer.alloc(16, 0xcd), content: 'x' }),
        grpc.status.NOT_FOUND,
      );
      expect((await mem('Get', { memory_id: m.memory_id })).memory.logical_clock).toBe('0');
    });
  });

  describe('Forget', () => {
    const ids = async (entity: string): Promise<string[]> =>
      (await t.req('GET', `/v1/memories?entity_id=${entity}&limit=1000`)).body.memories.map(
        (m: any) => m.memory_id,
      );

    it('by memory_ids: counts as uint64 strings, a tombstone each, Get is NOT_FOUND afterwards', async () => {
      const a = await remember({ content: 'forget me a', entity_id: 'f-ids' });
      const b = await remember({ content: 'forget me b', entity_id: 'f-ids' });
      const keep = await remember({ content: 'keep me', entity_id: 'f-ids' });
      const res = await mem('Forget', { memory_ids: [a.memory_id, b.memory_id] });
      expect(res).toEqual({
        forgotten_count: '2',
        cascade_count: '0',
        truncated: false,
        tombstone_count: '2',
      });
      await failsWith(mem('Get', { memory_id: a.memory_id }), grpc.status.NOT_FOUND);
      expect(await ids('f-ids')).toEqual([hex(keep.memory_id)]);
    });

    it('by entity_id, cascading to superseded versions', async () => {
      const a = await remember({ content: 'entity forget one', entity_id: 'f-ent' });
      await remember({ content: 'entity forget two', entity_id: 'f-ent' });
      const other = await remember({ content: 'other entity', entity_id: 'f-other' });
      await mem('Revise', { memory_id: a.memory_id, content: 'entity forget one v2' });
      const res = await mem('Forget', { entity_id: 'f-ent' });
      expect(res).toEqual({
        forgotten_count: '2',
        cascade_count: '1',
        truncated: false,
        tombstone_count: '3',
      });
      expect(await ids('f-ent')).toEqual([]);
      expect(await ids('f-other')).toEqual([hex(other.memory_id)]);
    });

    it('by staleness_threshold_us (last access older than the cutoff), combined with entity_id', async () => {
      const old = await remember({ content: 'stale memory', entity_id: 'f-stale' });
      const cutoff = BigInt(old.last_accessed_at) + 1n;
      await untilClockPasses(Number(old.last_accessed_at));
      const fresh = await remember({ content: 'fresh memory', entity_id: 'f-stale' });
      expect(BigInt(fresh.last_accessed_at) >= cutoff).toBe(true);
      const res = await mem('Forget', {
        entity_id: 'f-stale',
        staleness_threshold_us: cutoff.toString(),
      });
      expect(res.forgotten_count).toBe('1');
      expect(await ids('f-stale')).toEqual([hex(fresh.memory_id)]);
    });

    it('by access_count_floor (fewer accesses than it)', async () => {
      const a = await remember({ content: 'never read', entity_id: 'f-acc' });
      const res0 = await mem('Forget', { entity_id: 'f-acc', access_count_floor: '0' });
      expect(res0.forgotten_count).toBe('0');
      const res = await mem('Forget', { entity_id: 'f-acc', access_count_floor: '1' });
      expect(res.forgotten_count).toBe('1');
      await failsWith(mem('Get', { memory_id: a.memory_id }), grpc.status.NOT_FOUND);
    });

    it('by memory_kind', async () => {
      await remember({ content: 'an episode', entity_id: 'f-kind' });
      const doc = await remember({
        content: 'a document',
        entity_id: 'f-kind',
        kind: 'MEMORY_KIND_DOCUMENT',
      });
      const res = await mem('Forget', { entity_id: 'f-kind', memory_kind: 'MEMORY_KIND_DOCUMENT' });
      expect(res.forgotten_count).toBe('1');
      await failsWith(mem('Get', { memory_id: doc.memory_id }), grpc.status.NOT_FOUND);
      expect(await ids('f-kind')).toHaveLength(1);
    });

    it('by decay_score_floor (decay below it)', async () => {
      const low = await remember({
        content: 'low importance',
        entity_id: 'f-decay',
        importance: 0.1,
      });
      const high = await remember({
        content: 'high importance',
        entity_id: 'f-decay',
        importance: 0.9,
      });
      expect(low.decay_score).toBeLessThan(0.5);
      expect(high.decay_score).toBeGreaterThan(0.5);
      const res = await mem('Forget', { entity_id: 'f-decay', decay_score_floor: 0.5 });
      expect(res.forgotten_count).toBe('1');
      expect(await ids('f-decay')).toEqual([hex(high.memory_id)]);
    });

    it('unknown ids forget nothing; no criterion or a bad id is INVALID_ARGUMENT', async () => {
      expect(await mem('Forget', { memory_ids: [Buffer.alloc(16, 0xee)] })).toEqual({
        forgotten_count: '0',
        cascade_count: '0',
        truncated: false,
        tombstone_count: '0',
      });
      await failsWith(mem('Forget', {}), grpc.status.INVALID_ARGUMENT);
      await failsWith(
        mem('Forget', { memory_ids: [Buffer.alloc(3)] }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        mem('Forget', { entity_id: 'x', decay_score_floor: -1 }),
        grpc.status.INVALID_ARGUMENT,
      );
    });
  });

  describe('SetPolicy', () => {
    it('is UNIMPLEMENTED (Flashbulb keeps no per-tenant policies)', async () => {
      const err = await failsWith(
        mem('SetPolicy', {
          max_snapshots_per_memory: 5,
          auto_forget_threshold: 0.1,
          decay_half_life_days: 30,
        }),
        grpc.status.UNIMPLEMENTED,
      );
      expect(err.details).toMatch(/SetPolicy/);
    });
  });

  describe('ReflectService.GetInsights', () => {
    it('an empty workspace answers an empty list', async () => {
      const ws = `insights-empty-${process.pid}`;
      expect((await t.req('POST', '/v1/workspaces', { body: { slug: ws } })).status).toBe(201);
      const res = await rpc.call('ReflectService', 'GetInsights', { tenant_id: ws });
      expect(res).toEqual({ insights: [] });
    });

    it('returns insight memories only, most confident first, filtered by entity, min_confidence and max_results', async () => {
      const ws = `insights-${process.pid}`;
      expect((await t.req('POST', '/v1/workspaces', { body: { slug: ws } })).status).toBe(201);
      const put = (req: object): Promise<any> =>
        rpc.call('MemoryService', 'Remember', { tenant_id: ws, ...req });
      await put({ content: 'an episode, not an insight', entity_id: 'ins' });
      const lo = (
        await put({
          content: 'low confidence insight',
          entity_id: 'ins',
          kind: 'MEMORY_KIND_INSIGHT',
          context: struct({ confidence: 0.3 }),
        })
      ).memory;
      const hi = (
        await put({
          content: 'high confidence insight',
          entity_id: 'ins',
          kind: 'MEMORY_KIND_INSIGHT',
          context: struct({ confidence: 0.9 }),
        })
      ).memory;
      const other = (
        await put({
          content: 'other entity insight',
          entity_id: 'ins-2',
          kind: 'MEMORY_KIND_INSIGHT',
          context: struct({ confidence: 0.6 }),
        })
      ).memory;
      const get = (req: object): Promise<any[]> =>
        rpc
          .call('ReflectService', 'GetInsights', { tenant_id: ws, ...req })
          .then((r) => r.insights);

      const all = await get({});
      expect(all.map((m) => hex(m.memory_id))).toEqual([
        hex(hi.memory_id),
        hex(other.memory_id),
        hex(lo.memory_id),
      ]);
      for (const m of all) {
        expect(m.kind).toBe('MEMORY_KIND_INSIGHT');
        expect(m.source_memory_ids).toEqual([]);
        expect(typeof m.created_at).toBe('string');
      }
      expect((await get({ entity_id: 'ins' })).map((m) => m.content)).toEqual([
        'high confidence insight',
        'low confidence insight',
      ]);
      expect((await get({ min_confidence: 0.5 })).map((m) => m.content)).toEqual([
        'high confidence insight',
        'other entity insight',
      ]);
      expect((await get({ max_results: 1 })).map((m) => m.content)).toEqual([
        'high confidence insight',
      ]);
      // max_results 0 (proto3 default sent explicitly) means "no limit given".
      expect(await get({ max_results: 0 })).toHaveLength(3);
      await failsWith(
        rpc.call('ReflectService', 'GetInsights', { min_confidence: 1.5 }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('fills Memory.embedding like every other RPC that returns a Memory', async () => {
      const ws = `insights-emb-${process.pid}`;
      expect((await t.req('POST', '/v1/workspaces', { body: { slug: ws } })).status).toBe(201);
      await rpc.call('MemoryService', 'Remember', {
        tenant_id: ws,
        content: 'insight with embedding',
        kind: 'MEMORY_KIND_INSIGHT',
        context: struct({ confidence: 0.8 }),
      });
      const [ins] = (await rpc.call('ReflectService', 'GetInsights', { tenant_id: ws })).insights;
      expect(ins?.embedding).toHaveLength(384);
    });
  });

  describe('reflection and contradiction review', () => {
    it('Reflect needs a scope', async () => {
      await failsWith(rpc.call('ReflectService', 'Reflect', {}), grpc.status.INVALID_ARGUMENT);
    });
    it('Reflect with an entity scope answers its counts', async () => {
      const r = await rpc.call('ReflectService', 'Reflect', {
        scope: { entity: { entity_id: 'nobody-here' } },
      });
      expect(r).toMatchObject({
        insights_created: '0',
        clusters_found: '0',
        memories_processed: '0',
      });
    });
    it('ReflectPrepare hands out a session id', async () => {
      const r = await rpc.call('ReflectService', 'ReflectPrepare', { scope: { global: {} } });
      expect(r.session_id).toMatch(/^[0-9A-Z]{26}$/);
    });
    it('ReflectCommit with an unknown session is NOT_FOUND', async () => {
      await failsWith(
        rpc.call('ReflectService', 'ReflectCommit', {
          session_id: '01J0000000000000000000000',
          insights: [{ content: 'x', confidence: 0.9, source_memory_ids: ['00'.repeat(16)] }],
        }),
        grpc.status.NOT_FOUND,
      );
    });
    it('ContradictionPrepare answers a (possibly empty) list', async () => {
      const r = await rpc.call('ReflectService', 'ContradictionPrepare', {});
      expect(Array.isArray(r.candidates)).toBe(true);
    });
    it('ContradictionCommit with an unknown pending id is NOT_FOUND', async () => {
      await failsWith(
        rpc.call('ReflectService', 'ContradictionCommit', {
          verdicts: [{ pending_id: 'ab'.repeat(16), verdict: 'dismiss', confidence: 0.5 }],
        }),
        grpc.status.NOT_FOUND,
      );
    });
  });
});
