/**
 * @module shard/store/vector-slab — recovery copies the vectors it decodes into shared buffers
 * that grow (from 64 KiB, each next one as large as all before it, up to 256 MiB) instead of one
 * ArrayBuffer per vector, so V8's external-memory accounting starts a handful of full collections
 * rather than thousands; why, and what a buffer costs after a restart: docs/architecture-notes.md
 * ("Vector buffers").
 */

const FIRST_SLAB_BYTES = 64 * 1024;
const MAX_SLAB_BYTES = 256 * 1024 * 1024;

export class VectorSlab {
  #buf = new ArrayBuffer(0);
  #used = 0;
  /** Bytes of all buffers handed out so far. */
  #total = 0;

  /** A Float32Array holding a copy of `bytes` (little-endian float32, as stored). */
  copy(bytes: Uint8Array): Float32Array {
    const n = bytes.byteLength;
    if (n % 4 !== 0)
      throw new Error(`a stored vector has ${n} bytes, not a whole number of float32`);
    if (this.#used + n > this.#buf.byteLength) {
      this.#buf = new ArrayBuffer(
        Math.max(n, Math.min(MAX_SLAB_BYTES, Math.max(FIRST_SLAB_BYTES, this.#total))),
      );
      this.#total += this.#buf.byteLength;
      this.#used = 0;
    }
    new Uint8Array(this.#buf, this.#used, n).set(bytes);
    const v = new Float32Array(this.#buf, this.#used, n / 4);
    this.#used += n;
    return v;
  }
}
