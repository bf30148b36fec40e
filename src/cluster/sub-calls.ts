/**
 * @module cluster/sub-calls — subscription calls (`subOpen`, `subMatch`, `subClose`) from this
 * node's streams: sent to the partition's owner like any call, and remembered in
 * `FollowedSubscriptions` so that they follow their partition to a new owner. A feed the owner
 * answers with "not found" (it took the partition over since) registers the subscription there
 * and is matched again.
 */
import { FlashbulbError } from '../errors/codes.ts';
import type { ShardInput, ShardMethod, ShardOutput } from '../protocol/shard.ts';
import type { FollowedSubscriptions } from './follow.ts';

export type Route = <M extends ShardMethod>(
  ws: string,
  method: M,
  input: ShardInput<M>,
) => Promise<ShardOutput<M>>;

/** `termNow`: the ownership term of the workspace's partition as last read (null: none known). */
export async function followedCall<M extends ShardMethod>(
  followed: FollowedSubscriptions,
  ws: string,
  method: M,
  input: ShardInput<M>,
  route: Route,
  termNow: () => string | null,
): Promise<ShardOutput<M>> {
  if (method === 'subOpen') {
    const spec = input as ShardInput<'subOpen'>;
    const term = termNow();
    const out = await route(ws, method, input);
    followed.opened(ws, spec, term);
    return out;
  }
  if (method === 'subClose') {
    followed.closed((input as ShardInput<'subClose'>).id);
    return await route(ws, method, input);
  }
  const m = input as ShardInput<'subMatch'>;
  const vector = Float32Array.from(m.vector);
  let pushes: ShardOutput<'subMatch'>;
  try {
    pushes = await route(ws, 'subMatch', m);
  } catch (err) {
    // The owner does not know the subscription (it took the partition over since): register it, match again.
    if (!(err instanceof FlashbulbError && err.code === 'not_found' && followed.has(m.id)))
      throw err;
    const term = termNow();
    await followed.reopen(m.id, term, (w, spec) => route(w, 'subOpen', spec).then(() => undefined));
    pushes = await route(ws, 'subMatch', { ...m, vector: Float32Array.from(vector) });
  }
  followed.matched(m.id, vector, m.offset, pushes);
  return pushes as ShardOutput<M>;
}
