/**
 * @module native-bench/micro/model-ops — where one embedding's time goes inside the model: ONNX
 * Runtime's own per-operator profile of the embedder (the server's session options, one intra-op
 * thread by default), short sentences one at a time. Per operator type of the optimised graph:
 * nodes, microseconds per run, share of the kernels' time, and for the matrix products the
 * multiply-adds they did and the rate (a graph whose time is in its matrix products, at a rate
 * near the CPU's, has little left to gain from fusing the rest).
 *
 * The profiler times each node, which adds a little to each: the shares are the finding, the
 * absolute times are a little high (the embedder's own p50 without the profiler is printed beside).
 *
 *   node --import tsx native-bench/micro/model-ops.ts [--runs 300] [--threads 1] [--model-dir DIR]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../../src/config/index.ts';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { Rng } from '../lib/prng.ts';
import { percentile } from '../lib/stats.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { shortSentence } from './texts.ts';

const WARMUP = 30;
/** Operators that multiply matrices: their multiply-adds are counted from their shapes. */
const PRODUCTS = new Set([
  'MatMul',
  'FusedMatMul',
  'MatMulInteger',
  'MatMulIntegerToFloat',
  'DynamicQuantizeMatMul',
  'Gemm',
]);

interface TraceEvent {
  cat?: string;
  name?: string;
  ts?: number;
  dur?: number;
  args?: {
    op_name?: string;
    input_type_shape?: Array<Record<string, number[]>>;
    output_type_shape?: Array<Record<string, number[]>>;
  };
}

interface OpTotals {
  nodes: number;
  us: number;
  macs: number;
}

function shapeOf(entry: Record<string, number[]> | undefined): number[] {
  return entry === undefined ? [] : (Object.values(entry)[0] ?? []);
}

function product(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

/** Multiply-adds of a matrix product: every output element sums K products, K = the first input's last dimension. */
function macsOf(e: TraceEvent): number {
  const a = shapeOf(e.args?.input_type_shape?.[0]);
  const out = shapeOf(e.args?.output_type_shape?.[0]);
  const k = a[a.length - 1] ?? 0;
  return product(out) * k;
}

function p50(values: readonly number[]): number {
  return percentile(Float64Array.from(values).sort(), 0.5);
}

async function embedOneAtATime(
  modelDir: string,
  threads: number,
  runs: number,
  profileFilePrefix?: string,
): Promise<number[]> {
  const embedder = await createOnnxEmbedder({
    modelDir,
    threads,
    ...(profileFilePrefix === undefined ? {} : { profileFilePrefix }),
  });
  const rng = new Rng(26);
  const ms: number[] = [];
  try {
    for (let i = 0; i < WARMUP + runs; i++) {
      const text = shortSentence(rng);
      const t0 = performance.now();
      await embedder.embed([text]);
      if (i >= WARMUP) ms.push(performance.now() - t0);
    }
  } finally {
    await embedder.close();
  }
  return ms;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      runs: { type: 'string' },
      threads: { type: 'string' },
      'model-dir': { type: 'string' },
    },
  });
  const runs = numberFlag(values, 'runs', 300);
  const threads = numberFlag(values, 'threads', 1);
  const modelDir = stringFlag(values, 'model-dir') ?? DEFAULTS.FLASHBULB_MODEL_DIR;

  const plain = await embedOneAtATime(modelDir, threads, runs);
  const dir = mkdtempSync(join(tmpdir(), 'flashbulb-model-ops-'));
  try {
    const profiledMs = await embedOneAtATime(modelDir, threads, runs, join(dir, 'ort'));
    const file = readdirSync(dir).find((f) => f.endsWith('.json'));
    if (file === undefined) throw new Error(`ONNX Runtime wrote no profile into ${dir}`);
    const events = JSON.parse(readFileSync(join(dir, file), 'utf8')) as TraceEvent[];

    // Count only the runs after the warm-up: the model_run events in time order say where they start.
    const modelRuns = events
      .filter((e) => e.cat === 'Session' && e.name === 'model_run')
      .sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0));
    const counted = modelRuns.slice(WARMUP);
    const from = counted[0]?.ts ?? 0;
    if (counted.length === 0) throw new Error('the profile holds no model runs after the warm-up');
    const byOp = new Map<string, OpTotals>();
    for (const e of events) {
      if (e.cat !== 'Node' || e.name?.endsWith('_kernel_time') !== true || (e.ts ?? 0) < from)
        continue;
      const op = e.args?.op_name ?? '?';
      const t = byOp.get(op) ?? { nodes: 0, us: 0, macs: 0 };
      t.nodes += 1;
      t.us += e.dur ?? 0;
      if (PRODUCTS.has(op)) t.macs += macsOf(e);
      byOp.set(op, t);
    }
    const n = counted.length;
    const kernelUs = [...byOp.values()].reduce((s, t) => s + t.us, 0) / n;
    const runUs = counted.reduce((s, e) => s + (e.dur ?? 0), 0) / n;
    const rows: Cell[][] = [...byOp.entries()]
      .sort((a, b) => b[1].us - a[1].us)
      .map(([op, t]) => [
        op,
        t.nodes / n,
        t.us / n,
        (100 * t.us) / n / kernelUs,
        t.macs > 0 ? t.macs / n / 1e6 : '',
        t.macs > 0 ? t.macs / t.us / 1e3 : '',
      ]);
    const products = [...byOp.entries()].filter(([op]) => PRODUCTS.has(op)).map(([, t]) => t);
    const productUs = products.reduce((s, t) => s + t.us, 0) / n;
    const productMacs = products.reduce((s, t) => s + t.macs, 0) / n;
    console.log(
      `${modelDir}, ${threads} intra-op thread(s), ${n} short sentences one at a time after ${WARMUP} to warm up`,
    );
    console.log(
      `embed() p50: ${p50(plain).toFixed(2)} ms without the profiler, ${p50(profiledMs).toFixed(2)} ms with it; model run ${(runUs / 1e3).toFixed(2)} ms, its kernels ${(kernelUs / 1e3).toFixed(2)} ms (means)\n`,
    );
    console.log(
      formatTable(
        [
          'operator',
          'nodes/run',
          'µs/run',
          '% of kernels',
          'M multiply-adds/run',
          'G multiply-adds/s',
        ],
        rows,
      ),
    );
    console.log(
      `\nmatrix products: ${((100 * productUs) / kernelUs).toFixed(1)} % of the kernels' time, ${(productMacs / 1e6).toFixed(1)} M multiply-adds a run at ${(productMacs / productUs / 1e3).toFixed(1)} G/s`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
