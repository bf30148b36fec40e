/**
 * @module http/parts-writer — writes a reply that comes in parts (api/json-slices) to its
 * response a slice at a time: up to 256 KiB corked into one write to the socket, a turn of the
 * event loop (the shared slice lane) every 4 ms, and a wait whenever the socket is full, so a
 * large reply neither holds the router thread nor piles up in memory behind a slow reader.
 */
import { nextSlice, SLICE_BUDGET_MS } from '../api/json-slices.ts';

/** What is written to: node:http's ServerResponse (http/listener.ts). */
export interface PartsTarget {
  readonly destroyed: boolean;
  write(chunk: string | Buffer): boolean;
  end(chunk?: string | Buffer): unknown;
  cork(): void;
  uncork(): void;
  on(event: 'drain' | 'close', cb: () => void): unknown;
  off(event: 'drain' | 'close', cb: () => void): unknown;
}

/** Bytes corked into one write to the socket (more at once made one writev of megabytes). */
const CORKED_BYTES = 256 * 1024;

/** Writes `parts` and ends the response a slice at a time, waiting whenever the socket is full. */
export async function writeParts(
  res: PartsTarget,
  parts: ReadonlyArray<string | Buffer>,
): Promise<void> {
  let sliceStart = performance.now();
  let corked = 0;
  res.cork();
  for (let i = 0; i < parts.length; i++) {
    if (res.destroyed) return;
    const part = parts[i] as string | Buffer;
    if (i === parts.length - 1) {
      res.end(part);
      return res.uncork();
    }
    const more = res.write(part);
    corked += part.length;
    if (more && corked < CORKED_BYTES) continue;
    res.uncork();
    corked = 0;
    if (!more) await drained(res);
    else if (performance.now() - sliceStart > SLICE_BUDGET_MS) await nextSlice();
    else {
      res.cork();
      continue;
    }
    sliceStart = performance.now();
    res.cork();
  }
  res.end();
  res.uncork();
}

/** Resolves once `res` can take more, or has closed. */
function drained(res: PartsTarget): Promise<void> {
  return new Promise<void>((resolve) => {
    const go = (): void => {
      res.off('drain', go);
      res.off('close', go);
      resolve();
    };
    res.on('drain', go);
    res.on('close', go);
  });
}
