/**
 * @module grpc/proto-writer — protobuf wire encoding into one growable Buffer: varints, fixed
 * 32- and 64-bit numbers, strings, bytes, packed floats and nested messages. Each call writes one
 * field, in call order, with the bytes protobufjs writes for the same field.
 */
import { endianness } from 'node:os';

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;
/** Protobuf floats are little-endian: on such a host a Float32Array's bytes are the wire bytes. */
const NATIVE_LE = endianness() === 'LE';

function varintSize(value: number): number {
  let n = 1;
  for (let v = value; v > 127; v = Math.floor(v / 128)) n++;
  return n;
}

export class ProtoWriter {
  #buf: Buffer;
  #pos = 0;

  constructor(capacity = 4096) {
    this.#buf = Buffer.allocUnsafe(capacity);
  }

  /** The bytes written so far (a view of the writer's buffer, not a copy). */
  finish(): Buffer {
    return this.#buf.subarray(0, this.#pos);
  }

  /** Starts over, keeping the buffer. */
  reset(): void {
    this.#pos = 0;
  }

  get capacity(): number {
    return this.#buf.length;
  }

  /** A uint32, uint64 (exact up to 2^53), enum or bool field; `value` is a non-negative integer. */
  varint(field: number, value: number): void {
    this.#tag(field, VARINT);
    this.#varint(value);
  }

  float(field: number, value: number): void {
    this.#tag(field, FIXED32);
    this.#ensure(4);
    this.#pos = this.#buf.writeFloatLE(value, this.#pos);
  }

  double(field: number, value: number): void {
    this.#tag(field, FIXED64);
    this.#ensure(8);
    this.#pos = this.#buf.writeDoubleLE(value, this.#pos);
  }

  string(field: number, value: string): void {
    this.#tag(field, LEN);
    if (value.length < 128 && this.#ascii(value)) return;
    const len = Buffer.byteLength(value);
    this.#varint(len);
    this.#ensure(len);
    this.#pos += this.#buf.write(value, this.#pos, len, 'utf8');
  }

  bytes(field: number, value: Uint8Array): void {
    this.#tag(field, LEN);
    this.#varint(value.length);
    this.#ensure(value.length);
    this.#buf.set(value, this.#pos);
    this.#pos += value.length;
  }

  /** A packed `repeated float`, copied as one block; nothing at all when it is empty. */
  packedFloats(field: number, values: Float32Array): void {
    if (values.length === 0) return;
    const len = values.length * 4;
    this.#tag(field, LEN);
    this.#varint(len);
    this.#ensure(len);
    if (NATIVE_LE) {
      this.#buf.set(new Uint8Array(values.buffer, values.byteOffset, len), this.#pos);
      this.#pos += len;
    } else {
      for (const v of values) this.#pos = this.#buf.writeFloatLE(v, this.#pos);
    }
  }

  /** A nested message: `write` fills it in; its length prefix is written afterwards. */
  message<T>(field: number, value: T, write: (w: ProtoWriter, value: T) => void): void {
    this.#tag(field, LEN);
    this.#ensure(1);
    const start = this.#pos;
    // Room for a one-byte length; a longer one moves the body along once it is known.
    this.#pos += 1;
    write(this, value);
    const len = this.#pos - start - 1;
    const extra = varintSize(len) - 1;
    if (extra > 0) {
      this.#ensure(extra);
      this.#buf.copyWithin(start + 1 + extra, start + 1, this.#pos);
      this.#pos += extra;
    }
    const end = this.#pos;
    this.#pos = start;
    this.#putVarint(len);
    this.#pos = end;
  }

  /**
   * Short ASCII strings (most keys, names and words) are copied a character at a time, which is
   * cheaper than measuring and encoding them as UTF-8. False, having written nothing, otherwise.
   */
  #ascii(value: string): boolean {
    this.#ensure(value.length + 1);
    const buf = this.#buf;
    const start = this.#pos;
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c > 127) return false;
      buf[start + 1 + i] = c;
    }
    buf[start] = value.length;
    this.#pos = start + 1 + value.length;
    return true;
  }

  #tag(field: number, wireType: number): void {
    this.#varint(field * 8 + wireType);
  }

  #varint(value: number): void {
    if (!(value >= 0))
      throw new RangeError(`protobuf varint must be a non-negative integer, got ${value}`);
    this.#ensure(10);
    this.#putVarint(value);
  }

  /** Writes at the current position, which must have room. */
  #putVarint(value: number): void {
    let v = value;
    while (v > 127) {
      this.#buf[this.#pos++] = (v & 127) | 128;
      v = Math.floor(v / 128);
    }
    this.#buf[this.#pos++] = v;
  }

  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + n));
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }
}
