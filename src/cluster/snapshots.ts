/**
 * @module cluster/snapshots — partition snapshots in a JetStream object store: the shard's
 * compacted log covering the stream up to a sequence, each object named by sequence and a random
 * suffix, read back and decoded before the pointer `snap.p<n>` (meta bucket, compare-and-set, only
 * forward, always read from the leader) moves to it; when the stream is cut below one is
 * cluster/trim.ts's rule.
 */
import { randomBytes } from 'node:crypto';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { ObjectStore } from '@nats-io/obj';
import {
  decodeSnapshot,
  encodeSnapshot,
  recoveringState,
  type ShardState,
} from '../shard/persist/codec.ts';
import { readObject, retryUntil } from './message-get.ts';
import { isWrongLastSequence } from './js-errors.ts';

/** How long one read of a snapshot (its pointer, a chunk of it) may go unanswered, all tries together (each try has a shorter deadline). */
const READ_MS = 10_000;

export interface Pointer {
  seq: number;
  object: string;
  at: number;
}

/** Where snapshots are read from: the object store and a manager whose requests have a short timeout (each get is retried). */
export interface SnapshotReader {
  os: ObjectStore;
  jsm: JetStreamManager;
}

export class PartitionSnapshots {
  readonly #os: ObjectStore;
  readonly #meta: KV;
  readonly #jsm: JetStreamManager;
  readonly #bucket: string;
  readonly #reader: SnapshotReader;

  /** `bucket`: the meta bucket's name (its stream is `KV_<bucket>`); `reader`: for reading objects back (default: `os` and `jsm`). */
  constructor(
    os: ObjectStore,
    meta: KV,
    jsm: JetStreamManager,
    bucket: string,
    reader: SnapshotReader = { os, jsm },
  ) {
    this.#os = os;
    this.#meta = meta;
    this.#jsm = jsm;
    this.#bucket = bucket;
    this.#reader = reader;
  }

  /** Encodes `state` now (synchronously: a consistent cut) as a snapshot covering `seq`. */
  encode(partition: number, state: ShardState, seq: number): Buffer {
    return encodeSnapshot(partition, state, seq);
  }

  /** The pointer as the meta stream's leader holds it, with its revision; null when none was saved. */
  async pointer(
    partition: number,
    jsm: JetStreamManager = this.#jsm,
  ): Promise<{ pointer: Pointer; revision: number } | null> {
    const m = await jsm.streams.getMessage(`KV_${this.#bucket}`, {
      last_by_subj: `$KV.${this.#bucket}.${pointerKey(partition)}`,
    });
    if (!m || m.data.length === 0) return null;
    return { pointer: JSON.parse(m.string()) as Pointer, revision: m.seq };
  }

  /**
   * Stores a snapshot, reads it back and decodes it, then, if `confirm` resolves (the caller
   * still owns the partition), moves the pointer to it. Returns the pointer it replaced (null:
   * none), or false when a newer one is there or someone moved it first; rejects (the object
   * deleted again) when the read-back or `confirm` fails.
   */
  async save(
    partition: number,
    seq: number,
    data: Buffer,
    confirm: () => Promise<void>,
  ): Promise<{ object: string; previous: Pointer | null } | false> {
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
    } catch (err) {
      // Refused (someone moved the pointer first): the object is ours alone. Any other failure (a
      // timeout while NATS elects a leader) leaves it unknown whether the pointer names it now:
      // keep it (a later trim removes the partition's older objects, `discardBelow`).
      if (isWrongLastSequence(err)) await this.#os.delete(object).catch(() => undefined);
      return false;
    }
    return { object, previous: current?.pointer ?? null };
  }

  /**
   * After the stream was trimmed below `seq`: deletes the partition's snapshot objects older than
   * it (listed, plus `older`, the ones the trimming owner knows of), so forgotten content leaves
   * the store too. The object at `seq` and newer ones stay.
   */
  async discardBelow(partition: number, seq: number, older: readonly string[]): Promise<void> {
    const names = await this.#objects(partition, this.#jsm).catch(() => []);
    const doomed = new Set([...names.filter((c) => c.seq < seq).map((c) => c.name), ...older]);
    for (const name of doomed) await this.#os.delete(name).catch(() => undefined);
  }

  /** Whether the store's leader lists `object` among the partition's snapshot objects. */
  async exists(partition: number, object: string): Promise<boolean> {
    return (await this.#objects(partition, this.#jsm)).some((c) => c.name === object);
  }

  /** The partition's snapshot objects by name (`p<n>-<seq>-<suffix>`), newest first, listed from the store stream's leader. */
  async #objects(
    partition: number,
    jsm: JetStreamManager,
  ): Promise<Array<{ name: string; seq: number }>> {
    const bucket = (await this.#reader.os.status()).bucket;
    const prefix = `$O.${bucket}.M.`;
    const info = await jsm.streams.info(`OBJ_${bucket}`, { subjects_filter: `${prefix}>` });
    const pattern = new RegExp(`^p${partition}-(\\d+)-[0-9a-f]+$`);
    return Object.keys(info.state.subjects ?? {})
      .map((subject) => Buffer.from(subject.slice(prefix.length), 'base64').toString('latin1'))
      .flatMap((name) => {
        const m = pattern.exec(name);
        return m ? [{ name, seq: Number(m[1]) }] : [];
      })
      .sort((a, b) => b.seq - a.seq);
  }

  /** Loads the newest snapshot into `state` (in recovery mode: the caller's `beginRecovery`); returns the stream sequence it covers (0: none). */
  async load(
    partition: number,
    state: ShardState,
  ): Promise<{ seq: number; records: number; object: string | null }> {
    const p = await retryUntil(
      `partition ${partition}: reading the snapshot pointer`,
      performance.now() + READ_MS,
      () => this.pointer(partition, this.#reader.jsm),
    );
    if (!p) return { seq: 0, records: 0, object: null };
    const records = await this.#read(partition, p.pointer.object, state);
    return { seq: p.pointer.seq, records, object: p.pointer.object };
  }

  /**
   * The newest snapshot object of `partition` covering at least `minSeq`, found by name (objects
   * are named `p<n>-<seq>-<suffix>`) and loaded into a fresh state; null when none loads. For a
   * pointer that reads older than the stream's start: after a NATS meta leader was killed, a
   * pointer move that had been read back from the leader before the stream was trimmed was later
   * read as the value before it (nats-server 2.9.10; issue 23), and the partition could not be
   * taken. The object that move named is deleted only after a later trim, so it (or a newer one)
   * is still there. Each object was read back and decoded before any pointer named it, and covers
   * a prefix of the stream its writer had published and read back.
   */
  async loadCovering(
    partition: number,
    minSeq: number,
  ): Promise<
    { state: ShardState; seq: number; records: number; object: string } | { failed: string }
  > {
    const all = await retryUntil('listing snapshot objects', performance.now() + READ_MS, () =>
      this.#objects(partition, this.#reader.jsm),
    );
    const tried: string[] = [];
    for (const c of all) {
      if (c.seq < minSeq) {
        tried.push(`${c.name} (covers too little)`);
        continue;
      }
      const state = recoveringState();
      try {
        const records = await this.#read(partition, c.name, state);
        return { state, seq: c.seq, records, object: c.name };
      } catch (err) {
        // deleted, damaged or unreadable: the next older one
        tried.push(`${c.name} (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    return {
      failed: `snapshot objects of partition ${partition}: ${tried.length > 0 ? tried.join('; ') : 'none'}`,
    };
  }

  async #verify(partition: number, object: string): Promise<void> {
    // Decoded only to check it: nothing indexed.
    await this.#read(partition, object, recoveringState());
  }

  async #read(partition: number, object: string, state: ShardState): Promise<number> {
    // Chunks are read with gets, each retried: the object store's own reader (a push consumer)
    // waited for good for chunks that never came after a NATS server was killed (issue 23).
    const buf = await readObject(this.#reader.os, this.#reader.jsm, object, READ_MS);
    if (!buf)
      throw new SnapshotMissingError(
        `partition ${partition}: snapshot object ${object} is missing`,
      );
    return decodeSnapshot(buf, state, `partition ${partition}: snapshot ${object}`);
  }
}

/** The object a pointer names is gone (deleted once a newer pointer replaced it: this pointer was read stale). */
export class SnapshotMissingError extends Error {
  override name = 'SnapshotMissingError';
}

function pointerKey(partition: number): string {
  return `snap.p${partition}`;
}
