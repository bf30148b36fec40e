/**
 * A tiny cross-encoder written by code, for tests: a BERT-style WordPiece tokenizer.json over a
 * vocabulary of a few words, a config.json, and an ONNX graph whose logit is known: the sum, over
 * the second text's tokens (token_type_ids 1, attention_mask 1), of a weight per token. So the
 * score of (query, document) is the sum of WEIGHTS over the document's words, and a test can say
 * which document must come first. About 1 KB; no Python, no download.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GraphBuilder, FLOAT, INT64 } from './onnx-proto.ts';

/** The weight of each word in a document (words not listed weigh 0; [UNK] weighs 0). */
export const WEIGHTS: Readonly<Record<string, number>> = {
  paris: 4,
  france: 2,
  capital: 1,
  city: 0.5,
  bread: -1,
  weather: -2,
  what: 0,
  is: 0,
  the: 0,
  of: 0,
  rain: -3,
};

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];

export function tinyVocab(): string[] {
  return [...SPECIAL, ...Object.keys(WEIGHTS)];
}

/** The logit the tiny model gives a document (the sum of its known words' weights). */
export function expectedLogit(doc: string): number {
  return doc
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w !== '')
    .reduce((s, w) => s + (WEIGHTS[w] ?? 0), 0);
}

export function tinyTokenizerJson(vocab: readonly string[]): object {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((w, i) => [w, i])),
    },
  };
}

/**
 * The graph: logits[b, 0] = Σ_s W[input_ids[b, s]] · token_type_ids[b, s] · attention_mask[b, s].
 * `slowMatMuls` > 0 adds that many 1024×1024 matrix products that depend on the input (so they are
 * not folded away) and add 0 to the logits: the same scores, each run ~2 GFLOP per product
 * slower (for the deadline's test).
 */
export function tinyGraph(weights: readonly number[], slowMatMuls = 0): Uint8Array {
  const g = new GraphBuilder();
  const ids = g.input('input_ids', INT64, ['batch', 'seq']);
  const mask = g.input('attention_mask', INT64, ['batch', 'seq']);
  const types = g.input('token_type_ids', INT64, ['batch', 'seq']);
  const w = g.floats('token_weight', [weights.length], weights);
  const perToken = g.op('Gather', [w, ids], { axis: 0 });
  const second = g.op('Cast', [types], { to: FLOAT });
  const real = g.op('Cast', [mask], { to: FLOAT });
  const counted = g.op('Mul', [g.op('Mul', [perToken, second]), real]);
  const axes = g.ints('sum_axes', [1], [1]);
  if (slowMatMuls > 0) {
    const m = g.floats('slow_m', [1024, 1024], new Float32Array(1024 * 1024).fill(1 / 1024));
    const seed = g.op('ReduceSum', [g.op('Cast', [ids], { to: FLOAT })], { keepdims: 0 });
    let x = g.op('Add', [m, seed]);
    for (let i = 0; i < slowMatMuls; i++) x = g.op('MatMul', [x, m]);
    const nothing = g.op('Mul', [
      g.op('ReduceSum', [x], { keepdims: 0 }),
      g.floats('zero', [], [0]),
    ]);
    const sum = g.op('ReduceSum', [counted, axes], { keepdims: 1 });
    g.op('Add', [sum, nothing], {}, 'logits');
  } else g.op('ReduceSum', [counted, axes], { keepdims: 1 }, 'logits');
  g.output('logits', FLOAT, ['batch', 1]);
  return g.write();
}

export interface TinyModelOptions {
  /** Where the model file goes: `onnx/model.onnx` (the Hugging Face layout) or `model.onnx`. */
  layout?: 'onnx-dir' | 'root';
  /** Leave a file out, to test the error that names it. */
  omit?: 'tokenizer.json' | 'config.json' | 'model.onnx';
  maxPositions?: number;
  /** Matrix products that slow each run without changing its scores (see tinyGraph). */
  slowMatMuls?: number;
}

/** Writes the tiny cross-encoder into `dir` (created) and returns `dir`. */
export function writeTinyReranker(dir: string, opts: TinyModelOptions = {}): string {
  const vocab = tinyVocab();
  const weights = vocab.map((w) => WEIGHTS[w] ?? 0);
  mkdirSync(dir, { recursive: true });
  if (opts.omit !== 'tokenizer.json')
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(vocab)));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ model_max_length: 512 }));
  if (opts.omit !== 'config.json')
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        architectures: ['BertForSequenceClassification'],
        model_type: 'bert',
        vocab_size: vocab.length,
        max_position_embeddings: opts.maxPositions ?? 512,
        id2label: { 0: 'LABEL_0' },
      }),
    );
  if (opts.omit !== 'model.onnx') {
    const modelDir = opts.layout === 'root' ? dir : join(dir, 'onnx');
    mkdirSync(modelDir, { recursive: true });
    writeFileSync(join(modelDir, 'model.onnx'), tinyGraph(weights, opts.slowMatMuls ?? 0));
  }
  return dir;
}
