/**
 * @module embedding/onnx-embedder — the real sentence-embedding model, run with onnxruntime-node and
 * tokenised with @huggingface/tokenizers (pure JS), the only file that imports either: it loads a
 * sentence-transformers model directory and turns texts into L2-normalised rows, meant to be created
 * once per Piscina worker.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { fileContains } from './file-contains.ts';
import { DEFAULT_MAX_BATCH, DEFAULT_MAX_PADDING, paddedChunks } from './padding.ts';

export type Pooling = 'cls' | 'mean';

export interface OnnxEmbedderOptions {
  /**
   * What scripts/fetch-model.mjs installs (sentence-transformers layout):
   *   model.onnx               graph: inputs input_ids / attention_mask [/ token_type_ids] (int64),
   *                            output last_hidden_state [batch, seq, dim] (or a 2-D pooled output)
   *   tokenizer.json, tokenizer_config.json
   *   config.json              hidden_size, max_position_embeddings
   *   1_Pooling/config.json    pooling_mode_cls_token / pooling_mode_mean_tokens  (the model's own choice)
   *   sentence_bert_config.json (optional) max_seq_length
   */
  modelDir: string;
  /** ONNX Runtime intra-op threads for this instance (default 1: one per worker). */
  threads?: number;
  /**
   * Override the truncation length (default: from the model files, capped at max_position_embeddings).
   * Longer inputs are truncated as the Python tokenizers / sentence-transformers do: content cut,
   * the trailing [SEP] kept.
   */
  maxTokens?: number;
  /** Take the model directory's mean vector off each vector when it has one (default true). */
  centre?: boolean;
  /** Override the pooling (default: from 1_Pooling/config.json; required if that file is absent). */
  pooling?: Pooling;
  /** Largest number of texts sent to the model in one run (default 8; always 1 for a dynamically quantised graph). */
  maxBatch?: number;
  /**
   * Batch even a dynamically quantised graph, whose vectors then depend on the texts they ran with:
   * for native-bench/micro/embedding-batch.ts, to measure what batching would buy. Never in the server.
   */
  batchDynamicGraph?: boolean;
  /** Largest ratio of padded to real tokens in one run (default 1.15); see paddedChunks. */
  maxPadding?: number;
  /**
   * Let idle intra-op threads spin (busy-wait) for the next piece of work instead of sleeping
   * (ONNX Runtime's `session.intra_op.allow_spinning`, default here: false). Spinning burns CPU that
   * the router and shards need on a small machine.
   */
  spin?: boolean;
  /**
   * Write ONNX Runtime's per-operator profile (Chrome trace JSON, `<prefix>_<date>.json`) of every
   * run of this instance, flushed by close(); for native-bench/micro/model-ops.ts. Off by default.
   */
  profileFilePrefix?: string;
}

export interface OnnxEmbedder {
  /** Directory basename, e.g. "all-MiniLM-L6-v2"; shown in logs and health. */
  readonly name: string;
  readonly dim: number;
  readonly maxTokens: number;
  readonly pooling: Pooling;
  /** Texts per model run: 1 for a dynamically quantised graph (see createOnnxEmbedder). */
  readonly maxBatch: number;
  /** n×dim, row-major, L2-normalised rows (an all-zero row only if the model outputs zeros). */
  embedBatch(texts: readonly string[]): Promise<Float32Array>;
  /** Same as embedBatch; lets this object serve as an `Embedder` (./embedder.ts). */
  embed(texts: readonly string[]): Promise<Float32Array>;
  close(): Promise<void>;
}

interface Encoded {
  ids: number[];
}

/** The part of @huggingface/tokenizers we use. Its .d.ts uses extensionless relative imports, which
 * NodeNext resolution cannot follow (the class comes through as `any`), so we pin the shape here. */
interface TokenizerLike {
  encode(text: string): Encoded;
  token_to_id(token: string): number | undefined;
}

type Json = Record<string, unknown>;

async function readJson(path: string): Promise<Json> {
  const v: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new Error(`${path}: not a JSON object`);
  return v as Json;
}

async function readJsonIfExists(path: string): Promise<Json | undefined> {
  try {
    return await readJson(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * Optional in a model directory: the model's mean vector over a neutral corpus. A model whose
 * vectors all lean one way (bge-small-en-v1.5: two unrelated sentences have cosine ~0.4) has that
 * mean taken off each vector before the final normalisation, so unrelated texts sit near cosine 0
 * as they do for all-MiniLM-L6-v2, and every cosine threshold and blend means the same under
 * either model. Written by scripts/fetch-model.mjs; fitted by native-bench/fit-centre.ts.
 */
export const CENTRE_FILE = 'flashbulb_centre.json';

async function readCentre(path: string, dim: number): Promise<Float32Array | undefined> {
  const json = await readJsonIfExists(path);
  if (json === undefined) return undefined;
  const mean = json['mean'];
  if (
    !Array.isArray(mean) ||
    mean.length !== dim ||
    !mean.every((x) => typeof x === 'number' && Number.isFinite(x))
  ) {
    throw new Error(`${path}: "mean" must be ${dim} finite numbers`);
  }
  return Float32Array.from(mean as number[]);
}

function normalise(row: Float32Array): void {
  let ss = 0;
  for (let k = 0; k < row.length; k++) ss += (row[k] ?? 0) ** 2;
  if (ss > 0) {
    const inv = 1 / Math.sqrt(ss);
    for (let k = 0; k < row.length; k++) row[k] = (row[k] ?? 0) * inv;
  }
}

export async function createOnnxEmbedder(opts: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
  const dir = opts.modelDir;
  const [config, tokJson, tokConfig, poolCfg, stCfg] = await Promise.all([
    readJson(join(dir, 'config.json')),
    readJson(join(dir, 'tokenizer.json')),
    readJson(join(dir, 'tokenizer_config.json')),
    readJsonIfExists(join(dir, '1_Pooling', 'config.json')),
    readJsonIfExists(join(dir, 'sentence_bert_config.json')),
  ]);

  const hidden = num(config['hidden_size']);
  if (hidden === undefined) throw new Error(`${dir}/config.json: no hidden_size`);
  const dim: number = hidden;
  const maxPositions = num(config['max_position_embeddings']) ?? 512;

  let pooling: Pooling;
  if (opts.pooling !== undefined) pooling = opts.pooling;
  else if (poolCfg?.['pooling_mode_cls_token'] === true) pooling = 'cls';
  else if (poolCfg?.['pooling_mode_mean_tokens'] === true) pooling = 'mean';
  else throw new Error(`${dir}: no supported pooling in 1_Pooling/config.json; pass opts.pooling`);

  const modelMax = num(tokConfig['model_max_length']);
  const maxTokens = Math.min(
    maxPositions,
    opts.maxTokens ??
      num(stCfg?.['max_seq_length']) ??
      (modelMax !== undefined && modelMax <= 100_000 ? modelMax : maxPositions),
  );
  if (!(maxTokens >= 2)) throw new Error(`bad maxTokens ${maxTokens}`);
  // A graph quantised dynamically (DynamicQuantizeLinear: one scale for the whole input tensor,
  // padding included) gives a text a vector that depends on what it was run with; such a graph
  // runs one text at a time, so a memory's vector never depends on its neighbours in a batch.
  const perRunScale = await fileContains(join(dir, 'model.onnx'), 'DynamicQuantizeLinear');
  const maxBatch =
    perRunScale && opts.batchDynamicGraph !== true
      ? 1
      : Math.max(1, opts.maxBatch ?? DEFAULT_MAX_BATCH);
  const maxPadding = Math.max(1, opts.maxPadding ?? DEFAULT_MAX_PADDING);

  const tokenizer: TokenizerLike = new Tokenizer(tokJson, tokConfig);
  const padId =
    num((tokJson['padding'] as Json | null)?.['pad_id']) ?? tokenizer.token_to_id('[PAD]') ?? 0;
  // Any text longer than this many UTF-16 units yields far more than maxTokens tokens in practice;
  // clipping first bounds the tokeniser's work on huge inputs.
  const maxChars = maxTokens * 64;

  const centre = opts.centre === false ? undefined : await readCentre(join(dir, CENTRE_FILE), dim);

  const threads = Math.max(1, opts.threads ?? 1);
  const session = await ort.InferenceSession.create(join(dir, 'model.onnx'), {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    extra: {
      session: {
        intra_op: { allow_spinning: opts.spin === true ? '1' : '0' },
        inter_op: { allow_spinning: opts.spin === true ? '1' : '0' },
      },
    },
    ...(opts.profileFilePrefix === undefined
      ? {}
      : { enableProfiling: true, profileFilePrefix: opts.profileFilePrefix }),
  });
  const inputNames = new Set(session.inputNames);
  if (!inputNames.has('input_ids') || !inputNames.has('attention_mask')) {
    throw new Error(
      `model.onnx inputs are [${session.inputNames.join(', ')}]; need input_ids, attention_mask`,
    );
  }
  const outputName = session.outputNames.includes('last_hidden_state')
    ? 'last_hidden_state'
    : session.outputNames[0];
  if (outputName === undefined) throw new Error('model.onnx has no outputs');

  function encode(text: string): Encoded {
    const t = text.length > maxChars ? text.slice(0, maxChars) : text;
    const ids = tokenizer.encode(t).ids;
    if (ids.length > maxTokens) {
      // Keep the leading maxTokens-1 ids and the final special token ([SEP] for BERT-style models).
      const last = ids[ids.length - 1] ?? 0;
      ids.length = maxTokens - 1;
      ids.push(last);
    }
    return { ids };
  }

  async function runChunk(
    encs: readonly Encoded[],
    out: Float32Array,
    rows: readonly number[],
  ): Promise<void> {
    const b = encs.length;
    let seq = 1;
    for (const e of encs) seq = Math.max(seq, e.ids.length);
    const ids = new BigInt64Array(b * seq).fill(BigInt(padId));
    const mask = new BigInt64Array(b * seq);
    encs.forEach((e, i) => {
      for (let j = 0; j < e.ids.length; j++) {
        ids[i * seq + j] = BigInt(e.ids[j] ?? padId);
        mask[i * seq + j] = 1n;
      }
    });
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', ids, [b, seq]),
      attention_mask: new ort.Tensor('int64', mask, [b, seq]),
    };
    if (inputNames.has('token_type_ids')) {
      feeds['token_type_ids'] = new ort.Tensor('int64', new BigInt64Array(b * seq), [b, seq]);
    }
    const result = await session.run(feeds, [outputName as string]);
    const t = result[outputName as string];
    if (t === undefined || t.type !== 'float32')
      throw new Error(`model output ${outputName} is not float32`);
    const data = t.data as Float32Array;
    const dims = t.dims;
    try {
      for (let i = 0; i < b; i++) {
        const row = out.subarray((rows[i] ?? 0) * dim, ((rows[i] ?? 0) + 1) * dim);
        if (dims.length === 2) {
          row.set(data.subarray(i * dim, (i + 1) * dim));
        } else if (dims.length === 3 && dims[2] === dim) {
          const base = i * seq * dim;
          if (pooling === 'cls') {
            row.set(data.subarray(base, base + dim));
          } else {
            const n = encs[i]?.ids.length ?? 1;
            for (let j = 0; j < n; j++) {
              const off = base + j * dim;
              for (let k = 0; k < dim; k++) row[k] = (row[k] ?? 0) + (data[off + k] ?? 0);
            }
            const inv = 1 / Math.max(n, 1);
            for (let k = 0; k < dim; k++) row[k] = (row[k] ?? 0) * inv;
          }
        } else {
          throw new Error(`unexpected output dims [${dims.join(', ')}] for dim ${dim}`);
        }
        normalise(row);
        if (centre !== undefined) {
          for (let k = 0; k < dim; k++) row[k] = (row[k] ?? 0) - (centre[k] ?? 0);
          normalise(row);
        }
      }
    } finally {
      t.dispose();
    }
  }

  async function embedBatch(texts: readonly string[]): Promise<Float32Array> {
    const out = new Float32Array(texts.length * dim);
    if (texts.length === 0) return out;
    const encs = texts.map(encode);
    // Sort by length and cut into sub-batches that pad little; rows go back to their original slots.
    const order = encs
      .map((_, i) => i)
      .sort((a, b) => (encs[a]?.ids.length ?? 0) - (encs[b]?.ids.length ?? 0));
    const lengths = order.map((i) => encs[i]?.ids.length ?? 0);
    let s = 0;
    for (const size of paddedChunks(lengths, maxBatch, maxPadding)) {
      const rows = order.slice(s, s + size);
      s += size;
      await runChunk(
        rows.map((r) => encs[r] as Encoded),
        out,
        rows,
      );
    }
    return out;
  }

  const name =
    dir
      .replace(/[/\\]+$/, '')
      .split(/[/\\]/)
      .pop() ?? 'onnx';
  let closed = false;
  return {
    name,
    dim,
    maxTokens,
    pooling,
    maxBatch,
    embedBatch,
    embed: embedBatch,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (opts.profileFilePrefix !== undefined) session.endProfiling();
      await session.release();
    },
  };
}
