/**
 * @module native-bench/lib/embed-cache — embeddings of evaluation texts by the configured model,
 * computed once and kept on disk (`.bench/embeddings/`, one append-only file per model: a 20-byte
 * SHA-1 of the text, then its float32 vector), so an in-process evaluation reads the vectors the
 * server would compute (the model embeds one text a run: a vector never depends on the texts beside
 * it) without running the model again.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DEFAULTS } from '../../src/config/index.ts';
import { createOnnxEmbedder } from '../../src/embedding/onnx-embedder.ts';

const KEY_BYTES = 20;

export class EmbedCache {
  readonly #vectors = new Map<string, Float32Array>();
  readonly #file: string;

  constructor(
    readonly dim: number,
    readonly modelDir: string = DEFAULTS.FLASHBULB_MODEL_DIR,
    dir = resolve('.bench/embeddings'),
  ) {
    mkdirSync(dir, { recursive: true });
    const centre = join(modelDir, 'flashbulb_centre.json');
    const tag = createHash('sha1')
      .update(existsSync(centre) ? readFileSync(centre) : '')
      .digest('hex')
      .slice(0, 8);
    this.#file = join(dir, `${basename(modelDir)}-${tag}-${dim}.bin`);
    if (!existsSync(this.#file)) return;
    const buf = readFileSync(this.#file);
    const row = KEY_BYTES + dim * 4;
    for (let at = 0; at + row <= buf.length; at += row) {
      const key = buf.subarray(at, at + KEY_BYTES).toString('hex');
      const v = new Float32Array(dim);
      new Uint8Array(v.buffer).set(buf.subarray(at + KEY_BYTES, at + row));
      this.#vectors.set(key, v);
    }
  }

  /** The vectors of `texts`, in order; the ones not on disk are embedded (and written) first. */
  async vectors(
    texts: readonly string[],
    progress?: (done: number, of: number) => void,
  ): Promise<Float32Array[]> {
    const keys = texts.map(keyOf);
    const missing = [...new Set(texts.filter((_, i) => !this.#vectors.has(keys[i] as string)))];
    if (missing.length > 0) {
      const model = await createOnnxEmbedder({ modelDir: this.modelDir, threads: 1 });
      try {
        for (let i = 0; i < missing.length; i += 64) {
          const part = missing.slice(i, i + 64);
          const flat = await model.embedBatch(part);
          const rows: Buffer[] = [];
          part.forEach((t, j) => {
            const v = flat.slice(j * this.dim, (j + 1) * this.dim);
            const key = keyOf(t);
            this.#vectors.set(key, v);
            rows.push(Buffer.from(key, 'hex'), Buffer.from(v.buffer, v.byteOffset, v.byteLength));
          });
          appendFileSync(this.#file, Buffer.concat(rows));
          progress?.(Math.min(i + 64, missing.length), missing.length);
        }
      } finally {
        await model.close();
      }
    }
    return keys.map((k) => this.#vectors.get(k) as Float32Array);
  }
}

function keyOf(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}
