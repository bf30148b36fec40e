/**
 * @module shard/persist/frames — the record framing shared by the log and snapshots:
 * [0xFB magic][u32 payload length][u32 CRC-32 of payload][msgpack payload].
 */
import { crc32 } from 'node:zlib';
import { Packr, RESET_BUFFER_MODE } from 'msgpackr';

export const FRAME_MAGIC = 0xfb;
export const FRAME_HEADER = 9;
const MAX_FRAME = 256 * 1024 * 1024;

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

export function encodeFrame(value: unknown): Buffer {
  const payload = packr.pack(value, RESET_BUFFER_MODE);
  const frame = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  putFrame(frame, 0, payload);
  return frame;
}

/**
 * Writes the frame of `value` into `target` at `offset` and returns its length, or 0 (nothing
 * written) when it does not fit. Allocates no buffer per frame: the payload is encoded in
 * msgpackr's own buffer, which the next encoding reuses, and copied straight into `target`.
 * (Both encoders copy the payload out at once, so msgpackr may reuse its buffer: RESET_BUFFER_MODE.)
 */
export function encodeFrameInto(target: Buffer, offset: number, value: unknown): number {
  const payload = packr.pack(value, RESET_BUFFER_MODE);
  const length = FRAME_HEADER + payload.length;
  if (offset + length > target.length) return 0;
  putFrame(target, offset, payload);
  return length;
}

/** Header and payload of one frame at `offset` of `target` (which has room for them). */
function putFrame(target: Buffer, offset: number, payload: Uint8Array): void {
  target[offset] = FRAME_MAGIC;
  target.writeUInt32LE(payload.length, offset + 1);
  target.writeUInt32LE(crc32(payload), offset + 5);
  target.set(payload, offset + FRAME_HEADER);
}

/** Bytes of a padding payload before its zeros: msgpack bin32 (0xc6) and its big-endian length. */
const PAD_HEAD = 5;

/**
 * A frame of exactly `frameLength` bytes that holds nothing: its payload is one msgpack binary
 * value of zeros (it decodes to a Uint8Array, which no record is). Erasure writes it over a frame
 * whose content was forgotten, so the file keeps its length and offsets (shard/persist/erase).
 */
export function paddingFrame(frameLength: number): Buffer {
  const len = frameLength - FRAME_HEADER;
  if (len < PAD_HEAD) throw new Error(`a frame of ${frameLength} bytes is too short to pad`);
  const frame = Buffer.alloc(frameLength);
  frame[0] = FRAME_MAGIC;
  frame.writeUInt32LE(len, 1);
  frame[FRAME_HEADER] = 0xc6;
  frame.writeUInt32BE(len - PAD_HEAD, FRAME_HEADER + 1);
  frame.writeUInt32LE(crc32(frame.subarray(FRAME_HEADER)), 5);
  return frame;
}

/** Whether a decoded frame value is erasure padding (see {@link paddingFrame}). */
export function isPadding(value: unknown): boolean {
  return value instanceof Uint8Array;
}

export type FrameRead =
  | { kind: 'frame'; value: unknown; next: number }
  | { kind: 'end' }
  | { kind: 'torn'; reason: string }
  | { kind: 'corrupt'; reason: string };

/**
 * Reads the frame at `offset`. A frame that runs past the end of the buffer, a bad final frame,
 * or zero-filled bytes up to the end are 'torn' (an interrupted append); any other damage is 'corrupt'.
 */
export function readFrame(buf: Buffer, offset: number): FrameRead {
  if (offset >= buf.length) return { kind: 'end' };
  if (buf.length - offset < FRAME_HEADER)
    return { kind: 'torn', reason: 'incomplete frame header' };
  if (buf[offset] !== FRAME_MAGIC) {
    if (allZero(buf, offset)) return { kind: 'torn', reason: 'zero-filled tail' };
    return { kind: 'corrupt', reason: `bad frame magic 0x${(buf[offset] ?? 0).toString(16)}` };
  }
  const len = buf.readUInt32LE(offset + 1);
  const end = offset + FRAME_HEADER + len;
  if (len > MAX_FRAME) return { kind: 'corrupt', reason: `frame length ${len} is implausible` };
  if (end > buf.length) return tornUnlessFollowed(buf, offset, 'frame runs past end of file');
  const payload = buf.subarray(offset + FRAME_HEADER, end);
  if (crc32(payload) !== buf.readUInt32LE(offset + 5)) {
    if (end === buf.length)
      return tornUnlessFollowed(buf, offset, 'checksum mismatch in final frame');
    return { kind: 'corrupt', reason: 'checksum mismatch' };
  }
  try {
    return { kind: 'frame', value: packr.unpack(payload), next: end };
  } catch {
    return { kind: 'corrupt', reason: 'undecodable payload' };
  }
}

/**
 * A bad frame is an interrupted append only if nothing valid follows it; a complete, checksummed
 * frame further on means the damage is in the middle (e.g. a corrupted length field).
 */
function tornUnlessFollowed(buf: Buffer, offset: number, reason: string): FrameRead {
  for (
    let p = buf.indexOf(FRAME_MAGIC, offset + 1);
    p >= 0 && p + FRAME_HEADER <= buf.length;
    p = buf.indexOf(FRAME_MAGIC, p + 1)
  ) {
    const len = buf.readUInt32LE(p + 1);
    const end = p + FRAME_HEADER + len;
    if (
      len <= MAX_FRAME &&
      end <= buf.length &&
      crc32(buf.subarray(p + FRAME_HEADER, end)) === buf.readUInt32LE(p + 5)
    ) {
      return { kind: 'corrupt', reason: `${reason}, but a valid frame follows at offset ${p}` };
    }
  }
  return { kind: 'torn', reason };
}

function allZero(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}
