/**
 * cluster/stream-log against a fake JetStream (the real one is exercised by the cluster
 * integration tests): group commit, the chain of expected sequences, message ids reused on retry,
 * fencing on a refused expectation, writes too large for one message, and replay of those (whole
 * or not at all).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamPublishOptions,
} from '@nats-io/jetstream';
import {
  decodeEntry,
  FencedError,
  StreamLog,
  type StreamEntry,
} from '../../src/cluster/stream-log.ts';
import { EntryReplayer } from '../../src/cluster/stream-replay.ts';
import type { LogRecord } from '../../src/shard/store/records.ts';

interface Call {
  data: Uint8Array;
  opts: Partial<JetStreamPublishOptions>;
}

/** A stream that stores in order, de-duplicates by message id and checks the expected sequence. */
class FakeStream {
  seq = 0;
  readonly stored: Uint8Array[] = [];
  readonly calls: Call[] = [];
  readonly ids = new Map<string, number>();
  /** Attempts that store the message but lose the acknowledgement. */
  loseAcks = 0;
  /** Attempts answered as by a NATS electing the stream's leader (nothing stored). */
  unavailable = 0;
  gate: Promise<void> = Promise.resolve();

  client(): JetStreamClient {
    const publish = async (
      _subject: string,
      data?: Uint8Array,
      opts?: Partial<JetStreamPublishOptions>,
    ) => {
      await this.gate;
      const o = opts ?? {};
      this.calls.push({ data: data ?? new Uint8Array(0), opts: o });
      if (this.unavailable > 0) {
        this.unavailable -= 1;
        throw new Error('503 no responders');
      }
      const dup = o.msgID ? this.ids.get(o.msgID) : undefined;
      if (dup !== undefined) return { stream: 's', seq: dup, duplicate: true, domain: '' };
      const expected = o.expect?.lastSubjectSequence;
      if (expected !== undefined && expected !== this.seq) {
        throw new JetStreamApiError({
          code: 400,
          err_code: 10071,
          description: `wrong last sequence: ${this.seq}`,
        });
      }
      this.seq += 1;
      this.stored.push(data ?? new Uint8Array(0));
      if (o.msgID) this.ids.set(o.msgID, this.seq);
      if (this.loseAcks > 0) {
        this.loseAcks -= 1;
        throw new Error('timeout');
      }
      return { stream: 's', seq: this.seq, duplicate: false, domain: '' };
    };
    return { publish } as unknown as JetStreamClient;
  }
}

function access(i: number): LogRecord {
  return { t: 'access', ws: 'w', id: `m${i}`, n: i, at: i };
}

function open(stream: FakeStream, failures: Error[] = []): StreamLog {
  return new StreamLog({
    js: stream.client(),
    subject: 'x.p.0.log',
    node: 'a',
    term: 7,
    lastSeq: stream.seq,
    timeoutMs: 1000,
    onFailed: (e) => failures.push(e),
  });
}

describe('StreamLog', () => {
  it('appends that arrive during a publish share the next one, each publish expecting the previous sequence', async () => {
    const stream = new FakeStream();
    stream.seq = 5; // the fence
    const log = open(stream);
    let release = (): void => undefined;
    stream.gate = new Promise((r) => (release = r));
    const first = log.append([access(1)]);
    const rest = [log.append([access(2)]), log.append([access(3), access(4)])];
    release();
    await Promise.all([first, ...rest]);
    expect(stream.calls.map((c) => c.opts.expect?.lastSubjectSequence)).toEqual([5, 6]);
    expect(stream.stored.map((d) => decodeEntry(d))).toEqual([
      { node: 'a', records: [access(1)] },
      { node: 'a', records: [access(2), access(3), access(4)] },
    ]);
    expect(log.lastSeq).toBe(7);
    expect(new Set(stream.calls.map((c) => c.opts.msgID)).size).toBe(2);
  });

  it('retries a publish whose acknowledgement was lost with the same message id: stored once', async () => {
    const stream = new FakeStream();
    stream.loseAcks = 1;
    const log = open(stream);
    await log.append([access(1)]);
    expect(stream.calls).toHaveLength(2);
    expect(stream.calls[0]?.opts.msgID).toBe(stream.calls[1]?.opts.msgID);
    expect(stream.stored).toHaveLength(1);
    await log.append([access(2)]);
    expect(stream.stored).toHaveLength(2);
  });

  describe('while NATS elects the stream leader', () => {
    afterEach(() => vi.useRealTimers());

    it('keeps retrying the publish for seconds (a failover answers "no responders" for 4–9 s), then appends once', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
      const stream = new FakeStream();
      stream.unavailable = 9; // 100 + 200 + 400 + 800 + 5 × 1000 ms of pauses: 6.5 s
      const failures: Error[] = [];
      const log = open(stream, failures);
      const appended = log.append([access(1)]);
      await vi.advanceTimersByTimeAsync(7_000);
      await appended;
      expect(stream.calls).toHaveLength(10);
      expect(new Set(stream.calls.map((c) => c.opts.msgID)).size).toBe(1);
      expect(stream.stored).toHaveLength(1);
      expect(failures).toEqual([]);
    });

    it('gives up after about 10 s, and at once when the log is closed (the partition was dropped)', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
      const stream = new FakeStream();
      stream.unavailable = Number.MAX_SAFE_INTEGER;
      const failures: Error[] = [];
      const log = open(stream, failures);
      const appended = expect(log.append([access(1)])).rejects.toThrow(/no responders/);
      await vi.advanceTimersByTimeAsync(11_000);
      await appended;
      expect(failures).toHaveLength(1);
      const calls = stream.calls.length;
      expect(calls).toBeGreaterThan(8);
      expect(calls).toBeLessThan(16);

      const other = new FakeStream();
      other.unavailable = Number.MAX_SAFE_INTEGER;
      const closing = open(other);
      const refused = expect(closing.append([access(2)])).rejects.toThrow(/no responders/);
      await vi.advanceTimersByTimeAsync(500);
      const closed = closing.close();
      await vi.advanceTimersByTimeAsync(1_000);
      await closed;
      await refused;
      expect(other.calls.length).toBeLessThanOrEqual(4);
    });
  });

  it('is fenced when another owner appended: the write is refused, the log fails, later appends too', async () => {
    const stream = new FakeStream();
    const failures: Error[] = [];
    const log = open(stream, failures);
    await log.append([access(1)]);
    stream.seq += 1; // a new owner's fence
    await expect(log.append([access(2)])).rejects.toBeInstanceOf(FencedError);
    expect(failures).toHaveLength(1);
    expect(log.failed).toBeInstanceOf(FencedError);
    await expect(log.append([access(3)])).rejects.toBeInstanceOf(FencedError);
    expect(stream.stored).toHaveLength(1);
  });

  it('splits a write too large for one message over several, in order', async () => {
    const stream = new FakeStream();
    const log = open(stream);
    const big: LogRecord[] = Array.from({ length: 60 }, (_, i) => ({
      t: 'access',
      ws: 'w'.repeat(30_000),
      id: `m${i}`,
      n: i,
      at: i,
    }));
    await log.append(big);
    expect(stream.stored.length).toBeGreaterThan(1);
    for (const d of stream.stored) expect(d.length).toBeLessThanOrEqual(1024 * 1024);
    const replayed = stream.stored.flatMap((d) => {
      const e = decodeEntry(d);
      return 'records' in e ? e.records : [];
    });
    expect(replayed).toEqual(big);
  });

  it('numbers the parts of a split write, and replay applies it only whole', async () => {
    const stream = new FakeStream();
    const log = open(stream);
    const big: LogRecord[] = Array.from({ length: 60 }, (_, i) => ({
      t: 'access',
      ws: 'w'.repeat(30_000),
      id: `m${i}`,
      n: i,
      at: i,
    }));
    await log.append([access(0)]);
    await log.append(big);
    const entries = stream.stored.map((d) => decodeEntry(d));
    const parts = entries.flatMap((e) => ('records' in e && e.part ? [e.part] : []));
    expect(parts.length).toBe(entries.length - 1);
    expect(parts.map(([i]) => i)).toEqual(parts.map((_, k) => k + 1));
    expect(new Set(parts.map(([, n]) => n))).toEqual(new Set([parts.length]));

    const whole = replay(entries);
    expect(whole.applied).toEqual([access(0), ...big]);
    expect(whole.dropped).toBe(0);

    // The owner died before its last part: nothing of the write is applied.
    const cut = replay(entries.slice(0, -1));
    expect(cut.applied).toEqual([access(0)]);
    expect(cut.dropped).toBeGreaterThan(0);

    // A new owner's fence (and its writes) after the unfinished parts: still dropped, the rest applied.
    const fenced = replay([
      ...entries.slice(0, -1),
      { node: 'b', fence: 9 },
      { node: 'b', records: [access(1)] },
    ]);
    expect(fenced.applied).toEqual([access(0), access(1)]);
  });

  it('replay drops parts out of order or from a group that never started', () => {
    const r = (node: string, i: number, n: number, k: number): StreamEntry => ({
      node,
      records: [access(k)],
      part: [i, n],
    });
    expect(replay([r('a', 2, 2, 1)]).applied).toEqual([]);
    expect(replay([r('a', 1, 3, 1), r('a', 3, 3, 3)]).applied).toEqual([]);
    expect(replay([r('a', 1, 2, 1), r('b', 2, 2, 2)]).applied).toEqual([]);
    expect(replay([r('a', 1, 2, 1), r('a', 1, 2, 5), r('a', 2, 2, 6)]).applied).toEqual([
      access(5),
      access(6),
    ]);
  });
});

function replay(entries: StreamEntry[]): { applied: LogRecord[]; dropped: number } {
  const applied: LogRecord[] = [];
  const replayer = new EntryReplayer((records) => applied.push(...records));
  for (const e of entries) replayer.push(e);
  replayer.finish();
  return { applied, dropped: replayer.dropped };
}
