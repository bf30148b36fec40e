/**
 * @module native-bench/micro/embedding-batch — what batching buys per sentence with the real model
 * called directly: sentences per CPU-second (all threads of this process) for batches of 1–32
 * corpus sentences, each batch either padded to its longest sentence in one run or cut the way the
 * embedder cuts it (runs of ≤ 8 within 1.15× padding, embedding/padding.ts), and how far batched
 * vectors are from the same sentences embedded alone (cosine; float noise only is allowed).
 * A dynamically quantised graph (the shipped int8 one) runs one text a run in the server, so its
 * vectors never depend on their batch companions: the padded column forces its batches anyway, to
 * show what batching would buy, and the cosine shows what it would cost. `--texts short` uses the
 * short sentences of a typical cue instead of corpus sentences.
 *
 *   node --import tsx native-bench/micro/embedding-batch.ts [--threads 1,2] [--batches 1,2,4,8,16,32]
 *     [--seconds 3] [--texts corpus|short] [--model-dir DIR]
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { machineBusySeconds } from '../lib/proc.ts';
import { Rng } from '../lib/prng.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { createOnnxEmbedder, type OnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { corpusSentence, shortSentence } from './texts.ts';

const DEFAULT_MODEL = DEFAULTS.FLASHBULB_MODEL_DIR;

interface Rate {
  perCpuS: number;
  perS: number;
  otherCores: number;
}

type Texts = (rng: Rng) => string;

async function rate(
  model: OnnxEmbedder,
  batch: number,
  seconds: number,
  text: Texts,
): Promise<Rate> {
  const rng = new Rng(7);
  await model.embedBatch(Array.from({ length: batch }, () => text(rng)));
  const cpu0 = process.cpuUsage();
  const machine0 = machineBusySeconds();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    await model.embedBatch(Array.from({ length: batch }, () => text(rng)));
    n += batch;
  }
  const wallS = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  const cpuS = (used.user + used.system) / 1e6;
  return {
    perCpuS: n / cpuS,
    perS: n / wallS,
    otherCores: Math.max(0, machineBusySeconds() - machine0 - cpuS) / wallS,
  };
}

/** Lowest cosine between each of `texts` embedded in one batch and embedded alone. */
async function worstCosine(
  batched: OnnxEmbedder,
  single: OnnxEmbedder,
  texts: readonly string[],
): Promise<number> {
  const together = await batched.embedBatch(texts);
  let worst = 1;
  for (let i = 0; i < texts.length; i++) {
    const alone = await single.embedBatch([texts[i] as string]);
    let dot = 0;
    for (let k = 0; k < batched.dim; k++)
      dot += (together[i * batched.dim + k] ?? 0) * (alone[k] ?? 0);
    worst = Math.min(worst, dot);
  }
  return worst;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      threads: { type: 'string' },
      batches: { type: 'string' },
      seconds: { type: 'string' },
      texts: { type: 'string' },
      'model-dir': { type: 'string' },
    },
  });
  const threadCounts = (stringFlag(values, 'threads') ?? '1,2').split(',').map(Number);
  const batches = (stringFlag(values, 'batches') ?? '1,2,4,8,16,32').split(',').map(Number);
  const seconds = numberFlag(values, 'seconds', 3);
  const modelDir = stringFlag(values, 'model-dir') ?? DEFAULT_MODEL;
  const textsFlag = stringFlag(values, 'texts') ?? 'corpus';
  if (textsFlag !== 'corpus' && textsFlag !== 'short')
    throw new Error(`--texts ${textsFlag}: expected corpus or short`);
  const text: Texts = textsFlag === 'short' ? shortSentence : corpusSentence;
  const rows: Cell[][] = [];
  for (const threads of threadCounts) {
    const oneRun = await createOnnxEmbedder({
      modelDir,
      threads,
      maxBatch: 32,
      maxPadding: Number.POSITIVE_INFINITY,
      batchDynamicGraph: true,
    });
    const cut = await createOnnxEmbedder({ modelDir, threads });
    try {
      for (const batch of batches) {
        const a = await rate(oneRun, batch, seconds, text);
        const b = await rate(cut, batch, seconds, text);
        rows.push([
          threads,
          batch,
          a.perCpuS.toFixed(1),
          a.perS.toFixed(1),
          b.perCpuS.toFixed(1),
          b.perS.toFixed(1),
          Math.max(a.otherCores, b.otherCores).toFixed(2),
        ]);
        console.error(
          `threads ${threads}, batch ${batch}: ${rows[rows.length - 1]?.slice(2).join(' | ')}`,
        );
      }
      const rng = new Rng(11);
      const texts = Array.from({ length: 32 }, () => text(rng));
      console.log(
        `threads ${threads}: lowest cosine, 32 sentences in one padded run vs alone: ${(await worstCosine(oneRun, cut, texts)).toFixed(6)}; cut into runs vs alone: ${(await worstCosine(cut, cut, texts)).toFixed(6)}`,
      );
    } finally {
      await oneRun.close();
      await cut.close();
    }
  }
  console.log(
    formatTable(
      [
        'ONNX threads',
        'sentences per batch',
        'one padded run: sentences per CPU-s',
        'sentences/s',
        'as the server runs them (cut ≤ 8 within 1.15×; one a run if dynamic): sentences per CPU-s',
        'sentences/s',
        'other cores',
      ],
      rows,
    ),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
