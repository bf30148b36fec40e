/**
 * @module cluster/snapshots — partition snapshots in a JetStream object store.
 *
 * A snapshot is the shard's compacted log (the same frames as a local snapshot) covering the
 * partition stream up to a sequence. The pointer `snap.p<n>` in the meta bucket names the newest
 * one and is moved with compare-and-set only forward, so an owner that was deposed while it wrote
 * a snapshot can never replace a newer one. Once the pointer has moved, the stream is trimmed
 * below the snapshot's sequence and the previous snapshot object is deleted.
 */
import type { KV } from '@nats-io/kv';
import type { ObjectStore } from '@nats-io/obj';
import { encodeFrame, readFrame } from '../shard/persist/frames.ts';
import type { LogRecord, SnapshotFooter, SnapshotHeader } from '../shard/store/records.ts';
import { snapshotRecords } from '../shard/persist/snapshot.ts';
import { applyRecord, type ShardState } from '../shard/store/apply.ts';

interface Pointer {
  seq: number;
  object: string;
  at: number;
}

export class PartitionSnapshots {
  readonly #os: ObjectStore;
  readonly #meta: KV;

  constructor(os: ObjectStore, meta: KV) {
    this.#os = os;
    this.#meta = meta;
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

  /** Stores a snapshot and moves the pointer to it; false when a newer one is already there. */
  async save(partition: number, seq: number, data: Buffer): Promise<boolean> {
    const key = pointerKey(partition);
    const current = await this.#meta.get(key);
    const previous = current?.operation === 'PUT' ? (JSON.parse(current.string()) as Pointer) : null;
    if (previous && previous.seq >= seq) return false;
    const object = `p${partition}-${seq}`;
    await this.#os.putBlob({ name: object }, data);
    const value = JSON.stringify({ seq, object, at: Date.now() } satisfies Pointer);
    try {
      if (current && current.operation === 'PUT') await this.#meta.update(key, value, current.revision);
      else await this.#meta.create(key, value);
    } catch {
      await this.#os.delete(object).catch(() => undefined); // someone moved it first
      return false;
    }
    if (previous && previous.object !== object) await this.#os.delete(previous.object).catch(() => undefined);
    return true;
  }

  /** Loads the newest snapshot into `state`; returns the stream sequence it covers (0: none). */
  async load(partition: number, state: ShardState): Promise<{ seq: number; records: number }> {
    const e = await this.#meta.get(pointerKey(partition));
    if (!e || e.operation !== 'PUT') return { seq: 0, records: 0 };
    const pointer = JSON.parse(e.string()) as Pointer;
    const blob = await this.#os.getBlob(pointer.object);
    if (!blob) throw new Error(`partition ${partition}: snapshot object ${pointer.object} is missing`);
    const buf = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
    let offset = 0;
    let records = 0;
    for (;;) {
      const f = readFrame(buf, offset);
      if (f.kind !== 'frame') throw new Error(`partition ${partition}: snapshot ${pointer.object} is damaged at offset ${offset}`);
      offset = f.next;
      const v = f.value as LogRecord | SnapshotHeader | SnapshotFooter;
      if (v.t === 'snap') continue;
      if (v.t === 'end') {
        if (v.records !== records) throw new Error(`partition ${partition}: snapshot ${pointer.object} footer counts ${v.records} records, found ${records}`);
        return { seq: pointer.seq, records };
      }
      applyRecord(state, v);
      records += 1;
    }
  }
}

function pointerKey(partition: number): string {
  return `snap.p${partition}`;
}
