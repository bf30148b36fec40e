/**
 * @module native-bench/lib/retrieval-write — how bench:retrieval writes a dataset's turns: through
 * conversation ingest (each conversation in order, with speakers, times and message ids, up to
 * 5,000 a call) or through import with the turns' own times.
 */
import { expectJson, type RestClient } from './rest-client.ts';
import { turnId, type TurnMemory } from './retrieval-data.ts';

/** Messages per ingest call (a call takes up to 10,000; the longest LifeBench person has 9,122 turns). */
const INGEST_CALL = 5000;

/**
 * Writes every turn through conversation ingest, in order, each with its speaker, the time it was
 * said (`occurred_at`) and a message id (its position); returns memory id → dia_id, from the ids
 * the calls answer with, in order.
 */
export async function ingestTurns(
  client: RestClient,
  ws: string,
  conversationId: string,
  turns: readonly TurnMemory[],
): Promise<Map<string, string>> {
  const byMemory = new Map<string, string>();
  for (let at = 0; at < turns.length; at += INGEST_CALL) {
    const part = turns.slice(at, at + INGEST_CALL);
    const messages = part.map((t, i) => ({
      message_id: String(at + i),
      speaker: t.speaker,
      content: t.content,
      occurred_at: t.atMs * 1000,
    }));
    const reply = await client.post(
      `/v1/workspaces/${ws}/conversations/${encodeURIComponent(conversationId)}/messages`,
      { messages },
    );
    const { memory_ids: ids, created } = expectJson<{ memory_ids: string[]; created: number }>(
      reply,
      201,
      'ingest',
    );
    if (created !== part.length)
      throw new Error(`ingest: ${created} of ${part.length} messages written`);
    ids.forEach((id, i) => {
      byMemory.set(id, (part[i] as TurnMemory).diaId);
    });
  }
  return byMemory;
}

/**
 * Stores every turn at the time it was said (POST /v1/import with `created_at`, one call per
 * conversation), as an agent taking part in the conversation would have written it: so sessions
 * days apart are separate stretches of conversation for the neighbour rule. Memory ids are made
 * here (a ULID of the turn's time), since an import answers with counts, not ids.
 */
export async function importAtTimes(
  client: RestClient,
  ws: string,
  turns: readonly TurnMemory[],
  speaker: boolean,
): Promise<Map<string, string>> {
  const byMemory = new Map<string, string>();
  const lines = turns.map((t, i) => {
    const id = turnId(t, i);
    byMemory.set(id, t.diaId);
    const memory = {
      memory_id: id,
      content: t.content,
      created_at: t.atMs * 1000,
      ...(speaker ? { context: { speaker: t.speaker } } : {}),
    };
    return JSON.stringify({ memory });
  });
  const reply = await client.send('POST', `/v1/workspaces/${ws}/import`, lines.join('\n'));
  const summary = expectJson<{ imported: number; error_count: number; errors: unknown[] }>(
    reply,
    200,
    'import',
  );
  if (summary.imported !== lines.length)
    throw new Error(
      `import: ${summary.imported} of ${lines.length} imported: ${JSON.stringify(summary.errors.slice(0, 3))}`,
    );
  return byMemory;
}
