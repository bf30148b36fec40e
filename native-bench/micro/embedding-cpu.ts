/**
 * @module native-bench/micro/embedding-cpu — CPU (all threads of this process, user + system) per
 * embedded corpus sentence with the real model called directly: the "in-process embedding cost"
 * that issue 17 compares the server's CPU per operation with. Varies the ONNX Runtime intra-op
 * threads and whether idle intra-op threads spin, for sentences embedded one at a time (what a
 * lone request costs) and back to back from N concurrent callers through one model (what the
 * pool does under load, batches cut by length).
 *
 *   node --import tsx native-bench/micro/embedding-cpu.ts [--threads 1,2] [--seconds 4] [--model-dir DIR]
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag } from '../lib/args.ts';
import { Rng } from '../lib/prng.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { machineBusySeconds } from '../lib/proc.ts';
import { createOnnxEmbedder, type OnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { corpusSentence } from './texts.ts';

const DEFAULT_MODEL = DEFAULTS.FLASHBULB_MODEL_DIR;

interface CpuRun {
  sentences: number;
  wallS: number;
  cpuS: number;
  /** Busy CPU of the whole machine minus this process (other programs), in cores. */
  otherCores: number;
}

/** Embeds sentences for `seconds`, `batch` per model run; CPU of this whole process meanwhile. */
async function run(
  model: OnnxEmbedder,
  rng: Rng,
  opts: { seconds: number; batch: number },
): Promise<CpuRun> {
  for (let i = 0; i < 5; i++) await model.embedBatch([corpusSentence(rng)]);
  const cpu0 = process.cpuUsage();
  const machine0 = machineBusySeconds();
  const t0 = performance.now();
  let sentences = 0;
  while (performance.now() - t0 < opts.seconds * 1000) {
    await model.embedBatch(Array.from({ length: opts.batch }, () => corpusSentence(rng)));
    sentences += opts.batch;
  }
  const wallS = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  const cpuS = (used.user + used.system) / 1e6;
  return {
    sentences,
    wallS,
    cpuS,
    otherCores: Math.max(0, machineBusySeconds() - machine0 - cpuS) / wallS,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      threads: { type: 'string' },
      seconds: { type: 'string' },
      'model-dir': { type: 'string' },
    },
  });
  const threadCounts = (stringFlag(values, 'threads') ?? '1,2').split(',').map(Number);
  const seconds = numberFlag(values, 'seconds', 4);
  const modelDir = stringFlag(values, 'model-dir') ?? DEFAULT_MODEL;
  const rows: Cell[][] = [];
  for (const threads of threadCounts) {
    for (const spin of [true, false]) {
      const model = await createOnnxEmbedder({ modelDir, threads, spin });
      try {
        for (const batch of [1, 8]) {
          const r = await run(model, new Rng(42), { seconds, batch });
          rows.push([
            threads,
            spin ? 'yes' : 'no',
            batch,
            (r.sentences / r.wallS).toFixed(1),
            ((r.wallS * 1000) / r.sentences).toFixed(2),
            ((r.cpuS * 1000) / r.sentences).toFixed(2),
            (r.cpuS / r.wallS).toFixed(2),
            r.otherCores.toFixed(2),
          ]);
          console.error(
            `threads ${threads}, spin ${spin}, batch ${batch}: ${rows[rows.length - 1]?.slice(3).join(' | ')}`,
          );
        }
      } finally {
        await model.close();
      }
    }
  }
  console.log(
    formatTable(
      [
        'ONNX threads',
        'spin',
        'per run',
        'sentences/s',
        'wall ms/sentence',
        'CPU ms/sentence',
        'cores used',
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
