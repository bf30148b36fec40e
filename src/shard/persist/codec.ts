/**
 * @module shard/persist/codec — the one face of the shard's stored form for storage kept outside
 * its directory (cluster/stream-storage): a snapshot encoded to bytes and decoded into a state
 * with the same frames and decoder as a local restart (persist/frames, persist/recovery), log
 * records replayed onto a state, and recovery mode around both.
 */
import { applyRecord, ShardState } from '../store/apply.ts';
import type { LogRecord, SnapshotFooter, SnapshotHeader } from '../store/records.ts';
import { encodeFrame } from './frames.ts';
import { applySnapshot, beginRecovery, bufferFrames } from './recovery.ts';
import { snapshotRecords } from './snapshot.ts';

export type { LogRecord } from '../store/records.ts';
export { ShardState } from '../store/apply.ts';
export { endRecovery } from './recovery.ts';

/** A fresh state in recovery mode (vectors packed, lexical indexing deferred): `endRecovery` once built. */
export function recoveringState(): ShardState {
  const state = new ShardState();
  beginRecovery(state);
  return state;
}

/** Encodes `state` now (synchronously: a consistent cut) as a snapshot of `shard` covering `seq`. */
export function encodeSnapshot(shard: number, state: ShardState, seq: number): Buffer {
  const header: SnapshotHeader = {
    t: 'snap',
    format: 1,
    shard,
    walSeq: seq,
    createdAt: Date.now(),
  };
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

/** Applies a snapshot held in memory to `state`; returns its record count. `where` names it in errors. */
export function decodeSnapshot(buf: Buffer, state: ShardState, where: string): number {
  return applySnapshot(bufferFrames(buf), state, where).records;
}

/** Applies log records read back (a stream's replay) to `state`, as recovery applies a segment's. */
export function replayRecords(state: ShardState, records: readonly LogRecord[]): void {
  for (const r of records) applyRecord(state, r);
}
