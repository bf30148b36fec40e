/**
 * @module native-bench/micro/contradiction-candidates — what the contradiction check costs per
 * remember on an agent's real memory stream: the turns of LoCoMo conversations (default
 * ../shared/data/locomo-dev.json, skipped when absent; embedded once in process with the default
 * model and cached in the temporary directory), remembered in order. For each turn, its 6 nearest
 * earlier turns (as the shard's neighbour search finds them) are the pairs looked at, and in the
 * last row also its 3 best earlier turns by BM25 (the workspace's lexical index, as
 * src/shard/contradictions.ts looks them up); the table gives the pairs compared per remember
 * under the cosine cut-off alone and under the candidate rule (cut-off, or a lower cut-off with
 * shared words), the pairs flagged, and the CPU time of the candidate rule plus the classifier per
 * remember (the vector search, unchanged, not included; the BM25 search is, in the last row).
 *
 *   node --import tsx native-bench/micro/contradiction-candidates.ts [--conversations 0,1,2]
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import {
  classifyPair,
  isCandidate,
  MIN_SIMILARITY,
  UNCERTAIN,
} from '../../src/analysis/contradiction.ts';
import type { Lexicon } from '../../src/analysis/lexicon.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';
import { LexicalIndex } from '../../src/shard/index/lexical.ts';
import { listFlag } from '../lib/args.ts';
import { formatTable } from '../lib/table.ts';

const NEIGHBOURS = 6;
const LEXICAL_NEIGHBOURS = 3;
const DIM = 384;

type Rule = (a: string, b: string, sim: number) => boolean;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { data: { type: 'string' }, conversations: { type: 'string' } },
  });
  const path = [
    typeof values.data === 'string' ? values.data : '',
    '../shared/data/locomo-dev.json',
    '../../shared/data/locomo-dev.json',
  ]
    .filter(Boolean)
    .map((p) => resolve(p))
    .find((p) => existsSync(p));
  if (!path) {
    console.log('contradiction-candidates skipped: no LoCoMo data (see ../shared/data/README.md)');
    return;
  }
  const picked = listFlag(values, 'conversations', ['0', '1', '2']).map(Number);
  const texts = turns(path, picked);
  const vectors = await embed(texts, picked);
  const lexicon = await loadLexicon();
  const near = neighbourPairs(vectors);
  const c0 = process.cpuUsage();
  const words = lexicalPairs(texts, vectors, near);
  const search = process.cpuUsage(c0);
  const rows = [
    row('cosine ≥ 0.55 only', texts, near, (_a, _b, sim) => sim >= MIN_SIMILARITY, lexicon),
    row('candidate rule', texts, near, isCandidate, lexicon),
    row(
      `candidate rule, + ${LEXICAL_NEIGHBOURS} by BM25`,
      texts,
      [...near, ...words],
      isCandidate,
      lexicon,
      (search.user + search.system) / texts.length,
    ),
  ];
  console.log(
    `${texts.length} turns of LoCoMo conversations ${picked.join(', ')}, ${NEIGHBOURS} nearest earlier turns each`,
  );
  console.log(
    formatTable(['pairs compared', 'per remember', 'flagged', 'µs CPU per remember'], rows),
  );
}

function row(
  name: string,
  texts: readonly string[],
  pairs: ReadonlyArray<[number, number, number]>,
  rule: Rule,
  lexicon: Lexicon,
  searchUs = 0,
): Array<string | number> {
  let compared = 0;
  let flagged = 0;
  const c0 = process.cpuUsage();
  for (let round = 0; round < 5; round++) {
    compared = 0;
    flagged = 0;
    for (const [i, j, sim] of pairs) {
      const [older, newer] = [texts[j] as string, texts[i] as string];
      if (!rule(older, newer, sim)) continue;
      compared += 1;
      const c = classifyPair(older, newer, sim, { lexicon });
      if (c.verdict !== 'none' && c.score >= UNCERTAIN) flagged += 1;
    }
  }
  const cpu = process.cpuUsage(c0);
  return [
    name,
    compared,
    compared / texts.length,
    flagged,
    (cpu.user + cpu.system) / 5 / texts.length + searchUs,
  ];
}

/** For each turn, its best earlier turns by BM25 that are not among its nearest by vector: [turn, earlier turn, cosine]. */
function lexicalPairs(
  texts: readonly string[],
  vectors: readonly Float32Array[],
  near: ReadonlyArray<[number, number, number]>,
): Array<[number, number, number]> {
  const nearOf = new Map<number, Set<string>>();
  for (const [t, j] of near) nearOf.set(t, (nearOf.get(t) ?? new Set()).add(String(j)));
  const index = new LexicalIndex();
  const out: Array<[number, number, number]> = [];
  for (let i = 0; i < texts.length; i++) {
    const seen = nearOf.get(i) ?? new Set();
    for (const hit of index.search(
      index.query(texts[i] as string),
      LEXICAL_NEIGHBOURS,
      (id) => !seen.has(id),
    )) {
      const j = Number(hit.id);
      out.push([i, j, dot(vectors[i] as Float32Array, vectors[j] as Float32Array)]);
    }
    index.add(String(i), { content: texts[i] as string, entityId: null, context: {} });
  }
  return out;
}

/** For each turn, its nearest earlier turns: [turn, earlier turn, cosine]. */
function neighbourPairs(vectors: readonly Float32Array[]): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (let i = 1; i < vectors.length; i++) {
    const sims: Array<[number, number]> = [];
    for (let j = 0; j < i; j++)
      sims.push([j, dot(vectors[i] as Float32Array, vectors[j] as Float32Array)]);
    sims.sort((x, y) => y[1] - x[1]);
    for (const [j, s] of sims.slice(0, NEIGHBOURS)) out.push([i, j, s]);
  }
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let d = 0; d < DIM; d++) s += (a[d] as number) * (b[d] as number);
  return s;
}

interface Turn {
  speaker: string;
  text: string;
}

/** Every turn as the retrieval benchmark stores it: "<speaker>: <text>". */
function turns(path: string, picked: readonly number[]): string[] {
  const all = JSON.parse(readFileSync(path, 'utf8')) as Array<{
    conversation: Record<string, unknown>;
  }>;
  return picked.flatMap((n) => {
    const c = all[n]?.conversation ?? {};
    return Object.keys(c)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)))
      .flatMap((k) => (c[k] as Turn[]).map((t) => `${t.speaker}: ${t.text}`));
  });
}

async function embed(texts: readonly string[], picked: readonly number[]): Promise<Float32Array[]> {
  const cache = join(tmpdir(), `flashbulb-locomo-turns-${picked.join('-')}-${texts.length}.f32`);
  let flat: Float32Array;
  if (existsSync(cache)) {
    const buf = readFileSync(cache);
    flat = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  } else {
    const model = await createOnnxEmbedder({ modelDir: DEFAULTS.FLASHBULB_MODEL_DIR, threads: 1 });
    flat = new Float32Array(texts.length * DIM);
    for (let i = 0; i < texts.length; i += 64)
      flat.set(await model.embedBatch(texts.slice(i, i + 64)), i * DIM);
    await model.close();
    writeFileSync(cache, Buffer.from(flat.buffer, flat.byteOffset, flat.byteLength));
  }
  return Array.from({ length: flat.length / DIM }, (_, i) => flat.slice(i * DIM, (i + 1) * DIM));
}

await main();
