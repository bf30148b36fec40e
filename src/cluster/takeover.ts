/**
 * @module cluster/takeover — what a node does between taking a partition's lease and serving it:
 * load the newest snapshot, replay the stream after it, and publish a fence that expects the last
 * sequence read, so that a deposed owner's later appends are refused. Someone appending between
 * the read and the fence makes it read again; a stream trimmed under the replay (a gap) makes it
 * read the pointer again.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { endRecovery, recoveringState } from '../shard/persist/codec.ts';
import type { RecoveredState } from '../shard/storage.ts';
import { encodeEntry, isWrongLastSequence } from './stream-log.ts';
import { ensureStream, replayStream, StreamGapError, type StreamReader } from './stream-replay.ts';
import type { PartitionSnapshots } from './snapshots.ts';
import type { ClusterSubjects } from './subjects.ts';

const FENCE_ATTEMPTS = 20;

export interface TakeoverDeps {
  node: string;
  js: JetStreamClient;
  jsm: JetStreamManager;
  reader: StreamReader;
  snapshots: PartitionSnapshots;
  subjects: ClusterSubjects;
  replicas: number;
  timeoutMs: number;
}

export interface Recovery {
  recovered: RecoveredState;
  /** Stream sequence of our fence (where our ownership starts). */
  fenceSeq: number;
  /** The snapshot loaded, when the stream still holds records it covers (to be trimmed once we own it). */
  loaded: { seq: number; object: string } | null;
  /** Why the snapshot the pointer names was passed over for an older object, when it was. */
  fellBack: string | null;
  /** Where the time went, ms (summed over attempts), and the attempts a fence took. */
  timing: { stream: number; snapshot: number; replay: number; fence: number; attempts: number };
}

/** Replays the whole stream, then appends a fence; a deposed owner's later appends fail. `ours`: false once the lease was given up meanwhile. */
export async function recoverAndFence(
  d: TakeoverDeps,
  p: number,
  term: number,
  ours: () => boolean,
): Promise<Recovery> {
  const stream = d.subjects.stream(p);
  const timing = { stream: 0, snapshot: 0, replay: 0, fence: 0, attempts: 0 };
  let mark = performance.now();
  const lap = (phase: 'stream' | 'snapshot' | 'replay' | 'fence'): void => {
    const now = performance.now();
    timing[phase] += now - mark;
    mark = now;
  };
  await ensureStream(d.jsm, stream, d.subjects.log(p), d.replicas);
  let lastGap: Error | null = null;
  for (let attempt = 0; attempt < FENCE_ATTEMPTS; attempt++) {
    timing.attempts = attempt + 1;
    const info = await d.jsm.streams.info(stream);
    lap('stream');
    const last = info.state.last_seq;
    // One recovery path with a local restart (shard/persist/recovery.ts): recovery mode while the
    // snapshot and the stream after it are applied, the same snapshot decoder.
    let state = recoveringState();
    let coveringFailed = '';
    let loadFailed = '';
    let fellBack: string | null = null;
    let snap = await d.snapshots.load(p, state).catch((err: unknown) => {
      loadFailed = err instanceof Error ? err.message : String(err);
      return null;
    });
    if (!snap || (snap.seq + 1 < info.state.first_seq && info.state.messages > 0)) {
      // The pointer reads older than the stream's start, or its object is gone or damaged (NATS
      // 2.9.10 lost chunks of an object read back before the pointer moved, after a meta-leader
      // kill): load the newest snapshot object that covers the stream's start instead (the stream
      // is trimmed only below a snapshot kept a while, so an older one covers it). With none,
      // replay from the pointer all the same: the replay reads every sequence and refuses a gap,
      // so a stream start reported wrongly costs nothing and a real gap still fails.
      const covering = await d.snapshots.loadCovering(p, info.state.first_seq - 1);
      if ('failed' in covering) {
        coveringFailed = covering.failed;
        if (!snap)
          throw new Error(
            `partition ${p}: the snapshot the pointer names could not be loaded (${loadFailed}), and no snapshot object covers the stream's start (${info.state.first_seq}); ${coveringFailed}`,
          );
      } else {
        fellBack = `pointer ${snap ? `at ${snap.seq}, before the stream's start ${info.state.first_seq}` : `unusable (${loadFailed})`}: loaded ${covering.object}`;
        ({ state } = covering);
        snap = covering;
      }
    }
    lap('snapshot');
    const from = snap.seq + 1;
    let replayed: Awaited<ReturnType<typeof replayStream>>;
    try {
      replayed = await replayStream(d.reader, stream, from, last, state);
    } catch (err) {
      // Trimmed between reading the pointer and reading the stream: the pointer has moved on.
      if (err instanceof StreamGapError && attempt < FENCE_ATTEMPTS - 1) {
        lastGap = err;
        continue;
      }
      if (err instanceof StreamGapError)
        throw new Error(
          `partition ${p}: the stream starts at ${info.state.first_seq} but the newest snapshot covers only up to ${snap.seq} (${err.message}; ${coveringFailed || 'pointer read as current'})`,
        );
      throw err;
    }
    const { recovered } = replayed;
    endRecovery(state);
    lap('replay');
    if (!ours()) throw new Error(`partition ${p}: lost while recovering`); // no fence from a takeover given up
    try {
      const ack = await d.js.publish(
        d.subjects.log(p),
        encodeEntry({ node: d.node, fence: term }),
        {
          msgID: `${d.node}.${term}.fence`,
          // A stream with no message left (purged up to a snapshot covering all of it) has no last
          // message of the subject: JetStream compares the expectation with 0 then, not last_seq.
          expect: { lastSubjectSequence: info.state.messages > 0 ? last : 0 },
          timeout: d.timeoutMs,
        },
      );
      // Records the loaded snapshot covers are still in the stream: trim them once we own it.
      const loaded =
        snap.object !== null && info.state.messages > 0 && info.state.first_seq < snap.seq
          ? { seq: snap.seq, object: snap.object }
          : null;
      lap('fence');
      return { recovered, fenceSeq: ack.seq, loaded, fellBack, timing };
    } catch (err) {
      lap('fence');
      // The previous owner appended after we read: read again. Anything else (NATS did not
      // answer): give the lease back rather than hold the partition through more timeouts.
      if (!isWrongLastSequence(err) || attempt === FENCE_ATTEMPTS - 1) throw err;
    }
  }
  throw lastGap ?? new Error('unreachable');
}
