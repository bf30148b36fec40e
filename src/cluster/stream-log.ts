/**
 * @module cluster/stream-log — one partition's write-ahead log on a JetStream stream: appends
 * that arrive while a publish is in flight share the next one (group commit), each publish expects
 * the sequence it follows (so an owner deposed by another's fence can no longer append) and
 * carries a message id (so a retried publish is stored once).
 */
import type { JetStreamClient } from '@nats-io/jetstream';
import { JetStreamApiError } from '@nats-io/jetstream';
import { Packr } from 'msgpackr';
import type { LogRecord, ShardState } from '../shard/persist/codec.ts';
import { Trimmer, type SnapshotTarget } from './trim.ts';
import { WRONG_LAST_SEQUENCE } from './js-errors.ts';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** JetStream's default max_payload is 1 MiB; batches stay well below it. */
const MAX_BATCH_BYTES = 768 * 1024;
/**
 * How long a publish is retried (same message id, same expected sequence) before the log fails and
 * the partition is dropped: a NATS failover answers "no responders" or "jetstream is not enabled"
 * for the seconds its elections take (4–9 s after a server is lost), and dropping the partition on
 * the first of those turned every election into a takeover (which needs JetStream too).
 */
const PUBLISH_RETRY_MS = 10_000;
/** The longest pause between two attempts of one publish. */
const PUBLISH_MAX_PAUSE_MS = 1_000;

/**
 * What one stream message holds: a batch of records, or the fence of a new owner. A write too large
 * for one message is published as consecutive parts, each marked `part: [i, n]` (1-based); replay
 * applies such a write only once all `n` parts have been read in order, so an owner that fails
 * between two parts leaves nothing of the unacknowledged write visible.
 */
export type StreamEntry =
  | { node: string; records: LogRecord[]; part?: [number, number] }
  | { node: string; fence: number };

export function encodeEntry(e: StreamEntry): Uint8Array {
  return packr.pack(e);
}

export function decodeEntry(data: Uint8Array): StreamEntry {
  return packr.unpack(data) as StreamEntry;
}

/** Encodes `records` as several entries, each below the batch limit (a single record may not be), numbered as parts. */
function splitRecords(records: readonly LogRecord[], node: string): Uint8Array[] {
  const parts: LogRecord[][] = [];
  let part: LogRecord[] = [];
  let bytes = 0;
  for (const r of records) {
    const size = encodeEntry({ node, records: [r] }).length;
    if (part.length > 0 && bytes + size > MAX_BATCH_BYTES) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(r);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts.map((records, i) => encodeEntry({ node, records, part: [i + 1, parts.length] }));
}

export { isWrongLastSequence } from './js-errors.ts';

export class FencedError extends Error {
  override name = 'FencedError';
}

export interface StreamLogOptions {
  js: JetStreamClient;
  subject: string;
  node: string;
  /** Distinguishes this ownership term in message ids. */
  term: number;
  /** The stream sequence of this owner's fence: the first publish must follow it. */
  lastSeq: number;
  timeoutMs: number;
  /** Called once when the log stops taking appends (fenced or storage failure). */
  onFailed: (err: Error) => void;
  /** Where snapshots go, and the stream to trim below them. */
  snapshots?: SnapshotTarget;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class StreamLog {
  readonly #o: StreamLogOptions;
  #lastSeq: number;
  #batch = 0;
  #pending: { records: LogRecord[]; waiter: Waiter }[] = [];
  #flushing: Promise<void> | null = null;
  #failed: Error | null = null;
  #closed = false;
  readonly #trimmer: Trimmer | null;
  /** Publishes acknowledged by JetStream, for the cluster view. */
  published = 0;
  /** How long each acknowledged publish took, in ms, until the metrics take them (the log sync histogram). */
  readonly publishMs: number[] = [];
  /** Sequence the newest snapshot stored by this owner covers. */
  snapshotSeq = 0;

  constructor(opts: StreamLogOptions) {
    this.#o = opts;
    this.#lastSeq = opts.lastSeq;
    this.#trimmer = opts.snapshots
      ? new Trimmer(opts.snapshots, () => !this.#failed && !this.#closed)
      : null;
  }

  get failed(): Error | null {
    return this.#failed;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  append(records: readonly LogRecord[]): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(new Error('partition log is closed'));
    if (records.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ records: [...records], waiter: { resolve, reject } });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#flushing || this.#pending.length === 0) return;
    this.#flushing = this.#flushLoop().finally(() => {
      this.#flushing = null;
      this.#kick();
    });
  }

  async #flushLoop(): Promise<void> {
    while (this.#pending.length > 0 && !this.#failed) {
      const taken = this.#pending.splice(0, this.#pending.length);
      // Split into messages below the payload limit, each appended in order.
      let i = 0;
      while (i < taken.length) {
        const group: typeof taken = [];
        const records: LogRecord[] = [];
        let bytes = 0;
        while (i < taken.length) {
          const next = taken[i];
          if (!next) break;
          const size = encodeEntry({ node: this.#o.node, records: next.records }).length;
          if (group.length > 0 && bytes + size > MAX_BATCH_BYTES) break;
          if (size > MAX_BATCH_BYTES) {
            // One write too large for a message (a big upload): its records go in several.
            i += 1;
            try {
              for (const part of splitRecords(next.records, this.#o.node))
                await this.#publish(part);
              next.waiter.resolve();
            } catch (err) {
              this.#fail(err instanceof Error ? err : new Error(String(err)));
              for (const g of [next, ...taken.slice(i), ...this.#pending.splice(0)])
                g.waiter.reject(this.#failed ?? new Error('log failed'));
              return;
            }
            continue;
          }
          bytes += size;
          records.push(...next.records);
          group.push(next);
          i += 1;
        }
        if (group.length === 0) continue;
        const data = encodeEntry({ node: this.#o.node, records });
        try {
          await this.#publish(data);
          for (const g of group) g.waiter.resolve();
        } catch (err) {
          this.#fail(err instanceof Error ? err : new Error(String(err)));
          for (const g of [...group, ...taken.slice(i), ...this.#pending.splice(0)])
            g.waiter.reject(this.#failed ?? new Error('log failed'));
          return;
        }
      }
    }
  }

  async #publish(data: Uint8Array): Promise<void> {
    this.#batch += 1;
    const msgID = `${this.#o.node}.${this.#o.term}.${this.#batch}`;
    let lastErr: unknown = null;
    const started = performance.now();
    for (
      let attempt = 0;
      attempt === 0 || (performance.now() - started < PUBLISH_RETRY_MS && !this.#closed);
      attempt++
    ) {
      try {
        const ack = await this.#o.js.publish(this.#o.subject, data, {
          msgID,
          expect: { lastSubjectSequence: this.#lastSeq },
          timeout: this.#o.timeoutMs,
        });
        this.#lastSeq = ack.seq;
        this.published += 1;
        if (this.publishMs.length < 10_000) this.publishMs.push(performance.now() - started);
        return;
      } catch (err) {
        if (err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) {
          throw new FencedError(
            `partition log ${this.#o.subject} was appended to by another owner (lease lost)`,
          );
        }
        lastErr = err;
        // The same message id: if the lost attempt was stored, JetStream answers it as a duplicate.
        await new Promise((r) => setTimeout(r, Math.min(PUBLISH_MAX_PAUSE_MS, 100 * 2 ** attempt)));
      }
    }
    throw new Error(
      `publish to ${this.#o.subject} failed: ${lastErr instanceof Error ? lastErr.message : String(lastErr)}`,
    );
  }

  /**
   * Snapshots `state` at a moment when every record applied to it is published (so the snapshot
   * holds no write that could still fail), reads it back, and moves the pointer to it while the
   * lease is confirmed. The stream is trimmed below it later (cluster/trim.ts), not here.
   */
  async snapshot(state: ShardState): Promise<void> {
    const s = this.#o.snapshots;
    if (!s) return;
    for (let i = 0; i < 200 && (this.#flushing || this.#pending.length > 0); i++)
      await (this.#flushing ?? new Promise((r) => setTimeout(r, 1)));
    if (this.#failed) throw this.#failed;
    if (this.#flushing || this.#pending.length > 0) return; // writes keep coming: the next interval tries again
    const seq = this.#lastSeq;
    const data = s.store.encode(s.partition, state, seq);
    const saved = await s.store.save(s.partition, seq, data, () => this.#confirm(s));
    if (!saved) return;
    this.snapshotSeq = seq;
    this.#trimmer?.keep(seq, saved.object);
  }

  /** The trim that runs once the last snapshot kept is old enough (tests and shutdown wait on it). */
  get trimmed(): Promise<void> {
    return this.#trimmer?.trimmed ?? Promise.resolve();
  }

  /**
   * After a takeover: the snapshot this owner loaded, when the stream still holds records it
   * covers (the previous owner moved the pointer but lost the partition before its trim ran).
   * The stream is trimmed below it once it is old enough, as below a snapshot of this owner's.
   */
  keepLoaded(seq: number, object: string): void {
    this.#trimmer?.keep(seq, object);
  }

  async #confirm(s: SnapshotTarget): Promise<void> {
    if (this.#failed) throw this.#failed;
    await s.confirm();
  }

  #fail(err: Error): void {
    if (this.#failed) return;
    this.#failed = err;
    this.#o.onFailed(err);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#trimmer?.close();
    while (this.#flushing) await this.#flushing;
  }
}
