/**
 * @module cluster/stream-replay — reading a partition's stream back: entries in stream order into
 * records (a write split over several messages only whole), replayed onto a shard state after the
 * snapshot a takeover loaded, refusing any gap (a trim that ran past the pointer it read); and
 * creating the stream.
 */
import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { DeliverPolicy } from '@nats-io/jetstream';
import { replayRecords, ShardState, type LogRecord } from '../shard/persist/codec.ts';
import type { RecoveredState } from '../shard/storage.ts';
import { decodeEntry, type StreamEntry } from './stream-log.ts';
import { readRange } from './message-get.ts';

/**
 * A replay of more messages than this reads through a consumer first: 8× faster than gets (a
 * takeover replaying 2,131 records took 106 ms against 840 ms with gets, `native-bench/cluster.ts
 * --failover` on one nats-server), so a killed owner's partitions are served again sooner. Shorter ones
 * read with gets.
 */
const GET_REPLAY_MAX = 64;
/**
 * A consumer that delivers nothing for this long (it needs the JetStream meta leader to be
 * created: none during an election, and nats.js retries the creation for minutes) is given up,
 * and the replay goes on with gets from where it got (gets need no meta leader; each is retried).
 */
const CONSUMER_STALL_MS = 2000;
/** How long a replay read with gets may take, all tries together. */
const GET_REPLAY_MS = 15_000;

/** How a replay reads: a JetStream client (consumers) and a manager with a short request timeout (gets). */
export interface StreamReader {
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** A replay found the stream trimmed past where it started reading: read the snapshot pointer again. */
export class StreamGapError extends Error {
  override name = 'StreamGapError';
}

/**
 * Turns stream entries, in stream order, into the records to apply: whole batches at once, a
 * write split into parts only when its last part arrives. A part group interrupted by any other
 * entry (a fence, another batch, a part out of order) or left open at the end was never
 * acknowledged, and is dropped.
 */
export class EntryReplayer {
  #open: { node: string; next: number; n: number; records: LogRecord[] } | null = null;
  /** Records of incomplete multi-part writes that were dropped. */
  dropped = 0;

  constructor(private readonly apply: (records: readonly LogRecord[]) => void) {}

  push(entry: StreamEntry): void {
    if (!('records' in entry) || entry.part === undefined) {
      this.#dropOpen();
      if ('records' in entry) this.apply(entry.records);
      return;
    }
    const [i, n] = entry.part;
    const open = this.#open;
    if (open && open.node === entry.node && open.n === n && open.next === i) {
      open.records.push(...entry.records);
      open.next += 1;
    } else {
      this.#dropOpen();
      if (i !== 1) {
        this.dropped += entry.records.length;
        return;
      }
      this.#open = { node: entry.node, next: 2, n, records: [...entry.records] };
    }
    const now = this.#open;
    if (now && now.next > now.n) {
      this.#open = null;
      this.apply(now.records);
    }
  }

  /** The end of the stream: an open group is an unfinished write. */
  finish(): void {
    this.#dropOpen();
  }

  #dropOpen(): void {
    if (this.#open) this.dropped += this.#open.records.length;
    this.#open = null;
  }
}

/** Reads a partition's stream from `fromSeq` to `toSeq` into `state` (a fresh one by default); a takeover ends recovery mode after it (`endRecovery`). */
export async function replayStream(
  reader: StreamReader,
  stream: string,
  fromSeq: number,
  toSeq: number,
  state: ShardState = new ShardState(),
): Promise<{ recovered: RecoveredState; messages: number }> {
  let replayed = 0;
  let messages = 0;
  const replayer = new EntryReplayer((records) => {
    replayRecords(state, records);
    replayed += records.length;
  });
  const from = Math.max(1, fromSeq);
  const each = (m: StoredMsg | { seq: number; data: Uint8Array }): void => {
    messages += 1;
    replayer.push(decodeEntry(m.data));
  };
  // A message missing: the stream was trimmed below it since the snapshot pointer was read.
  const gap = (seq: number): Error =>
    new StreamGapError(
      `stream ${stream}: replay expected sequence ${seq}, which is gone (trimmed meanwhile)`,
    );
  if (toSeq >= from) {
    const next =
      toSeq - from < GET_REPLAY_MAX
        ? from
        : await consumeRange(reader.js, stream, from, toSeq, each, gap);
    if (next <= toSeq)
      await readRange(
        reader.jsm,
        stream,
        next,
        toSeq,
        performance.now() + GET_REPLAY_MS,
        each,
        gap,
      );
  }
  replayer.finish();
  if (replayer.dropped > 0)
    console.error(
      `stream ${stream}: dropped ${replayer.dropped} records of a write its owner did not finish publishing (never acknowledged)`,
    );
  return {
    recovered: { state, replayedRecords: replayed, truncatedTail: null, staleFiles: false },
    messages,
  };
}

/**
 * Reads `from`..`to` through an ordered consumer, every sequence in order (a gap throws), and
 * returns the next sequence still to read: `to + 1` when done, less when the consumer delivered
 * nothing for CONSUMER_STALL_MS (the caller reads the rest with gets).
 */
async function consumeRange(
  js: JetStreamClient,
  stream: string,
  from: number,
  to: number,
  each: (m: { seq: number; data: Uint8Array }) => void,
  gap: (seq: number) => Error,
): Promise<number> {
  let expected = from;
  const consumer = await within(
    js.consumers.get(stream, {
      opt_start_seq: expected,
      deliver_policy: DeliverPolicy.StartSequence,
    }),
    CONSUMER_STALL_MS,
  ).catch(() => null);
  if (consumer === null) return expected;
  try {
    while (expected <= to) {
      const batch = await within(
        consumer.fetch({ max_messages: 512, expires: CONSUMER_STALL_MS }),
        CONSUMER_STALL_MS,
      ).catch(() => null);
      if (batch === null) return expected;
      // The fetch's expiry is the server's; a consumer that was never created gets none.
      const stalled = setTimeout(() => void batch.stop(), CONSUMER_STALL_MS + 500);
      let got = 0;
      let applying = false;
      try {
        for await (const m of batch) {
          got += 1;
          if (m.seq !== expected) throw gap(expected);
          applying = true;
          each(m);
          applying = false;
          expected += 1;
          if (m.seq >= to) break;
        }
      } catch (err) {
        if (applying || err instanceof StreamGapError) throw err;
        return expected; // the consumer failed (deleted, heartbeats missed): gets read the rest
      } finally {
        clearTimeout(stalled);
      }
      if (got === 0) return expected;
    }
    return expected;
  } finally {
    // Not awaited: without a meta leader the delete waits out its timeout (an ordered consumer
    // is ephemeral and goes by itself when inactive).
    void consumer.delete().catch(() => undefined);
  }
}

/** `promise`, or a rejection after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The stream of a partition exists with the wanted replicas and de-duplication window. */
export async function ensureStream(
  jsm: JetStreamManager,
  name: string,
  subject: string,
  replicas: number,
): Promise<void> {
  try {
    await jsm.streams.info(name);
  } catch {
    await jsm.streams
      .add({
        name,
        subjects: [subject],
        num_replicas: replicas,
        duplicate_window: 120_000_000_000,
        max_msg_size: 1024 * 1024,
      })
      .catch(async (err: unknown) => {
        // Another node created it in between.
        await jsm.streams.info(name).catch(() => {
          throw err;
        });
      });
  }
}
