/**
 * @module cluster/snapshots — partition snapshots in a JetStream object store.
 *
 * A snapshot is the shard's compacted log (the same frames as a local snapshot) covering the
 * partition stream up to a sequence. The pointer `snap.p<n>` in the meta bucket names the newest
 * one and is moved with compare-and-set only forward, so an owner that was deposed while it wrote
 * a snapshot can never replace a newer one. Each object has a name of its own (sequence and a
 * random suffix), so two writers never overwrite or delete each other's object.
 *
 * The pointer is read from the meta stream's leader (a JetStream API request), never with a
 * direct get: a direct get may be answered by a replica that is still catching up after a NATS
 * server restart, and an old pointer read as current would name an object already deleted, or a
 * sequence the stream was already trimmed past.
 *
 * A snapshot is read back and decoded before the pointer moves to it (`save`), and the stream is
 * trimmed only after the pointer, read again from the leader, still names it (`stillCurrent`):
 * the stream is cut only below a snapshot a node has loaded.
 */
import { randomBytes } from 'node:crypto';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { ObjectStore } from '@nats-io/obj';
import { encodeFrame, readFrame } from '../shard/persist/frames.ts';
import type { LogRecord, SnapshotFooter, SnapshotHeader } from '../shard/store/records.ts';
import { snapshotRecords } from '../shard/persist/snapshot.ts';
import { applyRecord, ShardState } from '../shard/store/apply.ts';

/** How long reading one snapshot object may take. */
const READ_MS = 10_000;

export interface Pointer {
  seq: number;
  object: string;
  at: number;
}

export class PartitionSnapshots {
  readonly #os: ObjectStore;
  readonly #meta: KV;
  readonly #jsm: JetStreamManager;
  readonly #bucket: string;

  /** `bucket`: the meta bucket's name (its stream is `KV_<bucket>`). */
  constructor(os: ObjectStore, meta: KV, jsm: JetStreamManager, bucket: string) {
    this.#os = os;
    this.#meta = meta;
    this.#jsm = jsm;
    this.#bucket = bucket;
  }

  /** Encodes `state` now (synchronously: a consistent cut) as a snapshot covering `seq`. */
  encode(partition: number, state: ShardState, seq: number): Buffer {
    const header: SnapshotHeader = { t: 'snap', format: 1, shard: partition, walSeq: seq, createdAt: Date.now() };
    const frames = [encodeFrame(header)];
    let records = 0;
    for (const r of snapshotRecords(state)) {
      frames.push(encodeFrame(r));
      records += 1;
    }
    const footer: SnapshotFooter = { t: 'end', records };
    frames.push(encodeFrame(footer));
    return Buffer.concat(frames);
  }

  /** The pointer as the meta stream's leader holds it, with its revision; null when none was saved. */
  async pointer(partition: number): Promise<{ pointer: Pointer; revision: number } | null> {
    const m = await this.#jsm.streams.getMessage(`KV_${this.#bucket}`, { last_by_subj: `$KV.${this.#bucket}.${pointerKey(partition)}` });
    if (!m || m.data.length === 0) return null;
    return { pointer: JSON.parse(m.string()) as Pointer, revision: m.seq };
  }

  /**
   * Stores a snapshot, reads it back and decodes it, then, if `confirm` resolves (the caller
   * still owns the partition), moves the pointer to it. Returns the pointer it replaced (null:
   * none), or false when a newer one is there or someone moved it first; rejects (the object
   * deleted again) when the read-back or `confirm` fails.
   */
  async save(partition: number, seq: number, data: Buffer, confirm: () => Promise<void>): Promise<{ object: string; previous: Pointer | null } | false> {
    const current = await this.pointer(partition);
    if (current && current.pointer.seq >= seq) return false;
    const object = `p${partition}-${seq}-${randomBytes(4).toString('hex')}`;
    await this.#os.putBlob({ name: object }, data);
    try {
      await this.#verify(partition, object);
      await confirm();
    } catch (err) {
      await this.#os.delete(object).catch(() => undefined);
      throw err; // damaged, unreadable, or no longer ours: the caller says so
    }
    try {
      const value = JSON.stringify({ seq, object, at: Date.now() } satisfies Pointer);
      if (current) await this.#meta.update(pointerKey(partition), value, current.revision);
      else await this.#meta.create(pointerKey(partition), value);
    } catch {
      // Someone moved the pointer first: the object is ours alone.
      await this.#os.delete(object).catch(() => undefined);
      return false;
    }
    return { object, previous: current?.pointer ?? null };
  }

  /** Whether the pointer, read from the leader, still names `object`. */
  async stillCurrent(partition: number, object: string): Promise<boolean> {
    return (await this.pointer(partition))?.pointer.object === object;
  }

  /** Deletes a snapshot object no pointer names any more. */
  async discard(object: string): Promise<void> {
    await this.#os.delete(object).catch(() => undefined);
  }

  /** Loads the newest snapshot into `state`; returns the stream sequence it covers (0: none). */
  async load(partition: number, state: ShardState): Promise<{ seq: number; records: number; object: string | null }> {
    const p = await this.pointer(partition);
    if (!p) return { seq: 0, records: 0, object: null };
    const records = await this.#read(partition, p.pointer.object, state);
    return { seq: p.pointer.seq, records, object: p.pointer.object };
  }

  async #verify(partition: number, object: string): Promise<void> {
    await this.#read(partition, object, new ShardState());
  }

  async #read(partition: number, object: string, state: ShardState): Promise<number> {
    // The object store reads chunks through a push consumer and waits for the last one: chunks
    // purged under it (the object deleted) or a consumer lost with a NATS server leave it waiting
    // for good. Give up, so a takeover gives its lease back and reads the pointer again.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`partition ${partition}: reading snapshot ${object} took over ${READ_MS / 1000} s`)), READ_MS)));
    const blob = await Promise.race([this.#os.getBlob(object), late]).finally(() => clearTimeout(timer));
    if (!blob) throw new Error(`partition ${partition}: snapshot object ${object} is missing`);
    const buf = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
    let offset = 0;
    let records = 0;
    for (;;) {
      const f = readFrame(buf, offset);
      if (f.kind !== 'frame') throw new SnapshotDamagedError(`partition ${partition}: snapshot ${object} is damaged at offset ${offset}`);
      offset = f.next;
      const v = f.value as LogRecord | SnapshotHeader | SnapshotFooter;
      if (v.t === 'snap') continue;
      if (v.t === 'end') {
        if (v.records !== records) throw new SnapshotDamagedError(`partition ${partition}: snapshot ${object} footer counts ${v.records} records, found ${records}`);
        return records;
      }
      applyRecord(state, v);
      records += 1;
    }
  }
}

export class SnapshotDamagedError extends Error {
  override name = 'SnapshotDamagedError';
}

function pointerKey(partition: number): string {
  return `snap.p${partition}`;
}
