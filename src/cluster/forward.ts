/**
 * @module cluster/forward — a shard call sent to the node that owns its partition, over NATS
 * request-reply on `<name>.node.<id>.call`, and the answer. msgpackr with `moreTypes`, so
 * embeddings and cue vectors cross as Float32Arrays.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Packr } from 'msgpackr';
import type { ShardMethod } from '../protocol/shard.ts';
import type { CallOptions } from '../router/router.ts';

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
  /** The caller's `maxReplyBytes`, `parkBelow` and `claim` (router/router CallOptions). */
  x?: number;
  y?: number;
  k?: number;
}

/** The reply bounds of `opts` as a forwarded call carries them. */
export function replyAsk(opts: CallOptions): Pick<Forward, 'x' | 'y' | 'k'> {
  return {
    ...(opts.maxReplyBytes === undefined ? {} : { x: opts.maxReplyBytes }),
    ...(opts.parkBelow === undefined ? {} : { y: opts.parkBelow }),
    ...(opts.claim === undefined ? {} : { k: opts.claim }),
  };
}

/** `notOwner`: nothing was applied; the caller may look up the owner again and retry. */
/** `b`: the reply's size, when the caller gave a `maxReplyBytes`. */
export type ForwardReply =
  | { ok: true; v: unknown; b?: number }
  | { ok: false; code: string; message: string; notOwner?: boolean };

/** How often a forwarded call waiting for its answer checks that its partition's owner is still the node called. */
const OWNER_CHECK_MS = 250;

/**
 * Sends `req` to `subject` and waits for the answer, at most `timeoutMs`, and only while
 * `stillOwner()` holds: a call sent to an owner that died or lost its lease meanwhile is given up
 * as soon as this node sees another owner (or none), not after the whole timeout.
 */
export async function forward(
  nc: NatsConnection,
  subject: string,
  req: Forward,
  timeoutMs: number,
  stillOwner: () => boolean = () => true,
): Promise<ForwardReply> {
  let timer: NodeJS.Timeout | undefined;
  const ownerChanged = new Promise<ForwardReply>((resolve) => {
    timer = setInterval(() => {
      if (!stillOwner())
        resolve({
          ok: false,
          code: 'unavailable',
          message: `partition ${req.p} changed owner while ${subject} had the call; it may or may not have been applied`,
        });
    }, OWNER_CHECK_MS);
  });
  try {
    return await Promise.race([ask(nc, subject, req, timeoutMs), ownerChanged]);
  } finally {
    clearInterval(timer);
  }
}

async function ask(
  nc: NatsConnection,
  subject: string,
  req: Forward,
  timeoutMs: number,
): Promise<ForwardReply> {
  try {
    const msg = await nc.request(subject, pack(req), { timeout: timeoutMs });
    return unpack<ForwardReply>(msg.data);
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    // No responders: the owner's process is gone and nothing was applied; wait for the takeover.
    if (/no responders/i.test(text))
      return {
        ok: false,
        code: 'unavailable',
        message: `${subject}: no node answers`,
        notOwner: true,
      };
    return {
      ok: false,
      code: 'unavailable',
      message: `${subject} did not answer in ${timeoutMs} ms (${text}); the write may or may not have been applied`,
    };
  }
}
