/** Record framing: round trip, and the torn-versus-corrupt classification recovery relies on. */
import { describe, expect, it } from 'vitest';
import {
  encodeFrame,
  encodeFrameInto,
  FRAME_HEADER,
  FRAME_MAGIC,
  readFrame,
  type FrameRead,
} from '../../src/shard/persist/frames.ts';

const values = [
  { t: 'del', ws: 'alpha', id: '0'.repeat(32) },
  {
    t: 'put',
    ws: 'beta',
    m: {
      content: 'héllo wörld ✓',
      n: 1.5,
      nested: { a: [1, 2, null] },
      bytes: Buffer.from([1, 2, 3, 255]),
    },
  },
  {
    t: 'tomb',
    ws: 'gamma',
    tomb: {
      memory_id: 'x',
      forgotten_at: 1_700_000_000_000_000,
      criteria: {},
      content_sha256: 'ab',
    },
  },
];

function concatFrames(): { buf: Buffer; offsets: number[] } {
  const frames = values.map((v) => encodeFrame(v));
  const offsets: number[] = [];
  let at = 0;
  for (const f of frames) {
    offsets.push(at);
    at += f.length;
  }
  return { buf: Buffer.concat(frames), offsets };
}

function kindAt(buf: Buffer, offset: number): FrameRead['kind'] {
  return readFrame(buf, offset).kind;
}

describe('frames: encode and read', () => {
  it('lays out magic, length and CRC before the payload', () => {
    const f = encodeFrame({ hello: 'world' });
    expect(f[0]).toBe(FRAME_MAGIC);
    expect(f.readUInt32LE(1)).toBe(f.length - FRAME_HEADER);
  });

  it('encodes into a buffer the same bytes as a frame of its own, or nothing when it does not fit', () => {
    const target = Buffer.alloc(4096, 0xee);
    let at = 0;
    for (const v of values) {
      const n = encodeFrameInto(target, at, v);
      expect(target.subarray(at, at + n)).toEqual(encodeFrame(v));
      at += n;
    }
    const big = { t: 'put', ws: 'w', m: { content: 'z'.repeat(4096) } };
    expect(encodeFrameInto(target, at, big)).toBe(0);
    expect(target.subarray(at).every((b) => b === 0xee)).toBe(true);
  });

  it('round-trips a sequence of frames, then reports the end', () => {
    const { buf, offsets } = concatFrames();
    let offset = 0;
    const read: unknown[] = [];
    for (;;) {
      const f = readFrame(buf, offset);
      if (f.kind === 'end') break;
      expect(f.kind).toBe('frame');
      if (f.kind !== 'frame') return;
      expect(offsets).toContain(offset);
      read.push(f.value);
      offset = f.next;
    }
    expect(offset).toBe(buf.length);
    expect(read).toEqual(values);
  });

  it('reports the end of an empty buffer and at an offset past the end', () => {
    expect(readFrame(Buffer.alloc(0), 0)).toEqual({ kind: 'end' });
    expect(readFrame(encodeFrame(1), 100).kind).toBe('end');
  });
});

describe('frames: torn (an interrupted append at the end)', () => {
  it('an incomplete header at the end is torn', () => {
    const { buf, offsets } = concatFrames();
    const last = offsets[2] as number;
    for (const keep of [1, 4, FRAME_HEADER - 1]) {
      const cut = buf.subarray(0, last + keep);
      expect(kindAt(cut, 0)).toBe('frame');
      const r = readFrame(cut, last);
      expect(r).toMatchObject({ kind: 'torn', reason: expect.stringMatching(/header/) });
    }
  });

  it('a frame whose length runs past the end of the file is torn', () => {
    const { buf, offsets } = concatFrames();
    const last = offsets[2] as number;
    const cut = buf.subarray(0, buf.length - 3);
    expect(readFrame(cut, last)).toMatchObject({
      kind: 'torn',
      reason: expect.stringMatching(/past end/),
    });
    const headerOnly = buf.subarray(0, last + FRAME_HEADER);
    expect(readFrame(headerOnly, last).kind).toBe('torn');
  });

  it('a checksum mismatch in the final frame is torn', () => {
    const { buf, offsets } = concatFrames();
    const damaged = Buffer.from(buf);
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] ?? 0) ^ 0xff;
    expect(readFrame(damaged, offsets[0] as number).kind).toBe('frame');
    expect(readFrame(damaged, offsets[2] as number)).toMatchObject({
      kind: 'torn',
      reason: expect.stringMatching(/checksum/),
    });
  });

  it('a zero-filled tail is torn, whatever its length', () => {
    const { buf } = concatFrames();
    expect(readFrame(Buffer.concat([buf, Buffer.alloc(3)]), buf.length).kind).toBe('torn');
    for (const zeros of [FRAME_HEADER, 64, 4096]) {
      const padded = Buffer.concat([buf, Buffer.alloc(zeros)]);
      expect(readFrame(padded, buf.length)).toEqual({ kind: 'torn', reason: 'zero-filled tail' });
    }
  });
});

describe('frames: corrupt (damage with data after it)', () => {
  it('a checksum mismatch in a frame that is not the last is corrupt', () => {
    const { buf, offsets } = concatFrames();
    const damaged = Buffer.from(buf);
    const mid = (offsets[1] as number) + FRAME_HEADER + 2;
    damaged[mid] = (damaged[mid] ?? 0) ^ 0x01;
    expect(readFrame(damaged, offsets[0] as number).kind).toBe('frame');
    expect(readFrame(damaged, offsets[1] as number)).toMatchObject({
      kind: 'corrupt',
      reason: 'checksum mismatch',
    });
  });

  it('a bad magic byte followed by data is corrupt', () => {
    const { buf, offsets } = concatFrames();
    const damaged = Buffer.from(buf);
    damaged[offsets[1] as number] = 0x00;
    expect(readFrame(damaged, offsets[1] as number)).toMatchObject({
      kind: 'corrupt',
      reason: expect.stringMatching(/magic/),
    });
    damaged[offsets[1] as number] = 0x42;
    expect(readFrame(damaged, offsets[1] as number)).toMatchObject({
      kind: 'corrupt',
      reason: 'bad frame magic 0x42',
    });
  });

  it('zeros in the middle, followed by data, are corrupt, not a torn tail', () => {
    const { buf } = concatFrames();
    const damaged = Buffer.concat([buf, Buffer.alloc(32), encodeFrame({ after: true })]);
    expect(readFrame(damaged, buf.length).kind).toBe('corrupt');
  });

  it('an implausible frame length is corrupt', () => {
    const { buf, offsets } = concatFrames();
    const damaged = Buffer.from(buf);
    damaged.writeUInt32LE(0xffff_fff0, (offsets[1] as number) + 1);
    expect(readFrame(damaged, offsets[1] as number)).toMatchObject({
      kind: 'corrupt',
      reason: expect.stringMatching(/implausible/),
    });
  });

  it('a frame with a valid checksum whose payload is not msgpack is corrupt', async () => {
    const { crc32 } = await import('node:zlib');
    const payload = Buffer.from([0x92, 0x01]); // an array of two holding only one element
    const frame = Buffer.alloc(FRAME_HEADER + payload.length);
    frame[0] = FRAME_MAGIC;
    frame.writeUInt32LE(payload.length, 1);
    frame.writeUInt32LE(crc32(payload), 5);
    payload.copy(frame, FRAME_HEADER);
    expect(readFrame(Buffer.concat([frame, encodeFrame(1)]), 0).kind).toBe('corrupt');
  });

  // DESIGN 11: only a torn record at the very END of the log may be dropped. A flipped bit in the
  // length field of a frame in the middle makes the frame "run past the end of the file", yet
  // intact frames follow it: that is corruption, and calling it torn lets recovery truncate
  // acknowledged records away silently.
  it('a damaged length field in a middle frame, with intact frames after it, is corrupt (not torn)', () => {
    const { buf, offsets } = concatFrames();
    const damaged = Buffer.from(buf);
    damaged.writeUInt32LE(100_000, (offsets[1] as number) + 1);
    expect(readFrame(damaged, offsets[1] as number).kind).toBe('corrupt');
  });
});
