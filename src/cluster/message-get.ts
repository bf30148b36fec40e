/**
 * @module cluster/message-get — reading stored messages without a consumer: each read is one
 * `STREAM.MSG.GET` answered by the stream's leader alone, with a deadline of its own, retried
 * until an overall deadline (consumers need the JetStream meta leader, and a push consumer waited
 * for good for chunks after a NATS server was killed: docs/architecture-notes.md, issue 23).
 */
import { createHash } from 'node:crypto';
import type { JetStreamManager, MsgRequest, StoredMsg } from '@nats-io/jetstream';
import type { ObjectStore } from '@nats-io/obj';

/** Pause between two tries of one read. */
const RETRY_PAUSE_MS = 100;

/** A read that keeps failing until its deadline: the last failure, with what was read. */
export class ReadDeadlineError extends Error {
  override name = 'ReadDeadlineError';
}

/** Runs `read` until it resolves or `deadline` (`performance.now()` time) passes; rethrows its last failure then. */
export async function retryUntil<T>(
  what: string,
  deadline: number,
  read: () => Promise<T>,
): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (err) {
      if (performance.now() + RETRY_PAUSE_MS >= deadline) {
        throw new ReadDeadlineError(
          `${what}: no answer before the deadline (${err instanceof Error ? err.message : String(err)})`,
        );
      }
      await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
    }
  }
}

/** The message at `seq`, or null when the stream holds none there (purged, or never written). */
export function getAt(
  jsm: JetStreamManager,
  stream: string,
  seq: number,
  deadline: number,
): Promise<StoredMsg | null> {
  return retryUntil(`reading ${stream} at ${seq}`, deadline, () =>
    jsm.streams.getMessage(stream, { seq }),
  );
}

/**
 * The first message on `subject` at or after `seq`, or null. `STREAM.MSG.GET` takes `next_by_subj`
 * since nats-server 2.9; the client's type lists it only for direct gets.
 */
function getNext(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  seq: number,
  deadline: number,
): Promise<StoredMsg | null> {
  const query = { seq, next_by_subj: subject } as unknown as MsgRequest;
  return retryUntil(`reading ${stream} after ${seq}`, deadline, () =>
    jsm.streams.getMessage(stream, query),
  );
}

/**
 * The first message on `subject` at or after `seq`: a direct get first (any replica answers, with
 * the payload as it is: the JSON get's base64 cost ~12 ms of CPU a megabyte, half a takeover's
 * time for a 42 MB snapshot), else, when that finds nothing or fails (a replica that has not
 * caught up answers "not found"), the stream leader's get. The object's digest is checked at the end.
 */
async function chunkAfter(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  seq: number,
  deadline: number,
): Promise<{ seq: number; data: Uint8Array } | null> {
  const direct = await jsm.direct
    .getMessage(stream, { seq, next_by_subj: subject })
    .catch(() => null);
  return direct ?? getNext(jsm, stream, subject, seq, deadline);
}

/**
 * An object of `os`, read chunk by chunk with gets (its size and SHA-256 digest checked); null when
 * the object is missing or deleted. Fails when one read gets no answer for `stallMs` (so a large
 * object is not cut short by an overall deadline). `os` must come from a JetStream context with
 * a short timeout: its description is read through it.
 */
export async function readObject(
  os: ObjectStore,
  jsm: JetStreamManager,
  name: string,
  stallMs: number,
): Promise<Buffer | null> {
  const info = await retryUntil(
    `reading the description of object ${name}`,
    performance.now() + stallMs,
    () => os.info(name),
  );
  if (!info || info.deleted) return null;
  const stream = `OBJ_${info.bucket}`;
  const subject = `$O.${info.bucket}.C.${info.nuid}`;
  const chunks: Uint8Array[] = [];
  const sha = createHash('sha256');
  let bytes = 0;
  let seq = 1;
  while (bytes < info.size) {
    const m = await chunkAfter(jsm, stream, subject, seq, performance.now() + stallMs);
    if (!m) throw new Error(`object ${name}: chunks end after ${bytes} of ${info.size} bytes`);
    chunks.push(m.data);
    sha.update(m.data);
    bytes += m.data.length;
    seq = m.seq + 1;
  }
  if (bytes !== info.size || chunks.length !== info.chunks)
    throw new Error(
      `object ${name}: read ${chunks.length} chunks of ${bytes} bytes, its description says ${info.chunks} of ${info.size}`,
    );
  const want = Buffer.from(info.digest.replace(/^SHA-256=/, ''), 'base64');
  if (!sha.digest().equals(want))
    throw new Error(`object ${name}: its SHA-256 digest does not match (${info.digest})`);
  return Buffer.concat(chunks, bytes);
}

/**
 * Reads `from`..`to` of a stream in order, `window` gets at a time, calling `each` per message.
 * A sequence with no message (purged under the read) throws `gap(seq)`.
 */
export async function readRange(
  jsm: JetStreamManager,
  stream: string,
  from: number,
  to: number,
  deadline: number,
  each: (m: StoredMsg) => void,
  gap: (seq: number) => Error,
  window = 128,
): Promise<void> {
  for (let start = from; start <= to; start += window) {
    const end = Math.min(to, start + window - 1);
    const got = await Promise.all(
      Array.from({ length: end - start + 1 }, (_, i) => getAt(jsm, stream, start + i, deadline)),
    );
    for (let i = 0; i < got.length; i++) {
      const m = got[i];
      if (!m || m.seq !== start + i) throw gap(start + i);
      each(m);
    }
  }
}
