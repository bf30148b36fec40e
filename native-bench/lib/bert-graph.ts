/**
 * A BERT cross-encoder graph of any size with random weights, written as ONNX by
 * test/helpers/onnx-proto.ts: embeddings (word, position, token type) and LayerNorm, `layers`
 * encoder layers (self-attention with the padding mask, GELU feed-forward, residuals and
 * LayerNorm), the [CLS] pooler (tanh) and a one-logit head, as BertForSequenceClassification
 * exports. The weights are random (normal, σ 0.02, from a fixed seed): the scores mean nothing, the
 * cost per pair is a real model's of that shape. No model can be downloaded here; this stands in
 * for one (the default shape is ms-marco-MiniLM-L-6-v2's: 6 layers, 384 wide, 12 heads, 1536 in
 * the feed-forward, 30 522 words, 512 positions).
 */
import { FLOAT, GraphBuilder, INT64 } from '../../test/helpers/onnx-proto.ts';

export interface BertShape {
  layers: number;
  hidden: number;
  heads: number;
  intermediate: number;
  vocab: number;
  positions: number;
}

export const MINILM_L6: BertShape = {
  layers: 6,
  hidden: 384,
  heads: 12,
  intermediate: 1536,
  vocab: 30522,
  positions: 512,
};

/** Parameters of a shape (for the report). */
export function parameterCount(s: BertShape): number {
  const h = s.hidden;
  const emb = (s.vocab + s.positions + 2) * h + 2 * h;
  const layer = 4 * (h * h + h) + 2 * h * s.intermediate + s.intermediate + h + 4 * h;
  return emb + s.layers * layer + h * h + h + h + 1;
}

/** A seeded normal generator (xorshift32 + Box–Muller). */
function normals(seed: number): (n: number, sigma: number) => Float32Array {
  let x = seed >>> 0 || 1;
  const uniform = (): number => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return (x + 0.5) / 4294967296;
  };
  return (n, sigma) => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i += 2) {
      const r = Math.sqrt(-2 * Math.log(uniform()));
      const t = 2 * Math.PI * uniform();
      out[i] = r * Math.cos(t) * sigma;
      if (i + 1 < n) out[i + 1] = r * Math.sin(t) * sigma;
    }
    return out;
  };
}

export function bertCrossEncoder(s: BertShape, seed = 42): Uint8Array {
  const g = new GraphBuilder();
  const rand = normals(seed);
  const h = s.hidden;
  const hd = h / s.heads;
  let n = 0;
  const w = (dims: number[]): string =>
    g.init(
      `w${n++}`,
      FLOAT,
      dims,
      rand(
        dims.reduce((a, b) => a * b, 1),
        0.02,
      ),
    );
  const filled = (dims: number[], v: number): string =>
    g.floats(`c${n++}`, dims, new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(v));
  const scalarF = (v: number): string => g.floats(`s${n++}`, [], [v]);
  const scalarI = (v: number): string => g.ints(`i${n++}`, [], [v]);
  const ints = (v: number[]): string => g.ints(`v${n++}`, [v.length], v);
  const layerNorm = (x: string): string =>
    g.op('LayerNormalization', [x, filled([h], 1), filled([h], 0)], {
      axis: -1,
      epsilon: { float: 1e-12 },
    });
  const dense = (x: string, from: number, to: number): string =>
    g.op('Add', [g.op('MatMul', [x, w([from, to])]), filled([to], 0)]);

  const ids = g.input('input_ids', INT64, ['batch', 'seq']);
  const mask = g.input('attention_mask', INT64, ['batch', 'seq']);
  const types = g.input('token_type_ids', INT64, ['batch', 'seq']);

  const seqLen = g.op('Gather', [g.op('Shape', [ids]), scalarI(1)], { axis: 0 });
  const positions = g.op('Range', [scalarI(0), seqLen, scalarI(1)]);
  const words = g.op('Gather', [w([s.vocab, h]), ids], { axis: 0 });
  const typeEmb = g.op('Gather', [w([2, h]), types], { axis: 0 });
  const posEmb = g.op('Gather', [w([s.positions, h]), positions], { axis: 0 });
  let x = layerNorm(g.op('Add', [g.op('Add', [words, typeEmb]), posEmb]));

  const maskF = g.op('Cast', [mask], { to: FLOAT });
  const blocked = g.op('Mul', [g.op('Sub', [scalarF(1), maskF]), scalarF(-10000)]);
  const extended = g.op('Unsqueeze', [blocked, ints([1, 2])]);
  const headShape = ints([0, 0, s.heads, hd]);
  const flatShape = ints([0, 0, h]);
  const scale = scalarF(1 / Math.sqrt(hd));

  for (let l = 0; l < s.layers; l++) {
    const split = (t: string, perm: number[]): string =>
      g.op('Transpose', [g.op('Reshape', [t, headShape])], { perm });
    const q = split(dense(x, h, h), [0, 2, 1, 3]);
    const k = split(dense(x, h, h), [0, 2, 3, 1]);
    const v = split(dense(x, h, h), [0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), scale]), extended]);
    const probs = g.op('Softmax', [scores], { axis: -1 });
    const context = g.op('Reshape', [
      g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: [0, 2, 1, 3] }),
      flatShape,
    ]);
    x = layerNorm(g.op('Add', [x, dense(context, h, h)]));
    const inner = dense(x, h, s.intermediate);
    const erf = g.op('Erf', [g.op('Div', [inner, scalarF(Math.SQRT2)])]);
    const gelu = g.op('Mul', [g.op('Mul', [inner, scalarF(0.5)]), g.op('Add', [erf, scalarF(1)])]);
    x = layerNorm(g.op('Add', [x, dense(gelu, s.intermediate, h)]));
  }
  const cls = g.op('Gather', [x, scalarI(0)], { axis: 1 });
  const pooled = g.op('Tanh', [dense(cls, h, h)]);
  g.op('Add', [g.op('MatMul', [pooled, w([h, 1])]), filled([1], 0)], {}, 'logits');
  g.output('logits', FLOAT, ['batch', 1]);
  return g.write();
}
