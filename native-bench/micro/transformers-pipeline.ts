/**
 * @module native-bench/micro/transformers-pipeline — the design card's @huggingface/transformers
 * feature-extraction pipeline against the embedder Flashbulb runs (onnxruntime-node and
 * @huggingface/tokenizers called directly, `embedding/onnx-embedder.ts`), on the same model files,
 * one intra-op thread each: CPU per sentence (user + system of this process) one at a time and in
 * runs of 8 and 32, wall latency of one sentence, and how far the two vectors differ.
 *
 * The library is not a dependency of the server (docs/architecture-notes.md says why), so install it where
 * this script can find it first; its onnxruntime-node install script only fetches GPU builds:
 *
 *   npm install --no-save --ignore-scripts @huggingface/transformers@4.3.1
 *   node --import tsx native-bench/micro/transformers-pipeline.ts [--seconds 4] [--from DIR]
 *
 * `--from DIR` resolves the library from another directory's node_modules instead.
 */
import { mkdtempSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { Rng } from '../lib/prng.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { corpusSentence } from './texts.ts';

const MODEL = fileURLToPath(new URL('../../models/all-MiniLM-L6-v2', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));

type Embed = (texts: string[]) => Promise<Float32Array>;

interface Pipeline {
  (texts: string[], options: { pooling: 'mean'; normalize: boolean }): Promise<{ data: Float32Array }>;
  dispose(): Promise<void>;
}

interface Transformers {
  env: { localModelPath: string; allowRemoteModels: boolean; allowLocalModels: boolean };
  pipeline(task: 'feature-extraction', model: string, options: object): Promise<Pipeline>;
}

/** The sentence-transformers layout, re-linked as transformers.js expects it (onnx/model.onnx). */
function hubLayout(): string {
  const root = mkdtempSync(join(tmpdir(), 'fb-transformers-'));
  const dir = join(root, 'all-MiniLM-L6-v2');
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']) symlinkSync(join(MODEL, f), join(dir, f));
  symlinkSync(join(MODEL, 'model.onnx'), join(dir, 'onnx', 'model.onnx'));
  return root;
}

async function loadLibrary(from: string): Promise<Transformers> {
  const entry = createRequire(join(from, 'package.json')).resolve('@huggingface/transformers');
  return (await import(pathToFileURL(entry).href)) as Transformers;
}

interface Cost {
  cpuMsPerSentence: number;
  sentencesPerCpuS: number;
}

async function cost(embed: Embed, batch: number, seconds: number): Promise<Cost> {
  const rng = new Rng(7);
  for (let i = 0; i < 5; i++) await embed([corpusSentence(rng)]);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    await embed(Array.from({ length: batch }, () => corpusSentence(rng)));
    n += batch;
  }
  const used = process.cpuUsage(cpu0);
  const cpuS = (used.user + used.system) / 1e6;
  return { cpuMsPerSentence: (cpuS * 1000) / n, sentencesPerCpuS: n / cpuS };
}

async function latencyP50(embed: Embed): Promise<number> {
  const rng = new Rng(9);
  const ms: number[] = [];
  for (let i = 0; i < 200; i++) {
    const text = corpusSentence(rng);
    const t0 = performance.now();
    await embed([text]);
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b)[100] ?? 0;
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return worst;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { seconds: { type: 'string' }, from: { type: 'string' } } });
  const seconds = numberFlag(values, 'seconds', 4);
  const lib = await loadLibrary(stringFlag(values, 'from') ?? REPO);
  const layout = hubLayout();
  try {
    lib.env.localModelPath = layout;
    lib.env.allowRemoteModels = false;
    lib.env.allowLocalModels = true;
    const pipe = await lib.pipeline('feature-extraction', 'all-MiniLM-L6-v2', { dtype: 'fp32', device: 'cpu', session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 } });
    const direct = await createOnnxEmbedder({ modelDir: MODEL, threads: 1 });
    const embeds: Array<[string, Embed]> = [
      ['direct (onnx-embedder.ts)', (t) => direct.embedBatch(t)],
      ['transformers pipeline', async (t) => (await pipe(t, { pooling: 'mean', normalize: true })).data],
    ];
    const probe = Array.from({ length: 32 }, (_, i) => corpusSentence(new Rng(100 + i)));
    const diff = maxDifference(await direct.embedBatch(probe), (await pipe(probe, { pooling: 'mean', normalize: true })).data);
    const rows: Cell[][] = [];
    for (const [name, embed] of embeds) {
      const row: Cell[] = [name, (await latencyP50(embed)).toFixed(2)];
      for (const batch of [1, 8, 32]) row.push((await cost(embed, batch, seconds)).sentencesPerCpuS.toFixed(0));
      rows.push(row);
      console.error(`${name}: ${row.slice(1).join(' | ')}`);
    }
    console.log(formatTable(['embedder (1 intra-op thread)', 'p50 ms, 1 sentence', 'sentences/CPU-s, 1 per run', '8 per run', '32 per run'], rows));
    console.log(`largest difference between the two vectors of 32 sentences: ${diff.toExponential(2)}`);
    await pipe.dispose();
    await direct.close();
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
