/** @module embedding/embedder — what the service needs from an embedding model. */

export interface Embedder {
  /** Name shown in logs and health ("hash", "bge-small-en-v1.5"). */
  readonly name: string;
  readonly dim: number;
  /** Embeds texts into one n×dim buffer of L2-normalised rows. */
  embed(texts: readonly string[]): Promise<Float32Array>;
  close(): Promise<void>;
}

/** Row `i` of an n×dim buffer, as its own transferable Float32Array. */
export function row(buf: Float32Array, i: number, dim: number): Float32Array {
  return buf.slice(i * dim, (i + 1) * dim);
}
