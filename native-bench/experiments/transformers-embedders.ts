/**
 * @module native-bench/experiments/transformers-embedders — the two embedders transformers-compare
 * runs side by side: Flashbulb's ONNX embedder and transformers.js, each opened with its session
 * options, and the process's memory as /proc reports it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  DEFAULT_MAX_BATCH,
  DEFAULT_MAX_PADDING,
  paddedChunks,
} from '../../src/embedding/padding.ts';

export type Kind = 'direct' | 'direct-padded' | 'transformers' | 'transformers-cut';

type Embed = (texts: string[]) => Promise<Float32Array>;

/** What this script uses of the library (3.x): `pipeline`, `env`, and the pipeline's output tensor. */
interface FeatureTensor {
  data: Float32Array;
  dims: number[];
}

interface FeaturePipeline {
  (texts: string[], options: { pooling: 'mean'; normalize: boolean }): Promise<FeatureTensor>;
  tokenizer: { encode(text: string): number[] };
  dispose(): Promise<void>;
}

interface TransformersLib {
  env: { localModelPath: string; allowRemoteModels: boolean; allowLocalModels: boolean };
  pipeline(
    task: 'feature-extraction',
    model: string,
    options: Record<string, unknown>,
  ): Promise<FeaturePipeline>;
}

function sessionOptions(threads: number): Record<string, unknown> {
  return {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
}

export function statusKb(field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
    readFileSync('/proc/self/status', 'utf8'),
  );
  return Number(m?.[1] ?? 0);
}

export async function openEmbedder(
  kind: Kind,
  modelDir: string,
  threads: number,
  libDir: string,
): Promise<{ embed: Embed; close: () => Promise<void> }> {
  if (kind === 'direct' || kind === 'direct-padded') {
    // Imported here, not at the top: our onnxruntime-node must not load in the library's process.
    const { createOnnxEmbedder } = await import('../../src/embedding/onnx-embedder.ts');
    const padded = kind === 'direct-padded';
    const m = await createOnnxEmbedder({
      modelDir,
      threads,
      spin: false,
      ...(padded ? { maxBatch: 1024, maxPadding: Number.POSITIVE_INFINITY } : {}),
    });
    return { embed: (t) => m.embedBatch(t), close: () => m.close() };
  }
  const entry = createRequire(join(libDir, 'package.json')).resolve('@huggingface/transformers');
  const lib = (await import(pathToFileURL(entry).href)) as TransformersLib;
  lib.env.allowRemoteModels = false;
  lib.env.allowLocalModels = true;
  lib.env.localModelPath = dirname(modelDir);
  // subfolder '' and dtype 'fp32' (suffix '') make the library open <model-dir>/model.onnx itself.
  const pipe = await lib.pipeline('feature-extraction', basename(modelDir), {
    device: 'cpu',
    dtype: 'fp32',
    subfolder: '',
    local_files_only: true,
    session_options: sessionOptions(threads),
  });
  const run = async (t: string[]): Promise<Float32Array> =>
    (await pipe(t, { pooling: 'mean', normalize: true })).data;
  if (kind === 'transformers') return { embed: run, close: () => pipe.dispose() };
  // What adopting the library would look like: the embedder's own cut (sorted by token count, runs of
  // ≤ 8 within 1.15× padding) in front of the pipeline, rows put back in the callers' order.
  const cut: Embed = async (t) => {
    if (t.length === 1) return run(t);
    const lengths = t.map((x) => pipe.tokenizer.encode(x).length);
    const order = t.map((_, i) => i).sort((a, b) => (lengths[a] ?? 0) - (lengths[b] ?? 0));
    const out = new Float32Array(t.length * 384);
    let s = 0;
    for (const size of paddedChunks(
      order.map((i) => lengths[i] ?? 0),
      DEFAULT_MAX_BATCH,
      DEFAULT_MAX_PADDING,
    )) {
      const rows = order.slice(s, s + size);
      s += size;
      const v = await run(rows.map((r) => t[r] as string));
      rows.forEach((r, k) => {
        out.set(v.subarray(k * 384, (k + 1) * 384), r * 384);
      });
    }
    return out;
  };
  return { embed: cut, close: () => pipe.dispose() };
}
