/**
 * @module shard/store/vector-slab — recovery copies the vectors it decodes into shared buffers
 * instead of one ArrayBuffer per vector, and the buffers grow: the first holds 64 KiB (about 42
 * vectors of 384 dimensions), each next one as much as all before it together, up to 256 MiB.
 *
 * Why: V8 counts every ArrayBuffer's bytes as external memory, and each 64 MiB of it allocated
 * since the last full collection starts another one. A million small buffers made recovery spend
 * most of its time collecting; a million vectors in 64 KiB buffers (1.5 GB) still started about
 * 23 full collections, each over a larger heap. Growing buffers start a handful. A buffer's unused
 * tail costs address space only: the allocator hands out fresh zero pages, which the process
 * takes on when they are first written.
 *
 * A buffer is freed when its last vector is dropped, so after a restart a workspace whose recovered
 * memories are mostly revised or forgotten can hold on to buffers until the next restart packs
 * them again (at worst one 256 MiB buffer for one surviving vector). Replies never carry a view:
 * `view()` copies embeddings before they leave the shard.
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
    if (n % 4 !== 0) throw new Error(`a stored vector has ${n} bytes, not a whole number of float32`);
    if (this.#used + n > this.#buf.byteLength) {
      this.#buf = new ArrayBuffer(Math.max(n, Math.min(MAX_SLAB_BYTES, Math.max(FIRST_SLAB_BYTES, this.#total))));
      this.#total += this.#buf.byteLength;
      this.#used = 0;
    }
    new Uint8Array(this.#buf, this.#used, n).set(bytes);
    const v = new Float32Array(this.#buf, this.#used, n / 4);
    this.#used += n;
    return v;
  }
}
