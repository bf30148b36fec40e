/**
 * @module native-bench/lib/scale-ops — the latency of similarity recall and forget on a large
 * store, over REST, one request at a time: `n` recalls of corpus sentences (top 10, similarity
 * alone; ten more before them are not counted), then `n` forgets, each of a memory one of those recalls returned (first hit not yet
 * forgotten). restart-large runs it on its million-memory server once the server has settled.
 */
import { sentence } from './corpus.ts';
import { Client } from './forget-load.ts';
import { Rng } from './prng.ts';
import type { RunningServer } from './server-process.ts';
import { summarize, type Summary } from './stats.ts';

export interface ScaleOps {
  recall: Summary;
  forget: Summary;
}

export async function measureScaleOps(
  server: RunningServer,
  ws: string,
  n: number,
): Promise<ScaleOps> {
  const c = new Client(server);
  const rng = new Rng(11);
  const base = `/v1/workspaces/${ws}`;
  // The generated directory holds the workspace's memories but no registry entry for it.
  await c.call('POST', '/v1/workspaces', { slug: ws }).catch((err: Error) => {
    if (!/409/.test(err.message)) throw err;
  });
  const recallMs: number[] = [];
  const toForget: string[] = [];
  const chosen = new Set<string>();
  // A few recalls first, not counted: the first requests pay for compiling the paths they take.
  for (let i = 0; i < 10; i++)
    await c.call('POST', `${base}/recall`, { cue: sentence(rng), strategies: ['similarity'] });
  let t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = (await c.call('POST', `${base}/recall`, {
      cue: sentence(rng),
      strategies: ['similarity'],
      top_k: 10,
    })) as { results: Array<{ memory: { memory_id: string } }> };
    recallMs.push(performance.now() - t);
    const id = r.results.map((x) => x.memory.memory_id).find((x) => !chosen.has(x));
    if (id !== undefined) {
      chosen.add(id);
      toForget.push(id);
    }
  }
  const recall = summarize(recallMs, 0, (performance.now() - t0) / 1000);
  const forgetMs: number[] = [];
  t0 = performance.now();
  for (const id of toForget) {
    const t = performance.now();
    await c.call('POST', `${base}/forget`, { memory_ids: [id] });
    forgetMs.push(performance.now() - t);
  }
  return { recall, forget: summarize(forgetMs, 0, (performance.now() - t0) / 1000) };
}
