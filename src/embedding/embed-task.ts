/**
 * @module embedding/embed-task — the Piscina task that runs the model: one model instance per
 * worker thread, created on first use (what loading it allocated and freed is handed back to the
 * system at once); returns the n×dim buffer moved (not copied) back.
 */
import { move, workerData } from 'piscina';
import { releaseFreedMemory } from '../threads/release-memory.ts';
import { createOnnxEmbedder, type OnnxEmbedder } from './onnx-embedder.ts';

interface TaskData {
  modelDir: string;
  threads: number;
  spin: boolean;
}

let model: Promise<OnnxEmbedder> | null = null;

function load(): Promise<OnnxEmbedder> {
  const data = workerData as TaskData;
  // Parsing and optimising the graph frees 15–30 MB that glibc would otherwise keep in this thread's arena.
  model ??= createOnnxEmbedder({
    modelDir: data.modelDir,
    threads: data.threads,
    spin: data.spin,
  }).then((m) => {
    releaseFreedMemory();
    return m;
  });
  return model;
}

/** Task: `{ texts }` → n×dim Float32Array, or `{ info: true }` → model facts. */
export default async function embedTask(
  task: { texts: string[] } | { info: true },
): Promise<unknown> {
  const m = await load();
  if ('info' in task)
    return {
      name: m.name,
      dim: m.dim,
      maxTokens: m.maxTokens,
      pooling: m.pooling,
      maxBatch: m.maxBatch,
    };
  const out = await m.embedBatch(task.texts);
  return move(out);
}
