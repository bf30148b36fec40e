/** @module grpc/subscribe-service — hebbs.v1.SubscribeService (filled by the subscription engine). */
import type * as grpc from '@grpc/grpc-js';
import { FlashbulbError } from '../errors/codes.ts';
import type { Services } from '../verbs/context.ts';
import { toServiceError, unary } from './call.ts';

export function subscribeService(_svc: Services): grpc.UntypedServiceImplementation {
  const unavailable = new FlashbulbError('method_not_allowed', 'subscriptions are not available in this version of Flashbulb yet');
  return {
    Subscribe: (call: grpc.ServerDuplexStream<unknown, unknown>) => call.destroy(toServiceError(unavailable)),
    Feed: unary('feed', () => {
      throw unavailable;
    }),
    CloseSubscription: unary('close_subscription', () => {
      throw unavailable;
    }),
  };
}
