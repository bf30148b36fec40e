/**
 * @module native-bench/micro/real-vectors — real embeddings (the default model) of the sentences
 * real-corpus.ts finds, computed once (a few minutes on this machine) and cached as raw float32
 * rows in the temp directory, one cache per model.
 */
import { DEFAULTS } from '../../src/config/index.ts';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';
import { realSentences } from './real-corpus.ts';

const DIM = 384;
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MODEL = DEFAULTS.FLASHBULB_MODEL_DIR;

/** Up to `max` real embeddings (fewer when the machine has fewer sentences). */
export async function realVectors(max: number): Promise<Float32Array[]> {
  const sentences = realSentences(max, REPO);
  const cache = join(tmpdir(), `flashbulb-micro-${basename(MODEL)}-${sentences.length}.f32`);
  let flat: Float32Array;
  if (existsSync(cache)) {
    const buf = readFileSync(cache);
    flat = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  } else {
    console.log(`  embedding ${sentences.length} real sentences once (cached in ${cache})…`);
    const model = await createOnnxEmbedder({ modelDir: MODEL, threads: 1 });
    flat = new Float32Array(sentences.length * DIM);
    for (let i = 0; i < sentences.length; i += 64)
      flat.set(await model.embedBatch(sentences.slice(i, i + 64)), i * DIM);
    await model.close();
    writeFileSync(cache, Buffer.from(flat.buffer, flat.byteOffset, flat.byteLength));
  }
  return Array.from({ length: flat.length / DIM }, (_, i) => flat.slice(i * DIM, (i + 1) * DIM));
}
