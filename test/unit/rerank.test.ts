/**
 * The reranker stage without a model: the pure ordering (recall/rerank: which hits are rescored,
 * the answer rebuilt from their logits, the cut back to top_k, the unreranked fallback), the queue
 * over a fake batch runner (embedding/rerank-pool's RerankQueue: batches of at most `batch`, at
 * most `workers` running, the deadline, a full queue, a failing model, batches of a timed-out
 * recall dropped) and the configuration (off by default, the model directory required when on).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULTS, loadConfig } from '../../src/config/index.ts';
import { RerankQueue, type BatchRunner } from '../../src/embedding/rerank-pool.ts';
import { createReranker } from '../../src/embedding/reranker.ts';
import { applyRerank, rerankCandidates, sigmoid, widenForRerank } from '../../src/recall/rerank.ts';
import type { RecallHit, StrategyDetail, StrategySpec } from '../../src/recall/types.ts';

function spec(strategy: StrategySpec['strategy'], topK: number): StrategySpec {
  return {
    strategy,
    topK,
    efSearch: 50,
    entityId: null,
    timeRange: null,
    seedId: null,
    edgeTypes: null,
    maxDepth: 5,
    alpha: 0.5,
  };
}

const SIM: StrategyDetail = {
  strategy: 'similarity',
  relevance: 0.5,
  distance: 0.5,
  cosine: 0.5,
  lexical: 0,
};
const TEMPORAL: StrategyDetail = { strategy: 'temporal', timestamp: 1, rank: 0 };

function hit(id: string, relevance: number, score: number, details = [SIM]): RecallHit {
  return {
    memory: { id, content: `text ${id}` } as RecallHit['memory'],
    score,
    relevance,
    strategy_details: details,
  };
}

const ids = (hs: readonly RecallHit[]): string[] => hs.map((h) => h.memory.id);

describe('recall/rerank', () => {
  it("widens similarity's top_k to the candidates and remembers what to cut back to", () => {
    const w = widenForRerank([spec('similarity', 5), spec('temporal', 3)], 30);
    expect(w?.plan).toEqual({ topK: 5, candidates: 30 });
    expect(w?.strategies.map((s) => s.topK)).toEqual([30, 3]);
    expect(widenForRerank([spec('similarity', 50)], 30)?.strategies[0]?.topK).toBe(50);
    expect(widenForRerank([spec('temporal', 3)], 30)).toBeNull();
  });

  it("rescores similarity's best, orders by the new score and cuts back to top_k", () => {
    const hits = [hit('a', 0.9, 0.9), hit('b', 0.8, 0.8), hit('c', 0.7, 0.7), hit('d', 0.6, 0.6)];
    const plan = { topK: 2, candidates: 3 };
    expect(ids(rerankCandidates(hits, plan))).toEqual(['a', 'b', 'c']);
    // Logits: c best, then b, then a; d is not a candidate.
    const out = applyRerank(hits, plan, [-4, 1, 5], 1);
    expect(ids(out)).toEqual(['c', 'b']);
    expect(out[0]?.relevance).toBeCloseTo(sigmoid(5), 12);
    // score' = score + w_relevance · (relevance' − relevance).
    expect(out[0]?.score).toBeCloseTo(0.7 + (sigmoid(5) - 0.7), 12);
  });

  it("keeps the caller's weights: a heavy other term can outweigh the reranker", () => {
    // a's score carries 0.5 of recency and importance on top of its relevance.
    const hits = [hit('a', 0.5, 1.0), hit('b', 0.5, 0.5)];
    const out = applyRerank(hits, { topK: 2, candidates: 2 }, [0, 2], 0.5);
    expect(ids(out)).toEqual(['a', 'b']);
    expect(ids(applyRerank(hits, { topK: 2, candidates: 2 }, [0, 2], 5))).toEqual(['b', 'a']);
  });

  it("without scores answers similarity's first top_k in its own order", () => {
    const hits = [hit('a', 0.9, 0.9), hit('b', 0.8, 0.8), hit('c', 0.7, 0.7)];
    expect(ids(applyRerank(hits, { topK: 2, candidates: 3 }, null, 1))).toEqual(['a', 'b']);
  });

  it("keeps what other strategies found after similarity's part, also a hit the cut dropped", () => {
    const hits = [
      hit('a', 0.9, 0.9),
      hit('b', 0.8, 0.8, [SIM, TEMPORAL]),
      hit('c', 0.7, 0.7),
      hit('t', 0, 0.2, [TEMPORAL]),
    ];
    const out = applyRerank(hits, { topK: 1, candidates: 3 }, [0, -1, 3], 1);
    expect(ids(out)).toEqual(['c', 'b', 't']);
  });
});

/** A runner whose calls wait until the test releases them; it records each batch's size. */
function heldRunner(): { run: BatchRunner; sizes: number[]; release: () => void } {
  const waiting: Array<() => void> = [];
  const sizes: number[] = [];
  const run: BatchRunner = (query, docs) => {
    sizes.push(docs.length);
    return new Promise((resolve) => {
      waiting.push(() => resolve(Float32Array.from(docs, (d) => d.length + query.length)));
    });
  };
  return {
    run,
    sizes,
    release: () => {
      for (const f of waiting.splice(0)) f();
    },
  };
}

const OPTS = { workers: 1, batch: 2, maxQueued: 4, timeoutMs: 60_000 };

describe('embedding/rerank-pool RerankQueue', () => {
  it('scores every document in batches of at most `batch`, in the documents’ order', async () => {
    const sizes: number[] = [];
    const q = new RerankQueue(
      async (query, docs) => {
        sizes.push(docs.length);
        return Float32Array.from(docs, (d) => Number(d) * 10 + query.length);
      },
      'fake',
      { ...OPTS, workers: 2 },
    );
    const r = await q.score('q', ['1', '2', '3', '4', '5']);
    expect(r.outcome).toBe('reranked');
    expect(r.outcome === 'reranked' ? [...r.scores] : []).toEqual([11, 21, 31, 41, 51]);
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('runs at most `workers` batches at once', async () => {
    const held = heldRunner();
    const q = new RerankQueue(held.run, 'fake', OPTS);
    const pending = q.score('q', ['a', 'b', 'c', 'd', 'e', 'f']);
    await new Promise((r) => setImmediate(r));
    expect(held.sizes).toEqual([2]);
    for (let i = 0; i < 3; i++) {
      held.release();
      await new Promise((r) => setImmediate(r));
    }
    expect(held.sizes).toEqual([2, 2, 2]);
    expect((await pending).outcome).toBe('reranked');
  });

  it('answers `timeout` past the deadline and drops the batches not yet started', async () => {
    const held = heldRunner();
    const q = new RerankQueue(held.run, 'fake', { ...OPTS, timeoutMs: 20 });
    const r = await q.score('q', ['a', 'b', 'c', 'd']);
    expect(r).toMatchObject({ outcome: 'timeout', message: expect.stringContaining('20 ms') });
    held.release();
    await new Promise((res) => setImmediate(res));
    expect(held.sizes).toEqual([2]);
  });

  it('answers `busy` at once when `maxQueued` recalls are in hand', async () => {
    const held = heldRunner();
    const q = new RerankQueue(held.run, 'fake', { ...OPTS, maxQueued: 1 });
    const first = q.score('q', ['a']);
    expect(await q.score('q', ['b'])).toMatchObject({ outcome: 'busy' });
    held.release();
    expect((await first).outcome).toBe('reranked');
    await new Promise((r) => setImmediate(r)); // the first batch's slot is handed back
    const third = q.score('q', ['c']);
    held.release();
    expect((await third).outcome).toBe('reranked');
  });

  it('answers `failed` when the model raises, naming its error', async () => {
    const q = new RerankQueue(
      async () => {
        throw new Error('broken graph');
      },
      'fake',
      OPTS,
    );
    expect(await q.score('q', ['a'])).toMatchObject({
      outcome: 'failed',
      message: expect.stringContaining('broken graph'),
    });
    const short = new RerankQueue(async () => new Float32Array(1), 'fake', OPTS);
    expect(await short.score('q', ['a', 'b'])).toMatchObject({ outcome: 'failed' });
  });
  it('closes only once the running batch is done, answering the waiting recalls unreranked', async () => {
    const held = heldRunner();
    let closed = false;
    const q = new RerankQueue(held.run, 'fake', OPTS, async () => {
      closed = true;
    });
    const running = q.score('q', ['a', 'b']);
    const waiting = q.score('q', ['c']);
    const closing = q.close();
    expect(await waiting).toMatchObject({
      outcome: 'failed',
      message: 'the reranker is shutting down',
    });
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    held.release();
    await closing;
    expect(closed).toBe(true);
    expect((await running).outcome).toBe('reranked');
    expect(await q.score('q', ['d'])).toMatchObject({ outcome: 'failed' });
  });
});

describe('reranker configuration', () => {
  it('is off by default and then starts no model', async () => {
    const c = loadConfig({});
    expect(c.rerank.enabled).toBe(false);
    expect(DEFAULTS.FLASHBULB_RERANK_ENABLED).toBe('false');
    expect(await createReranker(c)).toBeNull();
  });

  it('needs a model directory when on, and reads its bounds', () => {
    expect(() => loadConfig({ FLASHBULB_RERANK_ENABLED: 'true' })).toThrow(
      'FLASHBULB_RERANK_MODEL_DIR is required when FLASHBULB_RERANK_ENABLED is true',
    );
    const c = loadConfig({
      FLASHBULB_RERANK_ENABLED: 'true',
      FLASHBULB_RERANK_MODEL_DIR: '/models/ce',
      FLASHBULB_RERANK_CANDIDATES: '50',
      FLASHBULB_RERANK_BATCH: '8',
      FLASHBULB_RERANK_TIMEOUT_MS: '250',
    }).rerank;
    expect(c).toMatchObject({ modelDir: '/models/ce', candidates: 50, batch: 8, timeoutMs: 250 });
    expect(() => loadConfig({ FLASHBULB_RERANK_CANDIDATES: '0' })).toThrow(
      "FLASHBULB_RERANK_CANDIDATES must be an integer in [1, 200], got '0'",
    );
  });
});
