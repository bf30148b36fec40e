/**
 * @module embedding/rerank-task — the Piscina task that runs the cross-encoder: one model per
 * worker thread, created on first use; `{ query, docs }` → one logit per document (the buffer
 * moved back, not copied), `{ info: true }` → what the model is.
 */
import { move, workerData } from 'piscina';
import { createCrossEncoder, type CrossEncoder } from './rerank-model.ts';

interface TaskData {
  modelDir: string;
  threads: number;
  maxBatch: number;
  maxTokens: number;
}

let model: Promise<CrossEncoder> | null = null;

function load(): Promise<CrossEncoder> {
  const data = workerData as TaskData;
  model ??= createCrossEncoder({
    modelDir: data.modelDir,
    threads: data.threads,
    maxBatch: data.maxBatch,
    maxTokens: data.maxTokens,
  });
  return model;
}

export default async function rerankTask(
  task: { query: string; docs: string[] } | { info: true },
): Promise<unknown> {
  const m = await load();
  if ('info' in task) return { name: m.name, maxTokens: m.maxTokens, maxBatch: m.maxBatch };
  return move(await m.score(task.query, task.docs));
}
