/**
 * @module cluster/relay — feeds and closes for a subscription reach the node holding its stream,
 * whichever node they arrived at: the holder answers on `<name>.sub.<id>` while the subscription
 * is open; "no responders" means no node holds it any more (404).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { FlashbulbError } from '../errors/codes.ts';
import { fromWireError, toWireError } from '../errors/wire.ts';
import type { RelayedRequest, SubscriptionRelay } from '../subscribe/registry.ts';
import { pack, unpack, type ForwardReply } from './forward.ts';
import type { ClusterSubjects } from './subjects.ts';

export function subscriptionRelay(
  nc: NatsConnection,
  subjects: ClusterSubjects,
  timeoutMs: number,
): SubscriptionRelay {
  return {
    serve: (id, handler) => {
      const sub = nc.subscribe(subjects.subscription(id), {
        callback: (err, msg) => {
          if (err) return;
          void handler(unpack<RelayedRequest>(msg.data)).then(
            () => msg.respond(pack({ ok: true, v: null } satisfies ForwardReply)),
            (e: unknown) => msg.respond(pack(toWireError(e))),
          );
        },
      });
      return () => sub.unsubscribe();
    },
    send: async (id, req) => {
      let reply: ForwardReply;
      try {
        reply = unpack<ForwardReply>(
          (await nc.request(subjects.subscription(id), pack(req), { timeout: timeoutMs })).data,
        );
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        if (/no responders/i.test(text))
          throw new FlashbulbError('not_found', `subscription ${id} not found`);
        throw new FlashbulbError(
          'unavailable',
          `the node holding subscription ${id} did not answer (${text}); retry`,
          { retryAfterS: 1 },
        );
      }
      if (!reply.ok) throw fromWireError(reply);
    },
  };
}
