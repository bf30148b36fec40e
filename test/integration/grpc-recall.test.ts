/**
 * gRPC `hebbs.v1.MemoryService` Recall and Prime over real HTTP/2 (DESIGN.md 4, 6, 7;
 * HEBBS-WIRE.md 2.3–2.4, "What real clients depend on"). Authentication is off so every test
 * can work in a fresh workspace named by `tenant_id` (auto-created). The hash embedder makes
 * relevance a matter of shared words, which keeps the expectations exact.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc, failsWith, hex, struct, type GrpcClient } from '../helpers/grpc.ts';
import { until, untilClockPasses } from '../helpers/wait.ts';

/**
 * Background reflection writes insight memories whenever enough new episodes arrive, which would
 * change counts and orderings these tests assert exactly; it is off here (explicit RPCs still run).
 */
const QUIET_ENV = { FLASHBULB_REFLECT_ENABLED: 'false' };

const contents = (results: any[]): string[] => results.map((r) => r.memory.content);
const detailsOf = (results: any[], type: string): any[] =>
  results.flatMap((r) => r.strategy_details.filter((d: any) => d.strategy_type === type));

// ─── tests ───────────────────────────────────────────────────────────────────────────────

describe('gRPC Recall and Prime (auth off, one workspace per test via tenant_id)', () => {
  let t: TestApp;
  let rpc: GrpcClient;
  let n = 0;
  /** A fresh workspace, and calls bound to it. */
  const workspace = (): {
    ws: string;
    put: (req: object) => Promise<any>;
    recall: (req: object) => Promise<any>;
    prime: (req: object) => Promise<any>;
  } => {
    const ws = `rc-${process.pid}-${++n}`;
    return {
      ws,
      put: async (req) =>
        (await rpc.call('MemoryService', 'Remember', { tenant_id: ws, ...req })).memory,
      recall: (req) => rpc.call('MemoryService', 'Recall', { tenant_id: ws, ...req }),
      prime: (req) => rpc.call('MemoryService', 'Prime', { tenant_id: ws, ...req }),
    };
  };

  beforeAll(async () => {
    t = await startTestApp({ authEnabled: false }, QUIET_ENV);
    rpc = connectGrpc(t.app.grpcPort);
  });
  afterAll(async () => {
    rpc.close();
    await t.stop();
  });

  describe('Recall: strategies', () => {
    it('SIMILARITY ranks by shared meaning and reports relevance and distance', async () => {
      const w = workspace();
      await w.put({ content: 'red apples grow in the orchard' });
      await w.put({ content: 'yellow bananas ripen slowly' });
      await w.put({ content: 'trains run on steel rails' });
      const res = await w.recall({
        cue: 'red apples orchard',
        strategies: [{ strategy_type: 'SIMILARITY' }],
      });
      expect(res.strategy_errors).toEqual([]);
      expect(res.results).toHaveLength(3);
      expect(res.results[0].memory.content).toBe('red apples grow in the orchard');
      for (const r of res.results) {
        expect(r.strategy_details).toHaveLength(1);
        const [d] = r.strategy_details;
        expect(d.strategy_type).toBe('SIMILARITY');
        expect(d.relevance).toBeGreaterThanOrEqual(0);
        expect(d.relevance).toBeLessThanOrEqual(1);
        expect(d.distance).toBeCloseTo(1 - d.relevance, 5);
        for (const absent of [
          'timestamp',
          'rank',
          'depth',
          'causal_edge_type',
          'seed_id',
          'embedding_similarity',
          'structural_similarity',
        ])
          expect(d[absent], absent).toBeUndefined();
        expect(r.memory.embedding).toHaveLength(384);
        expect(r.memory.source_memory_ids).toEqual([]);
        expect(typeof r.memory.created_at).toBe('string');
      }
      expect(res.results[0].strategy_details[0].relevance).toBeGreaterThan(
        res.results[1].strategy_details[0].relevance,
      );
    });

    it('TEMPORAL lists newest first with rank and a µs timestamp (= created_at), and honours time_range', async () => {
      const w = workspace();
      const made: any[] = [];
      for (const word of ['one', 'two', 'three', 'four']) {
        made.push(await w.put({ content: `event ${word}` }));
        await untilClockPasses(Number(made[made.length - 1].created_at));
      }
      const res = await w.recall({ cue: 'events', strategies: [{ strategy_type: 'TEMPORAL' }] });
      expect(contents(res.results)).toEqual([
        'event four',
        'event three',
        'event two',
        'event one',
      ]);
      res.results.forEach((r: any, i: number) => {
        const [d] = r.strategy_details;
        expect(d.strategy_type).toBe('TEMPORAL');
        expect(d.rank).toBe(i + 1);
        expect(d.timestamp).toBe(r.memory.created_at);
        expect(d.distance).toBeUndefined();
      });
      const ranged = await w.recall({
        cue: 'events',
        strategies: [
          {
            strategy_type: 'TEMPORAL',
            time_range: { start_us: made[1].created_at, end_us: made[2].created_at },
          },
        ],
      });
      expect(contents(ranged.results)).toEqual(['event three', 'event two']);
      const openEnd = await w.recall({
        cue: 'events',
        strategies: [
          { strategy_type: 'TEMPORAL', time_range: { start_us: made[2].created_at, end_us: '0' } },
        ],
      });
      expect(contents(openEnd.results)).toEqual(['event four', 'event three']);
      await failsWith(
        w.recall({
          cue: 'events',
          strategies: [
            {
              strategy_type: 'TEMPORAL',
              time_range: { start_us: made[2].created_at, end_us: made[1].created_at },
            },
          ],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('CAUSAL walks edges from the seed both ways, with depth, edge type, seed id, max_depth and edge_types', async () => {
      const w = workspace();
      const a = await w.put({ content: 'the server ran out of disk' });
      const b = await w.put({
        content: 'the database crashed',
        edges: [{ target_id: a.memory_id, edge_type: 'EDGE_TYPE_CAUSED_BY' }],
      });
      const c = await w.put({
        content: 'customers saw errors',
        edges: [{ target_id: b.memory_id, edge_type: 'EDGE_TYPE_CAUSED_BY' }],
      });
      const d = await w.put({
        content: 'a disk alert was ignored',
        edges: [{ target_id: a.memory_id, edge_type: 'EDGE_TYPE_RELATED_TO' }],
      });
      // The edge types written here; background contradiction checks may add CONTRADICTS or
      // REVISED_FROM edges between similar memories, which the walks below leave out.
      const ours = ['EDGE_TYPE_CAUSED_BY', 'EDGE_TYPE_RELATED_TO'];
      const walk = async (cfg: object): Promise<any> =>
        w.recall({
          cue: 'why did customers see errors',
          strategies: [
            { strategy_type: 'CAUSAL', seed_memory_id: c.memory_id, edge_types: ours, ...cfg },
          ],
        });

      const all = await walk({});
      expect(all.strategy_errors).toEqual([]);
      const byContent = new Map(
        all.results.map((r: any) => [r.memory.content, r.strategy_details[0]]),
      );
      expect([...byContent.keys()].sort()).toEqual([
        'a disk alert was ignored',
        'the database crashed',
        'the server ran out of disk',
      ]);
      expect(byContent.get('the database crashed')).toMatchObject({
        strategy_type: 'CAUSAL',
        depth: 1,
        causal_edge_type: 'EDGE_TYPE_CAUSED_BY',
      });
      expect(byContent.get('the server ran out of disk')).toMatchObject({
        depth: 2,
        causal_edge_type: 'EDGE_TYPE_CAUSED_BY',
      });
      expect(byContent.get('a disk alert was ignored')).toMatchObject({
        depth: 3,
        causal_edge_type: 'EDGE_TYPE_RELATED_TO',
      });
      for (const r of all.results)
        expect(hex(r.strategy_details[0].seed_id)).toBe(hex(c.memory_id));

      expect(contents((await walk({ max_depth: 1 })).results)).toEqual(['the database crashed']);
      expect(
        contents((await walk({ edge_types: ['EDGE_TYPE_CAUSED_BY'] })).results).sort(),
      ).toEqual(['the database crashed', 'the server ran out of disk']);
      // Walking from the other end reaches the same graph (both directions).
      const fromA = await w.recall({
        cue: 'x',
        strategies: [
          { strategy_type: 'CAUSAL', seed_memory_id: a.memory_id, max_depth: 1, edge_types: ours },
        ],
      });
      expect(contents(fromA.results).sort()).toEqual([
        'a disk alert was ignored',
        'the database crashed',
      ]);
      // Without a seed, the memory nearest the cue seeds the walk.
      const unseeded = await w.recall({
        cue: 'customers saw errors',
        strategies: [{ strategy_type: 'CAUSAL', max_depth: 1, edge_types: ours }],
      });
      expect(unseeded.strategy_errors).toEqual([]);
      expect(contents(unseeded.results)).toEqual(['the database crashed']);
      expect(hex(unseeded.results[0].strategy_details[0].seed_id)).toBe(hex(c.memory_id));
      expect(d.memory_id).toHaveLength(16);
    });

    it('CAUSAL with no edges is an entry in strategy_errors, not a failed call; other strategies still answer', async () => {
      const w = workspace();
      await w.put({ content: 'a lonely memory without edges' });
      const res = await w.recall({
        cue: 'lonely memory',
        strategies: [{ strategy_type: 'CAUSAL' }],
      });
      expect(res.results).toEqual([]);
      expect(res.strategy_errors).toHaveLength(1);
      expect(res.strategy_errors[0].strategy).toBe('CAUSAL');
      expect(res.strategy_errors[0].message.length).toBeGreaterThan(0);
      const mixed = await w.recall({
        cue: 'lonely memory',
        strategies: [{ strategy_type: 'SIMILARITY' }, { strategy_type: 'CAUSAL' }],
      });
      expect(contents(mixed.results)).toEqual(['a lonely memory without edges']);
      expect(mixed.strategy_errors.map((e: any) => e.strategy)).toEqual(['CAUSAL']);
      // An empty workspace and an unknown seed are strategy errors too.
      const empty = workspace();
      const none = await empty.recall({
        cue: 'anything',
        strategies: [{ strategy_type: 'CAUSAL' }],
      });
      expect(none.results).toEqual([]);
      expect(none.strategy_errors.map((e: any) => e.strategy)).toEqual(['CAUSAL']);
      const unknownSeed = await w.recall({
        cue: 'x',
        strategies: [{ strategy_type: 'CAUSAL', seed_memory_id: Buffer.alloc(16, 0x42) }],
      });
      expect(unknownSeed.strategy_errors.map((e: any) => e.strategy)).toEqual(['CAUSAL']);
      // A seed id of the wrong length is the caller's error.
      await failsWith(
        w.recall({
          cue: 'x',
          strategies: [{ strategy_type: 'CAUSAL', seed_memory_id: Buffer.alloc(5) }],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('ANALOGICAL reports embedding and structural similarity, and honours analogical_alpha and cue_context', async () => {
      const w = workspace();
      await w.put({
        content: 'the deal with acme closed',
        context: struct({ stage: 'won', amount: 100 }),
        entity_id: 'acme',
      });
      await w.put({
        content: 'the deal with globex closed',
        context: struct({ stage: 'won', amount: 200 }),
        entity_id: 'globex',
      });
      await w.put({ content: 'a note about lunch' });
      const res = await w.recall({
        cue: 'deal closed',
        strategies: [{ strategy_type: 'ANALOGICAL' }],
        cue_context: struct({ stage: 'lost', amount: 5 }),
      });
      expect(res.strategy_errors).toEqual([]);
      expect(res.results.length).toBeGreaterThan(0);
      for (const r of res.results) {
        const [d] = r.strategy_details;
        expect(d.strategy_type).toBe('ANALOGICAL');
        for (const f of ['embedding_similarity', 'structural_similarity']) {
          expect(d[f], f).toBeGreaterThanOrEqual(0);
          expect(d[f], f).toBeLessThanOrEqual(1);
        }
      }
      // α = 1: ranking by embedding similarity alone.
      const pure = await w.recall({
        cue: 'deal closed',
        strategies: [{ strategy_type: 'ANALOGICAL', analogical_alpha: 1 }],
      });
      const sims = pure.results.map((r: any) => r.strategy_details[0].embedding_similarity);
      expect([...sims].sort((x, y) => y - x)).toEqual(sims);
      await failsWith(
        w.recall({
          cue: 'deal',
          strategies: [{ strategy_type: 'ANALOGICAL', analogical_alpha: 1.5 }],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('several strategies in one request merge by memory, details concatenated', async () => {
      const w = workspace();
      await w.put({ content: 'merge me please' });
      const res = await w.recall({
        cue: 'merge me please',
        strategies: [
          { strategy_type: 'SIMILARITY' },
          { strategy_type: 'TEMPORAL' },
          { strategy_type: 'ANALOGICAL' },
        ],
      });
      expect(res.results).toHaveLength(1);
      expect(res.results[0].strategy_details.map((d: any) => d.strategy_type)).toEqual([
        'SIMILARITY',
        'TEMPORAL',
        'ANALOGICAL',
      ]);
    });
  });

  describe('Recall: options', () => {
    it('similarity_mode (Flashbulb addition): hybrid by default with cosine and lexical details; DENSE ranks by cosine; LEXICAL by words', async () => {
      const w = workspace();
      for (const content of [
        'what did the kids cook',
        'cook dinner at seven',
        'the cook left early',
        'what should we cook',
        'Anneliese made a lentil stew',
      ])
        await w.put({ content });
      const top = async (extra: object): Promise<any> =>
        (
          await w.recall({
            cue: 'what did Anneliese cook?',
            strategies: [{ strategy_type: 'SIMILARITY' }],
            ...extra,
          })
        ).results[0];
      const hybrid = await top({});
      expect(hybrid.memory.content).toBe('Anneliese made a lentil stew');
      const [d] = hybrid.strategy_details;
      expect(d.lexical).toBeGreaterThan(0);
      expect(d.cosine).toBeGreaterThan(0);
      expect(d.relevance).toBeGreaterThan(0);
      expect(d.relevance).not.toBeCloseTo(d.cosine, 3);
      expect((await top({ similarity_mode: 'SIMILARITY_MODE_HYBRID' })).memory.content).toBe(
        'Anneliese made a lentil stew',
      );
      expect((await top({ similarity_mode: 'SIMILARITY_MODE_LEXICAL' })).memory.content).toBe(
        'Anneliese made a lentil stew',
      );
      // A value the enum does not define (a newer client, or garbage) is a client error.
      const bad = await failsWith(
        w.recall({ cue: 'x', strategies: [{ strategy_type: 'SIMILARITY' }], similarity_mode: 7 }),
        grpc.status.INVALID_ARGUMENT,
      );
      expect(bad.details).toMatch(/similarity_mode/);
      const dense = await top({ similarity_mode: 'SIMILARITY_MODE_DENSE' });
      expect(dense.memory.content).toBe('what did the kids cook');
      expect(dense.strategy_details[0].relevance).toBeCloseTo(dense.strategy_details[0].cosine, 5);
    });

    it('per-strategy top_k applies to that strategy and falls back to the request top_k, then to 10', async () => {
      const w = workspace();
      for (let i = 0; i < 12; i++) await w.put({ content: `note number ${i}` });
      const count = async (req: object): Promise<number> =>
        (await w.recall({ cue: 'note number', ...req })).results.length;
      expect(await count({ strategies: [{ strategy_type: 'TEMPORAL', top_k: 2 }], top_k: 5 })).toBe(
        2,
      );
      expect(await count({ strategies: [{ strategy_type: 'TEMPORAL' }], top_k: 5 })).toBe(5);
      expect(await count({ strategies: [{ strategy_type: 'TEMPORAL' }] })).toBe(10);
      expect(await count({ strategies: [{ strategy_type: 'SIMILARITY', top_k: 3 }] })).toBe(3);
      expect(await count({ strategies: [{ strategy_type: 'SIMILARITY' }], top_k: 4 })).toBe(4);
      // Mixed: temporal takes 1 of its own, similarity falls back to the request's 3.
      const mixed = await w.recall({
        cue: 'note number 3',
        strategies: [{ strategy_type: 'TEMPORAL', top_k: 1 }, { strategy_type: 'SIMILARITY' }],
        top_k: 3,
      });
      expect(detailsOf(mixed.results, 'TEMPORAL')).toHaveLength(1);
      expect(detailsOf(mixed.results, 'SIMILARITY')).toHaveLength(3);
      await failsWith(
        w.recall({ cue: 'x', strategies: [{ strategy_type: 'TEMPORAL', top_k: 1001 }] }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        w.recall({ cue: 'x', strategies: [{ strategy_type: 'TEMPORAL' }], top_k: 1001 }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('entity_id inside RecallStrategyConfig scopes that strategy (the SDK sends it there)', async () => {
      const w = workspace();
      for (let i = 0; i < 3; i++) {
        await w.put({ content: `acme renewal call ${i}`, entity_id: 'acme' });
        await w.put({ content: `globex renewal call ${i}`, entity_id: 'globex' });
      }
      const sim = await w.recall({
        cue: 'globex renewal call',
        strategies: [{ strategy_type: 'SIMILARITY', entity_id: 'acme' }],
      });
      expect(sim.results).toHaveLength(3);
      for (const r of sim.results) expect(r.memory.entity_id).toBe('acme');
      const temporal = await w.recall({
        cue: 'renewal',
        strategies: [{ strategy_type: 'TEMPORAL', entity_id: 'globex' }],
      });
      expect(contents(temporal.results)).toEqual([
        'globex renewal call 2',
        'globex renewal call 1',
        'globex renewal call 0',
      ]);
      const analog = await w.recall({
        cue: 'renewal call',
        strategies: [{ strategy_type: 'ANALOGICAL', entity_id: 'globex' }],
      });
      for (const r of analog.results) expect(r.memory.entity_id).toBe('globex');
      // Different entities per strategy in one request; an empty entity_id means none.
      const split = await w.recall({
        cue: 'renewal call',
        strategies: [
          { strategy_type: 'TEMPORAL', entity_id: 'acme', top_k: 1 },
          { strategy_type: 'TEMPORAL', entity_id: 'globex', top_k: 1 },
        ],
      });
      expect(contents(split.results).sort()).toEqual([
        'acme renewal call 2',
        'globex renewal call 2',
      ]);
      const unscoped = await w.recall({
        cue: 'renewal call',
        strategies: [{ strategy_type: 'TEMPORAL', entity_id: '' }],
      });
      expect(unscoped.results).toHaveLength(6);
      const unknown = await w.recall({
        cue: 'renewal call',
        strategies: [{ strategy_type: 'SIMILARITY', entity_id: 'nobody' }],
      });
      expect(unknown.results).toEqual([]);
    });

    it('scoring weights 1/0/0/0 with only the four weights set give score == relevance, for every strategy', async () => {
      const w = workspace();
      const a = await w.put({ content: 'score equals relevance', importance: 0.9 });
      await w.put({
        content: 'something else entirely',
        importance: 0.1,
        edges: [{ target_id: a.memory_id, edge_type: 'EDGE_TYPE_RELATED_TO' }],
      });
      const weights = { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 };
      const res = await w.recall({
        cue: 'score equals relevance',
        strategies: [
          { strategy_type: 'SIMILARITY' },
          { strategy_type: 'TEMPORAL' },
          { strategy_type: 'CAUSAL', seed_memory_id: a.memory_id },
          { strategy_type: 'ANALOGICAL' },
        ],
        scoring_weights: weights,
      });
      expect(res.results).toHaveLength(2);
      for (const r of res.results) {
        for (const d of r.strategy_details) expect(r.score).toBeCloseTo(d.relevance, 5);
      }
      // The cue repeats the first memory: cosine 1; hybrid relevance ≥ 1/1.4 (see recall/strategies.ts).
      expect(detailsOf(res.results.slice(0, 1), 'SIMILARITY')[0].cosine).toBeCloseTo(1, 5);
      expect(res.results[0].score).toBeGreaterThanOrEqual(1 / 1.4 - 1e-6);
      expect(contents(res.results)[0]).toBe('score equals relevance');
    });

    it('max_age_us and reinforcement_cap left at 0 mean the defaults, not zero; other values are honoured', async () => {
      const w = workspace();
      const m = await w.put({ content: 'fresh memory for weights', importance: 0.3 });
      const score = async (sw: object): Promise<number> => {
        const res = await w.recall({
          cue: 'fresh memory for weights',
          strategies: [{ strategy_type: 'SIMILARITY', top_k: 1 }],
          scoring_weights: sw,
        });
        expect(res.results).toHaveLength(1);
        return res.results[0].score;
      };
      // Recency alone: the default max age (30 days) makes a fresh memory's recency ≈ 1.
      expect(
        await score({ w_relevance: 0, w_recency: 1, w_importance: 0, w_reinforcement: 0 }),
      ).toBeGreaterThan(0.999);
      expect(
        await score({
          w_relevance: 0,
          w_recency: 1,
          w_importance: 0,
          w_reinforcement: 0,
          max_age_us: '0',
        }),
      ).toBeGreaterThan(0.999);
      // A 1 µs max age is honoured: recency 0.
      expect(
        await score({
          w_relevance: 0,
          w_recency: 1,
          w_importance: 0,
          w_reinforcement: 0,
          max_age_us: '1',
        }),
      ).toBeCloseTo(0, 6);
      // Importance alone.
      expect(
        await score({ w_relevance: 0, w_recency: 0, w_importance: 1, w_reinforcement: 0 }),
      ).toBeCloseTo(0.3, 5);
      // Reinforcement alone with cap 0 (= default 100) is finite and within [0, 1]; cap 1 saturates at once.
      const reinf = await score({
        w_relevance: 0,
        w_recency: 0,
        w_importance: 0,
        w_reinforcement: 1,
      });
      expect(Number.isFinite(reinf)).toBe(true);
      expect(reinf).toBeGreaterThanOrEqual(0);
      expect(reinf).toBeLessThan(1);
      let got: any;
      await until(
        async () => {
          got = (
            await rpc.call('MemoryService', 'Get', { tenant_id: w.ws, memory_id: m.memory_id })
          ).memory;
          return Number(got.access_count) > 0;
        },
        { what: 'the recalls to be counted as accesses', deadlineMs: 2_000 },
      ).catch(() => undefined);
      const accesses = Number(got.access_count);
      expect(accesses).toBeGreaterThan(0);
      expect(
        await score({
          w_relevance: 0,
          w_recency: 0,
          w_importance: 0,
          w_reinforcement: 1,
          reinforcement_cap: '1',
        }),
      ).toBeCloseTo(1, 5);
      // All weights 0 is allowed and scores 0; a negative weight is refused.
      expect(
        await score({ w_relevance: 0, w_recency: 0, w_importance: 0, w_reinforcement: 0 }),
      ).toBe(0);
      await failsWith(
        w.recall({
          cue: 'x',
          strategies: [{ strategy_type: 'SIMILARITY' }],
          scoring_weights: { w_relevance: -1 },
        }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('without scoring_weights the defaults 0.5/0.2/0.2/0.1 apply', async () => {
      const w = workspace();
      await w.put({ content: 'default weights apply here', importance: 0.8 });
      const res = await w.recall({
        cue: 'default weights apply here',
        strategies: [{ strategy_type: 'SIMILARITY' }],
      });
      const [r] = res.results;
      const relevance = r.strategy_details[0].relevance;
      const reinforcement = Math.min(
        1,
        Math.log2(1 + Number(r.memory.access_count)) / Math.log2(101),
      );
      // Recency of a memory a few ms old is 1 to within 1e-6; the returned access_count may already include this recall.
      const expected = 0.5 * relevance + 0.2 * 1 + 0.2 * 0.8;
      expect(r.score).toBeGreaterThanOrEqual(expected - 1e-4);
      expect(r.score).toBeLessThanOrEqual(expected + 0.1 * reinforcement + 1e-4);
    });

    it('errors: empty cue, UNSPECIFIED_STRATEGY and no strategies are INVALID_ARGUMENT', async () => {
      const w = workspace();
      await w.put({ content: 'something to find' });
      await failsWith(
        w.recall({ cue: '', strategies: [{ strategy_type: 'SIMILARITY' }] }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        w.recall({ cue: '   ', strategies: [{ strategy_type: 'SIMILARITY' }] }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        w.recall({ cue: 'something', strategies: [{ strategy_type: 'UNSPECIFIED_STRATEGY' }] }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(
        w.recall({
          cue: 'something',
          strategies: [{ strategy_type: 'SIMILARITY' }, { strategy_type: 'UNSPECIFIED_STRATEGY' }],
        }),
        grpc.status.INVALID_ARGUMENT,
      );
      await failsWith(w.recall({ cue: 'something', strategies: [] }), grpc.status.INVALID_ARGUMENT);
      await failsWith(
        w.recall({ cue: 'x'.repeat(64 * 1024 + 1), strategies: [{ strategy_type: 'SIMILARITY' }] }),
        grpc.status.INVALID_ARGUMENT,
      );
    });

    it('recall counts as an access (access_count and last_accessed_at move)', async () => {
      const w = workspace();
      const m = await w.put({ content: 'count my reads' });
      await w.recall({ cue: 'count my reads', strategies: [{ strategy_type: 'SIMILARITY' }] });
      await w.recall({ cue: 'count my reads', strategies: [{ strategy_type: 'SIMILARITY' }] });
      let got: any;
      await until(
        async () => {
          got = (
            await rpc.call('MemoryService', 'Get', { tenant_id: w.ws, memory_id: m.memory_id })
          ).memory;
          return got.access_count === '2';
        },
        { what: 'access_count 2', deadlineMs: 2_000 },
      ).catch(() => undefined);
      expect(got.access_count).toBe('2');
      expect(BigInt(got.last_accessed_at) > BigInt(m.last_accessed_at)).toBe(true);
    });
  });

  describe('Prime', () => {
    it('returns recent and relevant memories of the entity, with temporal and similarity counts', async () => {
      const w = workspace();
      for (let i = 0; i < 6; i++)
        await w.put({ content: `acme meeting notes ${i}`, entity_id: 'acme' });
      await w.put({ content: 'globex meeting notes', entity_id: 'globex' });
      const res = await w.prime({ entity_id: 'acme' });
      expect(res.results).toHaveLength(6);
      for (const r of res.results) {
        expect(r.memory.entity_id).toBe('acme');
        expect(r.memory.embedding).toHaveLength(384);
        expect(r.strategy_details.length).toBeGreaterThan(0);
        for (const d of r.strategy_details)
          expect(['TEMPORAL', 'SIMILARITY']).toContain(d.strategy_type);
      }
      expect(typeof res.temporal_count).toBe('number');
      // Similarity (cue: the entity) takes its half of the 20 places first; nothing is counted twice.
      expect(res.temporal_count + res.similarity_count).toBe(6);
      // Sorted by score.
      const scores = res.results.map((r: any) => r.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    });

    it('max_memories caps and splits the places; similarity_cue steers the similar half', async () => {
      const w = workspace();
      await w.put({ content: 'the pricing objection about seats', entity_id: 'p' });
      for (let i = 0; i < 6; i++) await w.put({ content: `routine check in ${i}`, entity_id: 'p' });
      const res = await w.prime({
        entity_id: 'p',
        max_memories: 4,
        similarity_cue: 'pricing objection seats',
      });
      expect(res.results).toHaveLength(4);
      expect(res.temporal_count).toBe(2);
      expect(res.similarity_count).toBe(2);
      expect(contents(res.results)).toContain('the pricing objection about seats');
      await failsWith(w.prime({ entity_id: 'p', max_memories: 201 }), grpc.status.INVALID_ARGUMENT);
    });

    it('recency_window_us limits the temporal half; similarity fills the places', async () => {
      const w = workspace();
      const old = await w.put({ content: 'old enough memory about budgets', entity_id: 'r' });
      await untilClockPasses(Number(old.created_at) + 1000);
      const res = await w.prime({
        entity_id: 'r',
        recency_window_us: '1000',
        similarity_cue: 'budgets',
      });
      expect(res.temporal_count).toBe(0);
      expect(res.similarity_count).toBe(1);
      expect(contents(res.results)).toEqual(['old enough memory about budgets']);
      // Without entity, context or cue there is no similarity half: temporal only. A 1 ms window
      // finds nothing; 0 (the proto3 default) means the default window of 7 days.
      expect(await w.prime({ entity_id: '', recency_window_us: '1000' })).toEqual({
        results: [],
        temporal_count: 0,
        similarity_count: 0,
      });
      const dflt = await w.prime({ entity_id: '', recency_window_us: '0' });
      expect(dflt.temporal_count).toBe(1);
      expect(dflt.similarity_count).toBe(0);
    });

    it('with scoring weights 1/0/0/0 the score is the relevance; an unknown entity primes nothing; no entity primes the workspace', async () => {
      const w = workspace();
      await w.put({ content: 'weights in prime', entity_id: 'wp' });
      await w.put({ content: 'no entity at all' });
      const res = await w.prime({
        entity_id: 'wp',
        similarity_cue: 'weights in prime',
        scoring_weights: { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 },
      });
      expect(res.results).toHaveLength(1);
      expect(res.results[0].score).toBeCloseTo(1, 5);
      expect(await w.prime({ entity_id: 'nobody' })).toEqual({
        results: [],
        temporal_count: 0,
        similarity_count: 0,
      });
      const all = await w.prime({ entity_id: '' });
      expect(contents(all.results).sort()).toEqual(['no entity at all', 'weights in prime']);
    });

    it('a context Struct stands in for the cue', async () => {
      const w = workspace();
      await w.put({ content: 'quarterly budget review', entity_id: 'ctx' });
      const res = await w.prime({
        entity_id: 'ctx',
        context: struct({ topic: 'budget' }),
        recency_window_us: '1',
      });
      expect(res.similarity_count).toBe(1);
      expect(contents(res.results)).toEqual(['quarterly budget review']);
    });
  });
});
