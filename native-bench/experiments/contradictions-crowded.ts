/**
 * @module native-bench/experiments/contradictions-crowded — which contradicting pairs the check ever compares
 * when the workspace is full of similar memories. Every distinct sentence of a SICK split is one
 * memory of a single workspace (about 5,000 short scene descriptions, many about the same men,
 * dogs and guitars), embedded in process with the model in FLASHBULB_MODEL_DIR, else the server's
 * default (cached under the OS temporary directory per model, never in the repository). For each pair, sentence B is the new memory; the pair is
 * compared when A is among the memories the shard's check looks at for B and the candidate rule
 * accepts it, and flagged when the classifier then flags it:
 *
 * - "vector, cosine ≥ 0.55 only": B's 6 nearest by cosine (exact here; the shard's HNSW search is
 *   approximate), compared when the cosine reaches the cut-off (the check before issue 25);
 * - "vector": the same 6, with the candidate rule (the cut-off, or a lower one with shared words);
 * - "vector + lexical": those, and B's best LEXICAL_NEIGHBOURS memories by BM25 in the
 *   workspace's lexical index (src/shard/index/lexical.ts), as src/shard/contradictions.ts does.
 *
 * It prints recall, false alarms and contradictions never compared for both, and the extra pairs
 * compared per remember. Static: every other sentence is already stored when B arrives.
 *
 *   node --import tsx native-bench/experiments/contradictions-crowded.ts [--split train|trial] [--lexical 3]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import {
  classifyPair,
  CONFIDENT,
  isCandidate,
  MIN_SIMILARITY,
  UNCERTAIN,
} from '../../src/analysis/contradiction.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';
import { LexicalIndex } from '../../src/shard/index/lexical.ts';
import { numberFlag, stringFlag } from '../lib/args.ts';
import {
  benchModelDir,
  cachePath,
  printScore,
  readSick,
  score,
  type Outcome,
} from '../lib/sick.ts';

const NEIGHBOURS = 6;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { split: { type: 'string' }, lexical: { type: 'string' } },
  });
  const split = stringFlag(values, 'split') ?? 'train';
  const lexicalK = numberFlag(values, 'lexical', 3);
  const path = [`../shared/data/sick/SICK_${split}.txt`, `../../shared/data/sick/SICK_${split}.txt`]
    .map((p) => resolve(p))
    .find((p) => existsSync(p));
  const pairs = path ? readSick(path) : null;
  if (!pairs) {
    console.log('contradictions-crowded skipped: no SICK data (see ../shared/data/README.md)');
    return;
  }
  const texts = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  const index = new Map(texts.map((t, i) => [t, i]));
  const vectors = await embed(split, texts);
  const lexical = new LexicalIndex();
  texts.forEach((t, i) => {
    lexical.add(String(i), { content: t, entityId: null, context: {} });
  });
  const lexicon = await loadLexicon();
  const runs: Record<string, Outcome[]> = {
    'vector, cosine ≥ 0.55 only': [],
    vector: [],
    'vector + lexical': [],
  };
  let extra = 0;
  for (const pair of pairs) {
    const a = index.get(pair.a) as number;
    const b = index.get(pair.b) as number;
    const near = nearest(vectors, b);
    const words = lexical
      .search(
        lexical.query(pair.b),
        lexicalK,
        (id) => Number(id) !== b && !near.includes(Number(id)),
      )
      .map((h) => Number(h.id));
    extra += words.length;
    const sim = dot(vectors[a] as Float32Array, vectors[b] as Float32Array);
    const looks: Array<[string, number[], typeof isCandidate]> = [
      ['vector, cosine ≥ 0.55 only', near, (_a, _b, s) => s >= MIN_SIMILARITY],
      ['vector', near, isCandidate],
      ['vector + lexical', [...near, ...words], isCandidate],
    ];
    for (const [name, looked, candidate] of looks) {
      const compared = a !== b && looked.includes(a) && candidate(pair.a, pair.b, sim);
      const c = compared ? classifyPair(pair.a, pair.b, sim, { lexicon }) : null;
      const found =
        c === null || c.verdict === 'none' || c.score < UNCERTAIN
          ? 'none'
          : c.score >= CONFIDENT
            ? 'edge'
            : 'pending';
      runs[name]?.push({ pair, found, compared, reason: c?.reason ?? 'not compared' });
    }
  }
  console.log(
    `SICK ${split}: ${texts.length} distinct sentences in one workspace; B's ${NEIGHBOURS} nearest by cosine, and ${lexicalK} by BM25`,
  );
  for (const [name, outcomes] of Object.entries(runs)) printScore(`  ${name}`, score(outcomes));
  console.log(
    `  lexical neighbours not already among the nearest: ${(extra / pairs.length).toFixed(2)} per remember`,
  );
}

/** The NEIGHBOURS memories nearest to memory `i` by cosine (itself excluded). */
function nearest(vectors: readonly Float32Array[], i: number): number[] {
  const q = vectors[i] as Float32Array;
  const best: Array<[number, number]> = [];
  for (let j = 0; j < vectors.length; j++) {
    if (j === i) continue;
    const s = dot(q, vectors[j] as Float32Array);
    if (best.length < NEIGHBOURS || s > (best[best.length - 1] as [number, number])[1]) {
      best.push([j, s]);
      best.sort((x, y) => y[1] - x[1]);
      if (best.length > NEIGHBOURS) best.pop();
    }
  }
  return best.map(([j]) => j);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += (a[d] as number) * (b[d] as number);
  return s;
}

/** Each text's vector from the bench's model (lib/sick.ts benchModelDir; cached in the temporary directory per model). */
async function embed(split: string, texts: readonly string[]): Promise<Float32Array[]> {
  const modelDir = benchModelDir();
  const cache = cachePath(modelDir, `${split}-sentences-${texts.length}.f32`);
  let flat: Float32Array;
  if (existsSync(cache)) {
    const buf = readFileSync(cache);
    flat = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  } else {
    const model = await createOnnxEmbedder({ modelDir, threads: 1 });
    try {
      flat = new Float32Array(texts.length * model.dim);
      for (let i = 0; i < texts.length; i += 64)
        flat.set(await model.embedBatch(texts.slice(i, i + 64)), i * model.dim);
    } finally {
      await model.close();
    }
    writeFileSync(cache, Buffer.from(flat.buffer, flat.byteOffset, flat.byteLength));
  }
  const dim = flat.length / texts.length;
  return Array.from({ length: texts.length }, (_, i) => flat.subarray(i * dim, (i + 1) * dim));
}

await main();
