/**
 * @module grpc/subscribe-service — hebbs.v1.SubscribeService. Subscribe is bidirectional on the
 * wire and serves server-streaming clients too: the first request opens the subscription and the
 * server answers with a handshake carrying only `subscription_id`; later requests may carry
 * `text` (feed) or `close`. A client half-closing does not close the subscription; `close`,
 * CloseSubscription or cancelling the call does.
 */
import type * as grpc from '@grpc/grpc-js';
import { FlashbulbError } from '../errors/codes.ts';
import type { CloseReason, PushEvent, PushSink } from '../subscribe/registry.ts';
import type { Ctx, Services } from '../verbs/context.ts';
import { closeSubscription, feedSubscription, openSubscription } from '../verbs/subscribe.ts';
import { ctxOf, decoded, toServiceError, trackPeer, unary, type Undecodable } from './call.ts';
import { kindFromEnum, memoryToProto, structToJson, u64 } from './codec.ts';
import type { Struct, SubscribePushMsg, U64 } from './messages.ts';

interface SubscribeRequestMsg {
  entity_id?: string;
  kind_filter: string[];
  confidence_threshold: number;
  time_scope_us?: U64;
  tenant_id?: string;
  text?: string;
  close: boolean;
  filter?: Struct | null;
  max_pushes_per_chunk?: number;
}

interface FeedRequestMsg {
  subscription_id: U64;
  text: string;
  tenant_id?: string;
}

interface CloseRequestMsg {
  subscription_id: U64;
  tenant_id?: string;
}

/** Writes pushes to the stream; holds them until the handshake has gone out. */
class GrpcSink implements PushSink {
  readonly #call: grpc.ServerDuplexStream<SubscribeRequestMsg, SubscribePushMsg>;
  #held: PushEvent[] | null = [];

  constructor(call: grpc.ServerDuplexStream<SubscribeRequestMsg, SubscribePushMsg>) {
    this.#call = call;
  }

  /** Writes the handshake (only `subscription_id`), then anything held back. */
  handshake(id: number): void {
    this.#call.write({ subscription_id: id, sequence_number: 0 });
    const held = this.#held ?? [];
    this.#held = null;
    for (const e of held) this.send(e);
  }

  send(e: PushEvent): boolean {
    if (this.#held) {
      this.#held.push(e);
      return true;
    }
    if (this.#call.destroyed || this.#call.writableEnded) return true;
    return this.#call.write({
      subscription_id: e.subscription_id,
      memory: memoryToProto(e.memory, { sources: false }),
      confidence: e.confidence,
      push_timestamp_us: e.push_timestamp_us,
      sequence_number: e.sequence_number,
      score: e.score,
      strategy: e.strategy,
      ...(e.chunk_offset === null ? {} : { chunk_offset: e.chunk_offset }),
    });
  }

  onDrain(cb: () => void): void {
    this.#call.on('drain', cb);
  }

  close(reason: CloseReason): void {
    if (this.#call.writableEnded) return;
    // A revoked key's stream ends as a call with that key would: UNAUTHENTICATED.
    if (reason === 'revoked')
      this.#call.emit(
        'error',
        toServiceError(
          new FlashbulbError(
            'unauthenticated',
            'the API key that opened this subscription was revoked (or its role or workspace changed)',
          ),
        ),
      );
    else this.#call.end();
  }
}

function subscriptionId(v: U64): number {
  const id = u64(v);
  if (id === undefined || id <= 0)
    throw new FlashbulbError('invalid_input', 'subscription_id is required');
  return id;
}

function subscribe(
  svc: Services,
  call: grpc.ServerDuplexStream<SubscribeRequestMsg, SubscribePushMsg>,
): void {
  trackPeer(call);
  let state: { ctx: Ctx; id: number } | null = null;
  let chain: Promise<void> = Promise.resolve();
  const fail = (err: unknown): void => {
    if (!call.writableEnded) call.emit('error', toServiceError(err));
  };
  const handle = async (msg: SubscribeRequestMsg): Promise<void> => {
    if (state === null) {
      const ctx = ctxOf(svc, call.metadata, msg.tenant_id);
      const kinds = msg.kind_filter
        .map((k) => kindFromEnum('kind_filter', k))
        .filter((k): k is NonNullable<typeof k> => k !== undefined);
      const sink = new GrpcSink(call);
      // The handshake must be the first message on the stream, before any push.
      const id = await openSubscription(
        ctx,
        {
          entity_id: msg.entity_id,
          kind_filter: kinds,
          // proto3 cannot tell an unset float from 0: 0 means the default threshold (0.5).
          confidence_threshold:
            msg.confidence_threshold === 0 ? undefined : msg.confidence_threshold,
          time_scope_us: u64(msg.time_scope_us),
          filter: structToJson(msg.filter),
          max_pushes_per_chunk: msg.max_pushes_per_chunk,
        },
        sink,
      );
      sink.handshake(id);
      state = { ctx, id };
    }
    if (msg.text !== undefined && msg.text !== '')
      await feedSubscription(state.ctx, { subscription_id: state.id, text: msg.text });
    if (msg.close) await closeSubscription(state.ctx, { subscription_id: state.id });
  };
  call.on('data', (msg: SubscribeRequestMsg | Undecodable) => {
    chain = chain.then(() => handle(decoded(msg))).catch(fail);
  });
  const gone = (): void => {
    if (state) svc.subscriptions.disconnect(state.id);
  };
  call.on('cancelled', gone);
  call.on('close', gone);
  call.on('error', gone);
}

export function subscribeService(svc: Services): grpc.UntypedServiceImplementation {
  return {
    Subscribe: (call: grpc.ServerDuplexStream<SubscribeRequestMsg, SubscribePushMsg>) =>
      subscribe(svc, call),
    Feed: unary('feed', async (req: FeedRequestMsg, md) => {
      await feedSubscription(ctxOf(svc, md, req.tenant_id), {
        subscription_id: subscriptionId(req.subscription_id),
        text: req.text,
      });
      return {};
    }),
    CloseSubscription: unary('close_subscription', async (req: CloseRequestMsg, md) => {
      await closeSubscription(ctxOf(svc, md, req.tenant_id), {
        subscription_id: subscriptionId(req.subscription_id),
      });
      return {};
    }),
  };
}
