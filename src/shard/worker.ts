/**
 * @module shard/worker — the worker-thread entry of a shard: recovers, then serves requests from
 * the router over its parentPort; errors cross back as data.
 */
import { parentPort, receiveMessageOnPort, resourceLimits, workerData } from 'node:worker_threads';
import { toWireError } from '../errors/wire.ts';
import { BatchPoster, unbatch } from '../protocol/batch-post.ts';
import { answerWithin, ParkedReplies, parkKey } from '../protocol/reply-size.ts';
import type {
  ShardControl,
  ShardEvent,
  ShardReply,
  ShardRequest,
  ShardWorkerData,
} from '../protocol/shard.ts';
import type { GatherOutput } from '../protocol/reflection.ts';
import { FREES_MEMORY, GROWS_STORE } from './dispatch.ts';
import { HeapWatch, oldGenerationInUse, onFullCollections } from './heap-watch.ts';
import { Shard } from './shard.ts';

const port = parentPort;
if (!port) throw new Error('shard worker must run in a worker thread');
const opts = workerData as ShardWorkerData;

/** Replies finished in one turn of the event loop cross to the router as one message. */
const replies = new BatchPoster<ShardReply>(port);

/** Events go at once, after the replies queued before them (the router sees them in order). */
function send(msg: ShardEvent | ShardReply): void {
  replies.flush();
  port?.postMessage(msg);
}

/**
 * Every request gets an answer: a reply that cannot be cloned (or whose cloning throws) is
 * replaced by an internal_error, so the router never waits out its timeout for it.
 */
function reply(req: ShardRequest, msg: ShardReply): void {
  // Gathered episode vectors are a fresh buffer, moved rather than cloned (megabytes).
  const transfer =
    msg.ok && req.method === 'reflectGather'
      ? [(msg.value as GatherOutput).vectors.buffer as ArrayBuffer]
      : [];
  replies.post(msg, transfer, (err) => {
    console.error(`shard ${opts.shard}: the reply to ${req.method} could not be sent:`, err);
    port?.postMessage({
      kind: 'reply',
      id: req.id,
      ok: false,
      code: 'internal_error',
      message: `the reply to ${req.method} could not be encoded`,
    });
  });
}

let shard: Shard;
const started = performance.now();
try {
  shard = await Shard.open(opts, send);
} catch (err) {
  send({
    kind: 'fatal',
    shard: opts.shard,
    message: err instanceof Error ? err.message : String(err),
  });
  throw err;
}
const tail = shard.recovered.truncatedTail;
send({
  kind: 'ready',
  shard: opts.shard,
  memories: shard.memoryCount,
  replayedRecords: shard.recovered.replayedRecords,
  recoveryMs: performance.now() - started,
  truncatedTail: tail ? `${tail.file} at offset ${tail.offset} (${tail.reason})` : null,
  ...(shard.recovered.phasesMs ? { phasesMs: { ...shard.recovered.phasesMs } } : {}),
});

// The old generation's limit: FLASHBULB_SHARD_HEAP_MB (the router's resourceLimits), or V8's own.
const heap = new HeapWatch(
  (resourceLimits.maxOldGenerationSizeMb ?? 0) * 2 ** 20,
  oldGenerationInUse,
  (state) => {
    shard.memoryFull(state.full);
    send({ kind: 'heap', shard: opts.shard, ...state });
  },
);
const stopWatchingHeap = onFullCollections(() => heap.afterFullCollection());

const metricsTimer = setInterval(() => {
  send({ kind: 'metrics', shard: opts.shard, ...shard.takeMetrics(), heap: heap.state() });
}, 1000);
metricsTimer.unref();

port.on('message', (data: ShardRequest | ShardControl | ShardRequest[]) => {
  for (const msg of unbatch(data)) serve(msg);
});

// Long work (a snapshot, indexing) looks for a request between pieces and, when one is waiting,
// ends its slice: the request is served as soon as that work returns to the event loop (a
// microtask: before any message after it). A message taken here is never emitted as 'message'.
shard.requestWaiting = () => {
  const got = receiveMessageOnPort(port);
  if (got === undefined) return false;
  queueMicrotask(() => {
    for (const msg of unbatch(got.message as ShardRequest | ShardControl | ShardRequest[]))
      serve(msg);
  });
  return true;
};

/** Replies over their first ask kept for the second (protocol/reply-size). */
const parked = new ParkedReplies();

function serve(msg: ShardRequest | ShardControl): void {
  if (msg.kind === 'shutdown') {
    clearInterval(metricsTimer);
    stopWatchingHeap();
    // Either way the port closes so the thread can end: a failed final snapshot is reported,
    // not waited on (the process exits non-zero; the log still holds every acknowledged write).
    shard
      .shutdown()
      .then(
        () => send({ kind: 'stopped', shard: opts.shard }),
        (err: unknown) =>
          send({
            kind: 'stopped',
            shard: opts.shard,
            error: err instanceof Error ? err.message : String(err),
          }),
      )
      .finally(() => port?.close());
    return;
  }
  const refused = GROWS_STORE[msg.method] ? heap.refusal(opts.shard) : null;
  if (refused !== null)
    return reply(msg, {
      kind: 'reply',
      id: msg.id,
      ok: false,
      code: 'unavailable',
      message: refused,
    });
  const startMs = msg.trace ? performance.timeOrigin + performance.now() : 0;
  // A second ask takes the reply kept for it; otherwise the shard runs the call (synchronously
  // here, so requests keep their order).
  answerWithin(parked, parkKey(msg.method, msg.ws), msg, async () => {
    const value = await shard.handle(msg.method, msg.ws, msg.input);
    if (FREES_MEMORY.has(msg.method)) heap.freed();
    return value;
  }).then(
    (out) => {
      reply(msg, {
        kind: 'reply',
        id: msg.id,
        ok: true,
        ...out,
        ...(msg.trace
          ? { took: [startMs, performance.timeOrigin + performance.now()] as const }
          : {}),
      });
    },
    (err: unknown) => {
      if (!(err instanceof Error && err.name === 'FlashbulbError'))
        console.error(`shard ${opts.shard}: ${msg.method} failed:`, err);
      reply(msg, { kind: 'reply', id: msg.id, ...toWireError(err) });
    },
  );
}
