/**
 * @module http/ndjson — newline-delimited JSON in both directions: a response streamed from an
 * async iterable of text with back-pressure (the next chunk is produced only once the socket has
 * taken the previous one), and a request body split into decoded, validated lines.
 */
import { FlashbulbError } from '../errors/codes.ts';
import type { Validator } from '../api/compile.ts';
import { repairJsonText, unicodeProblem, wellFormedJson } from '../model/unicode.ts';
import type { OutStream, StreamResponse } from './exchange.ts';

/**
 * A 200 NDJSON response fed by `chunks`. A failure after the first byte cannot change the status,
 * so it ends the stream with one `{"error_code", "message"}` line (never a valid data line).
 */
export function ndjsonStream(chunks: AsyncIterable<string>): StreamResponse {
  return {
    kind: 'stream',
    status: 200,
    headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache' },
    start: (stream) => void pump(stream, chunks[Symbol.asyncIterator]()),
  };
}

async function pump(stream: OutStream, it: AsyncIterator<string>): Promise<void> {
  let writable: (() => void) | null = null;
  stream.onWritable(() => writable?.());
  stream.onClose(() => writable?.());
  try {
    for (;;) {
      const next = await it.next();
      if (next.done || stream.closed) break;
      if (!stream.write(repairJsonText(next.value)))
        await new Promise<void>((resolve) => (writable = resolve));
      writable = null;
      if (stream.closed) break;
    }
  } catch (err) {
    if (!(err instanceof FlashbulbError)) console.error('NDJSON stream failed:', err);
    const e =
      err instanceof FlashbulbError ? err : new FlashbulbError('internal_error', 'internal error');
    stream.write(`${wellFormedJson({ error_code: e.code, message: e.message })}\n`);
  } finally {
    await it.return?.();
    stream.end();
  }
}

/** Splits an NDJSON body into lines numbered from `firstLine`; blank lines are skipped. */
export function ndjsonLines<T>(
  body: Buffer,
  firstLine: number,
  validate: Validator<T>,
): Array<{ line: number; value: T } | { line: number; error: string }> {
  const text = body.toString('utf8');
  const out: Array<{ line: number; value: T } | { line: number; error: string }> = [];
  let line = firstLine;
  for (const raw of text.split('\n')) {
    const n = line++;
    if (raw.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      out.push({ line: n, error: `not valid JSON: ${(err as Error).message}` });
      continue;
    }
    const text = unicodeProblem('line', parsed);
    if (text !== null) {
      out.push({ line: n, error: text });
      continue;
    }
    try {
      out.push({ line: n, value: validate(parsed) });
    } catch (err) {
      out.push({ line: n, error: (err as Error).message });
    }
  }
  return out;
}
