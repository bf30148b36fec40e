/**
 * The reranker with a real ONNX model: the tiny cross-encoder test/helpers/tiny-reranker.ts writes
 * (its logit is a known sum of word weights). Loading from both layouts, scores that must equal the
 * known ones, the pair cut to the model's length, each missing or malformed file named, the
 * Piscina pool, and a server that reranks recall (hash embedder) or refuses to start on a bad model.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrossEncoder } from '../../src/embedding/rerank-model.ts';
import { createRerankPool } from '../../src/embedding/rerank-pool.ts';
import { sigmoid } from '../../src/recall/rerank.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { expectedLogit, WEIGHTS, writeTinyReranker } from '../helpers/tiny-reranker.ts';

const root = mkdtempSync(join(tmpdir(), 'flashbulb-rerank-'));
const tiny = writeTinyReranker(join(root, 'tiny'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DOCS = [
  'The weather in the capital is rain',
  'Paris is the capital of France',
  'A capital city with good bread',
  'France has a capital',
];

describe('the cross-encoder (embedding/rerank-model)', () => {
  it('loads onnx/model.onnx or model.onnx and gives each document its known logit', async () => {
    for (const dir of [tiny, writeTinyReranker(join(root, 'flat'), { layout: 'root' })]) {
      const m = await createCrossEncoder({ modelDir: dir, maxBatch: 3 });
      try {
        const scores = await m.score('What is the capital of France?', DOCS);
        expect([...scores]).toEqual(DOCS.map(expectedLogit));
        expect(expectedLogit(DOCS[1] as string)).toBe(WEIGHTS['paris']! + 3);
      } finally {
        await m.close();
      }
    }
  });

  it('cuts the document so the pair fits maxTokens (the cue is kept whole)', async () => {
    const m = await createCrossEncoder({ modelDir: tiny, maxTokens: 16 });
    try {
      // [CLS] paris [SEP] + 12 document tokens + [SEP] = 16: twelve "paris" of 40 count.
      const [s] = await m.score('paris', [Array(40).fill('paris').join(' ')]);
      expect(s).toBe(12 * WEIGHTS['paris']!);
    } finally {
      await m.close();
    }
  });

  it('names the file that is missing or malformed', async () => {
    for (const omit of ['tokenizer.json', 'config.json'] as const) {
      const dir = writeTinyReranker(join(root, `no-${omit}`), { omit });
      await expect(createCrossEncoder({ modelDir: dir })).rejects.toThrow(`${omit} is missing`);
    }
    const noGraph = writeTinyReranker(join(root, 'no-graph'), { omit: 'model.onnx' });
    await expect(createCrossEncoder({ modelDir: noGraph })).rejects.toThrow(
      'holds no onnx/model.onnx or model.onnx',
    );
    await expect(createCrossEncoder({ modelDir: join(root, 'nowhere') })).rejects.toThrow(
      'does not exist',
    );
    const badGraph = writeTinyReranker(join(root, 'bad-graph'));
    writeFileSync(join(badGraph, 'onnx', 'model.onnx'), 'not a graph');
    await expect(createCrossEncoder({ modelDir: badGraph })).rejects.toThrow(
      /onnx[/\\]model\.onnx cannot be loaded/,
    );
    const badTokenizer = writeTinyReranker(join(root, 'bad-tokenizer'));
    writeFileSync(join(badTokenizer, 'tokenizer.json'), '{"truncated": ');
    await expect(createCrossEncoder({ modelDir: badTokenizer })).rejects.toThrow(
      'tokenizer.json is not JSON',
    );
  });

  it('runs in the pool (Piscina workers) with the same scores', async () => {
    const pool = await createRerankPool({
      modelDir: tiny,
      workers: 1,
      threads: 1,
      batch: 2,
      maxTokens: 128,
      maxQueued: 8,
      timeoutMs: 60_000,
    });
    try {
      const r = await pool.score('capital', DOCS);
      expect(r.outcome).toBe('reranked');
      expect(r.outcome === 'reranked' ? [...r.scores] : []).toEqual(DOCS.map(expectedLogit));
    } finally {
      await pool.close();
    }
  });
});

describe('recall with the reranker on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(
      {},
      {
        FLASHBULB_RERANK_ENABLED: 'true',
        FLASHBULB_RERANK_MODEL_DIR: tiny,
        FLASHBULB_RERANK_CANDIDATES: '10',
        FLASHBULB_RERANK_WORKERS: '1',
        FLASHBULB_RERANK_THREADS: '1',
        FLASHBULB_RERANK_TIMEOUT_MS: '30000',
      },
    );
    for (const content of DOCS) {
      const res = await t.req('POST', '/v1/memories', { body: { content } });
      expect(res.status, res.text).toBe(201);
    }
  });
  afterAll(() => t?.stop());

  it("orders similarity's candidates by the model and cuts back to top_k", async () => {
    const res = await t.req('POST', '/v1/recall', {
      body: {
        cue: 'capital',
        top_k: 2,
        scoring_weights: { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 },
      },
    });
    expect(res.status, res.text).toBe(200);
    const results = res.body.results as Array<{ memory: { content: string }; relevance: number }>;
    const best = [...DOCS].sort((a, b) => expectedLogit(b) - expectedLogit(a)).slice(0, 2);
    expect(results.map((r) => r.memory.content)).toEqual(best);
    expect(results[0]?.relevance).toBeCloseTo(sigmoid(expectedLogit(best[0] as string)), 6);
    const metrics = await t.req('GET', '/v1/metrics');
    expect(metrics.text).toMatch(/flashbulb_rerank_total\{outcome="reranked"\} [1-9]/);
  });

  it('leaves temporal-only recalls alone', async () => {
    const res = await t.req('POST', '/v1/recall', {
      body: { cue: 'capital', strategies: ['temporal'], top_k: 4 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: { memory: { content: string } }) => r.memory.content)).toEqual(
      [...DOCS].reverse(),
    );
  });
});

describe('a server started with a bad reranker model', () => {
  it('does not start, and says which file and which variable', async () => {
    const dir = writeTinyReranker(join(root, 'start-no-tokenizer'), { omit: 'tokenizer.json' });
    await expect(
      startTestApp({}, { FLASHBULB_RERANK_ENABLED: 'true', FLASHBULB_RERANK_MODEL_DIR: dir }),
    ).rejects.toThrow(
      /FLASHBULB_RERANK_MODEL_DIR: cannot load the reranker model .*tokenizer\.json is missing/,
    );
  });
});
