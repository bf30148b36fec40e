/**
 * @module cluster/stream-replay — reading a partition's stream back: entries in stream order into
 * records (a write split over several messages only whole), replayed onto a shard state after the
 * snapshot a takeover loaded, refusing any gap (a trim that ran past the pointer it read); and
 * creating the stream.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { DeliverPolicy } from '@nats-io/jetstream';
import type { LogRecord } from '../shard/store/records.ts';
import { applyRecord, pruneDanglingEdges, ShardState } from '../shard/store/apply.ts';
import type { Recovered } from '../shard/persist/recovery.ts';
import { decodeEntry, type StreamEntry } from './stream-log.ts';

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

/** Reads a partition's stream from `fromSeq` to `toSeq` into `state` (a fresh one by default). */
export async function replayStream(
  js: JetStreamClient,
  stream: string,
  fromSeq: number,
  toSeq: number,
  state: ShardState = new ShardState(),
): Promise<{ recovered: Recovered; messages: number }> {
  let replayed = 0;
  let messages = 0;
  const replayer = new EntryReplayer((records) => {
    for (const r of records) applyRecord(state, r);
    replayed += records.length;
  });
  if (toSeq >= fromSeq && toSeq > 0) {
    let expected = Math.max(1, fromSeq);
    const consumer = await js.consumers.get(stream, { opt_start_seq: expected, deliver_policy: DeliverPolicy.StartSequence });
    try {
      let seq = 0;
      while (seq < toSeq) {
        const batch = await consumer.fetch({ max_messages: 512, expires: 5000 });
        let got = 0;
        for await (const m of batch) {
          got += 1;
          // A message missing: the stream was trimmed below it since the snapshot pointer was read.
          if (m.seq !== expected) throw new StreamGapError(`stream ${stream}: replay expected sequence ${expected}, got ${m.seq} (trimmed meanwhile)`);
          seq = m.seq;
          expected = seq + 1;
          if (seq > toSeq) break;
          messages += 1;
          replayer.push(decodeEntry(m.data));
          if (seq >= toSeq) break;
        }
        if (got === 0) throw new Error(`stream ${stream}: replay stopped at sequence ${seq}, expected up to ${toSeq}`);
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
  }
  replayer.finish();
  if (replayer.dropped > 0) console.error(`stream ${stream}: dropped ${replayer.dropped} records of a write its owner did not finish publishing (never acknowledged)`);
  pruneDanglingEdges(state);
  return {
    recovered: { state, nextWalSeq: 0, walSegments: [], snapshots: [], replayedRecords: replayed, truncatedTail: null, staleFiles: false },
    messages,
  };
}

/** The stream of a partition exists with the wanted replicas and de-duplication window. */
export async function ensureStream(jsm: JetStreamManager, name: string, subject: string, replicas: number): Promise<void> {
  try {
    await jsm.streams.info(name);
  } catch {
    await jsm.streams
      .add({ name, subjects: [subject], num_replicas: replicas, duplicate_window: 120_000_000_000, max_msg_size: 1024 * 1024 })
      .catch(async (err: unknown) => {
        // Another node created it in between.
        await jsm.streams.info(name).catch(() => {
          throw err;
        });
      });
  }
}
