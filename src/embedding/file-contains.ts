/**
 * @module embedding/file-contains — whether a file's bytes contain a string, read 1 MiB at a time.
 * The embedder asks whether its graph is quantised per run (`DynamicQuantizeLinear`); reading the
 * whole 34 MB graph for that left a 34 MB buffer in each embedding worker until its heap was next
 * collected, which in a worker that allocates little took minutes.
 */
import { open } from 'node:fs/promises';

const CHUNK = 1 << 20;

export async function fileContains(
  path: string,
  needle: string,
  chunkBytes = CHUNK,
): Promise<boolean> {
  const want = Buffer.from(needle);
  if (want.length === 0) return true;
  const buf = Buffer.alloc(Math.max(chunkBytes, want.length * 2));
  const file = await open(path, 'r');
  try {
    // The last want.length - 1 bytes of each read are kept before the next, so a match across two reads is seen.
    let kept = 0;
    for (;;) {
      const { bytesRead } = await file.read(buf, kept, buf.length - kept, null);
      if (bytesRead === 0) return false;
      const end = kept + bytesRead;
      if (buf.subarray(0, end).includes(want)) return true;
      kept = Math.min(want.length - 1, end);
      buf.copy(buf, 0, end - kept, end);
    }
  } finally {
    await file.close();
  }
}
