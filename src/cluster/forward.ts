/**
 * @module cluster/forward — a shard call sent to the node that owns its partition, over NATS
 * request-reply on `<name>.node.<id>.call`, and the answer. msgpackr with `moreTypes`, so
 * embeddings and cue vectors cross as Float32Arrays.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Packr } from 'msgpackr';
import type { ShardMethod } from '../protocol/shard.ts';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: true });

export function pack(value: unknown): Uint8Array {
  return packr.pack(value);
}

export function unpack<T>(data: Uint8Array): T {
  return packr.unpack(data) as T;
}

/** A call for partition `p`, opened on node `o` (where pushes for a subscription must go). */
export interface Forward {
  p: number;
  ws: string;
  m: ShardMethod;
  i: unknown;
  o: string;
}

/** `notOwner`: nothing was applied; the caller may look up the owner again and retry. */
export type ForwardReply = { ok: true; v: unknown } | { ok: false; code: string; message: string; notOwner?: boolean };

export async function forward(nc: NatsConnection, subject: string, req: Forward, timeoutMs: number): Promise<ForwardReply> {
  try {
    const msg = await nc.request(subject, pack(req), { timeout: timeoutMs });
    return unpack<ForwardReply>(msg.data);
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    // No responders: the owner's process is gone and nothing was applied; wait for the takeover.
    if (/no responders/i.test(text)) return { ok: false, code: 'unavailable', message: `${subject}: no node answers`, notOwner: true };
    return { ok: false, code: 'unavailable', message: `${subject} did not answer in ${timeoutMs} ms (${text}); the write may or may not have been applied` };
  }
}
