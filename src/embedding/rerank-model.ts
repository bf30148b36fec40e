/**
 * @module embedding/rerank-model — a cross-encoder reranker run with onnxruntime-node and tokenised
 * with @huggingface/tokenizers: it loads a user-supplied model directory in the Hugging Face layout
 * (tokenizer.json, config.json, onnx/model.onnx or model.onnx), checks it (a missing or malformed
 * file is named), and scores (query, document) pairs as one logit each, the document truncated so
 * the pair fits the model; meant to be created once per reranker worker.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

export interface CrossEncoderOptions {
  modelDir: string;
  /** ONNX Runtime intra-op threads (default 1). */
  threads?: number;
  /** Largest number of pairs in one model run (default 16). */
  maxBatch?: number;
  /** Truncation length of a pair (default: the model's, at most 512). */
  maxTokens?: number;
}

export interface CrossEncoder {
  /** The directory's basename. */
  readonly name: string;
  readonly maxTokens: number;
  readonly maxBatch: number;
  /** One logit per document: how well it answers the query (higher is better). */
  score(query: string, docs: readonly string[]): Promise<Float32Array>;
  close(): Promise<void>;
}

interface PairEncoding {
  ids: number[];
  attention_mask: number[];
  token_type_ids?: number[];
}

/** The part of @huggingface/tokenizers used here (its .d.ts does not resolve under NodeNext). */
interface PairTokenizer {
  encode(
    text: string,
    opts?: { text_pair?: string; add_special_tokens?: boolean; return_token_type_ids?: boolean },
  ): PairEncoding;
  decode(ids: number[], opts?: { skip_special_tokens?: boolean }): string;
  token_to_id(token: string): number | undefined;
}

type Json = Record<string, unknown>;

/** The files a reranker directory must hold, in the order they are checked. */
export function rerankModelFile(dir: string): string | null {
  for (const rel of [join('onnx', 'model.onnx'), 'model.onnx']) {
    if (existsSync(join(dir, rel))) return join(dir, rel);
  }
  return null;
}

async function readJson(dir: string, file: string, required: boolean): Promise<Json | undefined> {
  const path = join(dir, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (!required) return undefined;
      throw new Error(`${path} is missing (a cross-encoder directory holds ${file})`);
    }
    throw err;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not JSON: ${(err as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new Error(`${path}: not a JSON object`);
  return v as Json;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export async function createCrossEncoder(opts: CrossEncoderOptions): Promise<CrossEncoder> {
  const dir = opts.modelDir;
  if (!existsSync(dir)) throw new Error(`the reranker model directory ${dir} does not exist`);
  const modelFile = rerankModelFile(dir);
  if (modelFile === null)
    throw new Error(`${dir} holds no onnx/model.onnx or model.onnx (the cross-encoder's graph)`);
  const tokJson = (await readJson(dir, 'tokenizer.json', true)) as Json;
  const config = (await readJson(dir, 'config.json', true)) as Json;
  const tokConfig = (await readJson(dir, 'tokenizer_config.json', false)) ?? {};
  const maxPositions = num(config['max_position_embeddings']) ?? 512;
  const maxTokens = Math.min(maxPositions, opts.maxTokens ?? 512);
  if (!(maxTokens >= 8))
    throw new Error(`${dir}: a pair must fit at least 8 tokens, not ${maxTokens}`);
  const maxBatch = Math.max(1, opts.maxBatch ?? 16);

  let tokenizer: PairTokenizer;
  try {
    tokenizer = new Tokenizer(tokJson, tokConfig) as PairTokenizer;
    tokenizer.encode('probe', { text_pair: 'probe', return_token_type_ids: true });
  } catch (err) {
    throw new Error(`${join(dir, 'tokenizer.json')} cannot be used: ${(err as Error).message}`);
  }
  const padId =
    num((tokJson['padding'] as Json | null)?.['pad_id']) ??
    tokenizer.token_to_id('[PAD]') ??
    tokenizer.token_to_id('<pad>') ??
    0;
  const maxChars = maxTokens * 64;

  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelFile, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      intraOpNumThreads: Math.max(1, opts.threads ?? 1),
      interOpNumThreads: 1,
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    });
  } catch (err) {
    throw new Error(`${modelFile} cannot be loaded: ${(err as Error).message}`);
  }
  const inputs = new Set(session.inputNames);
  if (!inputs.has('input_ids') || !inputs.has('attention_mask')) {
    await session.release();
    throw new Error(
      `${modelFile} inputs are [${session.inputNames.join(', ')}]; a cross-encoder needs input_ids and attention_mask`,
    );
  }
  const outputName = session.outputNames.includes('logits') ? 'logits' : session.outputNames[0];
  if (outputName === undefined) throw new Error(`${modelFile} has no outputs`);

  /** The pair's encoding, the document cut (by its own tokens) until the pair fits. */
  function encodePair(query: string, doc: string): PairEncoding {
    const q = query.length > maxChars ? query.slice(0, maxChars) : query;
    let d = doc.length > maxChars ? doc.slice(0, maxChars) : doc;
    let e = tokenizer.encode(q, { text_pair: d, return_token_type_ids: true });
    for (let tries = 0; e.ids.length > maxTokens && tries < 4; tries++) {
      const docIds = tokenizer.encode(d, { add_special_tokens: false }).ids;
      const keep = Math.max(0, docIds.length - (e.ids.length - maxTokens) - tries);
      d = tokenizer.decode(docIds.slice(0, keep), { skip_special_tokens: true });
      e = tokenizer.encode(q, { text_pair: d, return_token_type_ids: true });
    }
    if (e.ids.length > maxTokens) {
      // The query alone is too long: keep the pair's first tokens and its final special token.
      const cut = (a: number[] | undefined): number[] | undefined =>
        a === undefined ? undefined : [...a.slice(0, maxTokens - 1), a[a.length - 1] ?? 0];
      return {
        ids: cut(e.ids) ?? [],
        attention_mask: cut(e.attention_mask) ?? [],
        ...(e.token_type_ids ? { token_type_ids: cut(e.token_type_ids) ?? [] } : {}),
      };
    }
    return e;
  }

  async function run(
    encs: readonly PairEncoding[],
    out: Float32Array,
    rows: number[],
  ): Promise<void> {
    const b = encs.length;
    const seq = Math.max(1, ...encs.map((e) => e.ids.length));
    const ids = new BigInt64Array(b * seq).fill(BigInt(padId));
    const mask = new BigInt64Array(b * seq);
    const types = new BigInt64Array(b * seq);
    encs.forEach((e, i) => {
      for (let j = 0; j < e.ids.length; j++) {
        ids[i * seq + j] = BigInt(e.ids[j] ?? padId);
        mask[i * seq + j] = BigInt(e.attention_mask[j] ?? 1);
        types[i * seq + j] = BigInt(e.token_type_ids?.[j] ?? 0);
      }
    });
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', ids, [b, seq]),
      attention_mask: new ort.Tensor('int64', mask, [b, seq]),
    };
    if (inputs.has('token_type_ids'))
      feeds['token_type_ids'] = new ort.Tensor('int64', types, [b, seq]);
    const result = await session.run(feeds, [outputName as string]);
    const t = result[outputName as string];
    try {
      if (t === undefined || t.type !== 'float32')
        throw new Error(`${modelFile}: output ${outputName} is not float32`);
      const data = t.data as Float32Array;
      // [b, 1] or [b]: one logit; [b, 2]: a two-class head, whose logit is class 1 over class 0.
      const width = t.dims.length === 1 ? 1 : (t.dims[1] ?? 0);
      if (t.dims[0] !== b || (width !== 1 && width !== 2) || t.dims.length > 2)
        throw new Error(
          `${modelFile}: output ${outputName} has dims [${t.dims.join(', ')}]; expected [batch, 1] (or [batch, 2])`,
        );
      for (let i = 0; i < b; i++) {
        const v = width === 1 ? (data[i] ?? 0) : (data[i * 2 + 1] ?? 0) - (data[i * 2] ?? 0);
        out[rows[i] ?? 0] = v;
      }
    } finally {
      t?.dispose();
    }
  }

  async function score(query: string, docs: readonly string[]): Promise<Float32Array> {
    const out = new Float32Array(docs.length);
    const encs = docs.map((d) => encodePair(query, d));
    const order = encs
      .map((_, i) => i)
      .sort((a, b) => (encs[a]?.ids.length ?? 0) - (encs[b]?.ids.length ?? 0));
    for (let s = 0; s < order.length; s += maxBatch) {
      const rows = order.slice(s, s + maxBatch);
      await run(
        rows.map((r) => encs[r] as PairEncoding),
        out,
        rows,
      );
    }
    return out;
  }

  // A malformed graph (wrong output shape, an op it cannot run) fails here, at start, not on a recall.
  try {
    await score('probe', ['probe document']);
  } catch (err) {
    await session.release();
    throw err;
  }
  const name =
    dir
      .replace(/[/\\]+$/, '')
      .split(/[/\\]/)
      .pop() ?? 'reranker';
  let closed = false;
  return {
    name,
    maxTokens,
    maxBatch,
    score,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await session.release();
    },
  };
}
