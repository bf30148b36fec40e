/**
 * @module native-bench/lib/loader — stores many memories through POST /v1/memories with a number
 * of parallel clients, and keeps the ids the server returned.
 */
import { runClosedLoop } from './closed-loop.ts';
import { rememberBody } from './corpus.ts';
import type { Rng } from './prng.ts';
import { expectJson, type RestClient } from './rest-client.ts';

export interface LoadResult {
  ids: string[];
  seconds: number;
  perS: number;
}

/** One remember call; pushes the new id into `ids`. */
export async function rememberOne(client: RestClient, rng: Rng, ids: string[]): Promise<boolean> {
  const reply = await client.post('/v1/memories', rememberBody(rng));
  ids.push(expectJson<{ memory_id: string }>(reply, 201, 'remember').memory_id);
  return true;
}

export async function loadMemories(
  client: RestClient,
  rng: Rng,
  opts: { count: number; concurrency: number; ids?: string[] },
): Promise<LoadResult> {
  const ids = opts.ids ?? [];
  const before = ids.length;
  const run = await runClosedLoop(() => rememberOne(client, rng, ids), {
    concurrency: opts.concurrency,
    durationMs: 0,
    ops: opts.count,
    stopOnError: true,
  });
  if (run.errors > 0)
    throw new Error(`loading failed ${run.errors} times; first: ${run.firstError ?? '?'}`);
  return { ids, seconds: run.seconds, perS: (ids.length - before) / run.seconds };
}
