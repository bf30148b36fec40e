/**
 * @module shard/store/vector-slab — recovery copies the vectors it decodes into shared 64 KiB
 * buffers (about 42 vectors of 384 dimensions each) instead of one ArrayBuffer per vector. V8
 * counts every ArrayBuffer's bytes as external memory and collects garbage as that grows, so a
 * million small buffers made recovery spend most of its time in full collections; views into a
 * few large buffers also cost less per vector. A buffer is freed when its last vector is dropped,
 * so after a restart a workspace whose recovered memories are mostly revised or forgotten can keep
 * up to 64 KiB per surviving one until the next restart packs them again. Replies never carry a
 * view: `view()` copies embeddings before they leave the shard.
 */

const SLAB_BYTES = 64 * 1024;

export class VectorSlab {
  #buf = new ArrayBuffer(0);
  #used = 0;

  /** A Float32Array holding a copy of `bytes` (little-endian float32, as stored). */
  copy(bytes: Uint8Array): Float32Array {
    const n = bytes.byteLength;
    if (n % 4 !== 0) throw new Error(`a stored vector has ${n} bytes, not a whole number of float32`);
    if (this.#used + n > this.#buf.byteLength) {
      this.#buf = new ArrayBuffer(Math.max(SLAB_BYTES, n));
      this.#used = 0;
    }
    new Uint8Array(this.#buf, this.#used, n).set(bytes);
    const v = new Float32Array(this.#buf, this.#used, n / 4);
    this.#used += n;
    return v;
  }
}
