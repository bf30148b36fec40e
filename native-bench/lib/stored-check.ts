/**
 * @module native-bench/lib/stored-check — after a restart, proves that acknowledged writes
 * survived: the workspace holds at least as many memories as were acknowledged (the server may add
 * insights of its own), and an evenly spread sample of the acknowledged ids reads back with 200.
 */
import { expectJson, RestClient } from './rest-client.ts';
import type { RunningServer } from './server-process.ts';

const SAMPLE = 2000;

export async function checkStored(
  server: RunningServer,
  ackedIds: readonly string[],
): Promise<string> {
  const client = new RestClient({
    host: '127.0.0.1',
    port: server.port,
    apiKey: server.apiKey,
    maxSockets: 8,
  });
  try {
    const count = expectJson<{ memory_count: number }>(
      await client.get('/v1/workspaces/default'),
      200,
      'count',
    ).memory_count;
    if (count < ackedIds.length)
      throw new Error(`server holds ${count} memories, but ${ackedIds.length} were acknowledged`);
    const step = Math.max(1, Math.floor(ackedIds.length / SAMPLE));
    const sample = ackedIds.filter((_, i) => i % step === 0 || i === ackedIds.length - 1);
    const missing = await missingIds(client, sample);
    if (missing.length > 0)
      throw new Error(
        `${missing.length} of ${sample.length} sampled acknowledged ids are gone, e.g. ${missing[0]}`,
      );
    return `${count} held; ${sample.length} sampled acked ids read back`;
  } finally {
    client.close();
  }
}

async function missingIds(client: RestClient, ids: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (let i = 0; i < ids.length; i += 8) {
    const batch = ids.slice(i, i + 8);
    const replies = await Promise.all(batch.map((id) => client.get(`/v1/memories/${id}`)));
    replies.forEach((r, j) => {
      if (r.status !== 200) missing.push(batch[j] ?? '?');
    });
  }
  return missing;
}
