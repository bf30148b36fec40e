/**
 * The reranker with a real ONNX model: the tiny cross-encoder test/helpers/tiny-reranker.ts writes
 * (its logit is a known sum of word weights). Loading from both layouts, scores that must equal the
 * known ones, the pair cut to the model's length, each missing or malformed file named, the
 * Piscina pool, and servers (hash embedder) that rerank REST and gRPC recall, skip it on request,
 * answer unreranked past the deadline, refuse `rerank: true` without a model, or refuse to start on
 * a bad one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrossEncoder } from '../../src/embedding/rerank-model.ts';
import { createRerankPool } from '../../src/embedding/rerank-pool.ts';
import { sigmoid } from '../../src/recall/rerank.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { connectGrpc } from '../helpers/grpc.ts';
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

const ONLY_RELEVANCE = { w_relevance: 1, w_recency: 0, w_importance: 0, w_reinforcement: 0 };
type Hit = { memory: { content: string }; relevance: number; strategy_details: any[] };
const contents = (hits: Hit[]): string[] => hits.map((h) => h.memory.content);

async function seeded(env: Record<string, string>): Promise<TestApp> {
  const t = await startTestApp({}, env);
  for (const content of DOCS) {
    const res = await t.req('POST', '/v1/memories', { body: { content } });
    expect(res.status, res.text).toBe(201);
  }
  return t;
}

async function recall(t: TestApp, body: object): Promise<{ results: Hit[]; rerank?: unknown }> {
  const res = await t.req('POST', '/v1/recall', {
    body: { cue: 'capital', scoring_weights: ONLY_RELEVANCE, ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const RERANK_ENV = {
  FLASHBULB_RERANK_ENABLED: 'true',
  FLASHBULB_RERANK_MODEL_DIR: tiny,
  FLASHBULB_RERANK_CANDIDATES: '10',
  FLASHBULB_RERANK_WORKERS: '1',
  FLASHBULB_RERANK_THREADS: '1',
  FLASHBULB_RERANK_TIMEOUT_MS: '30000',
};

describe('recall with the reranker on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await seeded(RERANK_ENV);
  });
  afterAll(() => t?.stop());

  it("orders similarity's candidates by the model, cuts back to top_k and says so", async () => {
    const out = await recall(t, { top_k: 2 });
    const best = [...DOCS].sort((a, b) => expectedLogit(b) - expectedLogit(a)).slice(0, 2);
    expect(contents(out.results)).toEqual(best);
    expect(out.results[0]?.relevance).toBeCloseTo(sigmoid(expectedLogit(best[0] as string)), 6);
    expect(out.rerank).toEqual({ outcome: 'reranked', candidates: DOCS.length });
    const metrics = await t.req('GET', '/v1/metrics');
    expect(metrics.text).toMatch(/flashbulb_rerank_total\{outcome="reranked"\} [1-9]/);
  });

  it('skips the model for a recall that sends rerank: false', async () => {
    const out = await recall(t, { top_k: 4, rerank: false });
    expect(out.rerank).toBeUndefined();
    // The first stage's own relevance, not the model's.
    for (const h of out.results) expect(h.relevance).toBe(h.strategy_details[0].relevance);
    expect(contents(out.results)).not.toEqual(
      [...DOCS].sort((a, b) => expectedLogit(b) - expectedLogit(a)),
    );
  });

  it('reranks gRPC recalls too, and rerank = false (field 17) skips it', async () => {
    const rpc = connectGrpc(t.app.grpcPort, { auth: { key: t.adminKey } });
    try {
      const call = (extra: object): Promise<any> =>
        rpc.call('MemoryService', 'Recall', {
          cue: 'capital',
          strategies: [{ strategy_type: 'SIMILARITY' }],
          top_k: 2,
          scoring_weights: ONLY_RELEVANCE,
          ...extra,
        });
      const best = [...DOCS].sort((a, b) => expectedLogit(b) - expectedLogit(a)).slice(0, 2);
      expect((await call({})).results.map((r: any) => r.memory.content)).toEqual(best);
      const plain = await recall(t, { top_k: 2, rerank: false });
      expect((await call({ rerank: false })).results.map((r: any) => r.memory.content)).toEqual(
        contents(plain.results),
      );
    } finally {
      rpc.close();
    }
  });

  it('leaves temporal-only recalls alone', async () => {
    const out = await recall(t, { strategies: ['temporal'], top_k: 4 });
    expect(contents(out.results)).toEqual([...DOCS].reverse());
    expect(out.rerank).toBeUndefined();
  });
});

describe('the access a reranked recall counts', () => {
  it("is of the memory it answers with, not the first stage's first", async () => {
    const t = await startTestApp({}, RERANK_ENV);
    try {
      const ids = new Map<string, string>();
      for (const content of DOCS) {
        const res = await t.req('POST', '/v1/memories', { body: { content } });
        ids.set(content, res.body.memory_id);
      }
      const accesses = async (): Promise<Record<string, number>> => {
        const out: Record<string, number> = {};
        for (const [content, id] of ids)
          out[content] = (await t.req('GET', `/v1/memories/${id}`)).body.access_count;
        return out;
      };
      const reranked = await recall(t, { top_k: 1 });
      const answer = reranked.results[0]?.memory.content as string;
      expect(answer).toBe('Paris is the capital of France');
      expect(await accesses()).toEqual(
        Object.fromEntries(DOCS.map((d) => [d, d === answer ? 1 : 0])),
      );
      // The first stage alone answers with another memory (so the count above is the reranker's).
      const plain = await recall(t, { top_k: 1, rerank: false });
      expect(plain.results[0]?.memory.content).not.toBe(answer);
    } finally {
      await t.stop();
    }
  });
});

describe('the deadline', () => {
  it('answers in the unreranked order when the model is slower than FLASHBULB_RERANK_TIMEOUT_MS', async () => {
    // Each run of this model takes ~0.2 s (ten 1024×1024 products); the deadline is 1 ms.
    const slow = writeTinyReranker(join(root, 'slow'), { slowMatMuls: 10 });
    const t = await seeded({
      ...RERANK_ENV,
      FLASHBULB_RERANK_MODEL_DIR: slow,
      FLASHBULB_RERANK_TIMEOUT_MS: '1',
    });
    try {
      const late = await recall(t, { top_k: 2 });
      expect(late.rerank).toEqual({ outcome: 'timeout', candidates: DOCS.length });
      const plain = await recall(t, { top_k: 2, rerank: false });
      expect(contents(late.results)).toEqual(contents(plain.results));
      const metrics = await t.req('GET', '/v1/metrics');
      expect(metrics.text).toMatch(/flashbulb_rerank_total\{outcome="timeout"\} [1-9]/);
    } finally {
      await t.stop();
    }
  });
});

describe('a server without a reranker', () => {
  it('refuses rerank: true naming the setting, and takes rerank: false', async () => {
    const t = await seeded({});
    try {
      const res = await t.req('POST', '/v1/recall', { body: { cue: 'capital', rerank: true } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.message).toContain('FLASHBULB_RERANK_ENABLED');
      const out = await recall(t, { rerank: false });
      expect(out.results.length).toBe(DOCS.length);
      expect(out.rerank).toBeUndefined();
    } finally {
      await t.stop();
    }
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
