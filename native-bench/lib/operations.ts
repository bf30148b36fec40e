/**
 * @module native-bench/lib/operations — the measured REST operations: remember (POST
 * /v1/memories), get (GET /v1/memories/:id of a random stored id) and list (GET /v1/memories?limit=100
 * after a random cursor, half of them filtered by entity).
 */
import type { Operation } from './closed-loop.ts';
import { ENTITIES } from './corpus.ts';
import { rememberOne } from './loader.ts';
import type { Rng } from './prng.ts';
import type { RestClient } from './rest-client.ts';

export const OPERATION_NAMES = ['remember', 'get', 'list'] as const;
export type OperationName = (typeof OPERATION_NAMES)[number];

export function isOperationName(s: string): s is OperationName {
  return (OPERATION_NAMES as readonly string[]).includes(s);
}

/** Builds the operation; `ids` holds every stored id and grows with each remember. */
export function makeOperation(
  name: OperationName,
  client: RestClient,
  rng: Rng,
  ids: string[],
): Operation {
  if (name === 'remember') return () => rememberOne(client, rng, ids);
  if (name === 'get') return () => getOne(client, rng, ids);
  return () => listOne(client, rng, ids);
}

async function getOne(client: RestClient, rng: Rng, ids: readonly string[]): Promise<boolean> {
  const reply = await client.get(`/v1/memories/${rng.pick(ids)}`);
  return reply.status === 200;
}

async function listOne(client: RestClient, rng: Rng, ids: readonly string[]): Promise<boolean> {
  let path = '/v1/memories?limit=100';
  if (rng.next() < 0.9) path += `&cursor=${rng.pick(ids)}`;
  if (rng.next() < 0.5) path += `&entity_id=${rng.pick(ENTITIES)}`;
  const reply = await client.get(path);
  return reply.status === 200;
}
