/**
 * @module native-bench/rerank — what the optional reranker costs a recall: the time to score one
 * cue against N candidates (10–50) with a cross-encoder, in process (the model alone) and through
 * the reranker's pool (a worker thread, batches of FLASHBULB_RERANK_BATCH), p50 and p90 of
 * `--runs` recalls after a warm-up, on two models written here: the tiny test model
 * (test/helpers/tiny-reranker.ts: the fixed cost of a run) and a cross-encoder of
 * ms-marco-MiniLM-L-6-v2's shape with random weights (native-bench/lib/bert-graph.ts, with the
 * bge-small tokenizer, whose vocabulary is the same 30 522 words): no model can be downloaded on
 * this machine, so the scores mean nothing and the cost is that of a real model of that size.
 * Candidates are corpus sentences of 40–300 characters (about 10–70 tokens) or, with
 * `--texts long`, three of them joined (a long turn). `--model-dir DIR` adds a real model.
 *
 *   node --import tsx native-bench/rerank.ts [--counts 10,20,30,50] [--runs 20] [--threads 2]
 *     [--batch 16] [--texts corpus|long] [--model-dir DIR] [--markdown]
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../src/config/index.ts';
import { createCrossEncoder } from '../src/embedding/rerank-model.ts';
import { createRerankPool } from '../src/embedding/rerank-pool.ts';
import { writeTinyReranker } from '../test/helpers/tiny-reranker.ts';
import { listFlag, numberFlag, stringFlag } from './lib/args.ts';
import { bertCrossEncoder, MINILM_L6, parameterCount } from './lib/bert-graph.ts';
import { Rng } from './lib/prng.ts';
import { formatMarkdown, formatTable, type Cell } from './lib/table.ts';
import { corpusSentence } from './micro/texts.ts';

const { values } = parseArgs({
  options: {
    counts: { type: 'string' },
    runs: { type: 'string' },
    threads: { type: 'string' },
    batch: { type: 'string' },
    texts: { type: 'string' },
    'model-dir': { type: 'string' },
    markdown: { type: 'boolean' },
  },
});
const counts = listFlag(values, 'counts', ['10', '20', '30', '50']).map(Number);
const runs = numberFlag(values, 'runs', 20);
const threads = numberFlag(values, 'threads', 2);
const batch = numberFlag(values, 'batch', 16);
const long = stringFlag(values, 'texts') === 'long';

const root = mkdtempSync(join(tmpdir(), 'flashbulb-rerank-bench-'));

/** The MiniLM-L6-shaped model beside bge-small's tokenizer files. */
function writeMiniLm(dir: string): string {
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    copyFileSync(join(DEFAULTS.FLASHBULB_MODEL_DIR, f), join(dir, f));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ model_type: 'bert', max_position_embeddings: MINILM_L6.positions }),
  );
  writeFileSync(join(dir, 'onnx', 'model.onnx'), bertCrossEncoder(MINILM_L6));
  return dir;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
}

async function timed(f: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await f();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await f();
    out.push(performance.now() - t0);
  }
  return out;
}

const rng = new Rng(11);
const docs = Array.from({ length: Math.max(...counts) }, () =>
  long
    ? `${corpusSentence(rng)} ${corpusSentence(rng)} ${corpusSentence(rng)}`
    : corpusSentence(rng),
);
const cue = 'What did the support team say about the invoice and the refund last week?';

const models: Array<{ label: string; dir: string }> = [
  { label: 'tiny (test model)', dir: writeTinyReranker(join(root, 'tiny')) },
  {
    label: `MiniLM-L6 shape, ${(parameterCount(MINILM_L6) / 1e6).toFixed(1)} M params (random)`,
    dir: writeMiniLm(join(root, 'minilm')),
  },
];
const own = stringFlag(values, 'model-dir');
if (own !== undefined) models.push({ label: own, dir: own });

const rows: Cell[][] = [];
try {
  for (const m of models) {
    const model = await createCrossEncoder({
      modelDir: m.dir,
      threads,
      maxBatch: batch,
      maxTokens: 256,
    });
    const pool = await createRerankPool({
      modelDir: m.dir,
      workers: 1,
      threads,
      batch,
      maxTokens: 256,
      maxQueued: 8,
      timeoutMs: 600_000,
    });
    try {
      for (const n of counts) {
        const some = docs.slice(0, n);
        const direct = await timed(() => model.score(cue, some));
        const pooled = await timed(() => pool.score(cue, some));
        rows.push([
          m.label,
          n,
          quantile(direct, 0.5),
          quantile(direct, 0.9),
          quantile(pooled, 0.5),
          quantile(pooled, 0.9),
          (quantile(pooled, 0.5) * 1000) / n,
        ]);
      }
    } finally {
      await model.close();
      await pool.close();
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const headers = [
  'model',
  'candidates',
  'model p50 ms',
  'model p90 ms',
  'pool p50 ms',
  'pool p90 ms',
  'pool µs / candidate',
];
console.log(
  `threads ${threads}, batch ${batch}, ${runs} runs, texts ${long ? 'long' : 'corpus'}\n` +
    (values.markdown ? formatMarkdown(headers, rows) : formatTable(headers, rows)),
);
