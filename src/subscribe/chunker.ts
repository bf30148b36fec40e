/**
 * @module subscribe/chunker — cuts streamed text into chunks worth embedding: at a sentence end
 * (once the chunk has at least MIN_WORDS words), when MAX_WORDS words have accumulated, or when
 * the caller flushes after an idle pause. Offsets are character offsets in everything fed so far.
 * One pass over each character, whatever the feed (the scan resumes where the last feed stopped,
 * and consumed text is dropped once per feed); a feed that completes more than
 * MAX_CHUNKS_PER_FEED chunks has neighbouring chunks joined, so one feed never queues more than
 * that many embeddings and shard matches.
 */

export interface Chunk {
  text: string;
  offset: number;
}

const MIN_WORDS = 4;
const MAX_WORDS = 48;
/** Chunks one feed may produce (64 KiB of short sentences would otherwise make thousands). */
export const MAX_CHUNKS_PER_FEED = 64;

const TERMINATORS = new Set(['.', '!', '?', '。', '！', '？']);
const CLOSERS = new Set(['"', "'", ')', ']']);
/** What `\s` matches in a JavaScript regular expression. */
const SPACE = /\s/;

export class Chunker {
  #buffer = '';
  #bufferOffset = 0;
  /** Scan state of the chunk being built (it starts at buffer index 0). */
  #scan = 0;
  #words = 0;
  #inWord = false;
  /** Buffer index just past the MAX_WORDS-th word, once it has ended. */
  #limitEnd = -1;

  /** Adds text; returns the chunks it completes. */
  feed(text: string): Chunk[] {
    this.#buffer += text;
    const cuts: number[] = [];
    let start = 0;
    while (this.#scan < this.#buffer.length) {
      const cut = this.#step(start);
      if (cut === null) continue;
      cuts.push(cut);
      start = cut;
      this.#reset(cut);
    }
    const out = chunksOf(this.#buffer, this.#bufferOffset, [0, ...cuts]);
    if (start > 0) this.#consume(start);
    return out;
  }

  /** Emits whatever is buffered (after an idle pause, or on close). */
  flush(): Chunk[] {
    const raw = this.#buffer;
    const lead = raw.length - raw.trimStart().length;
    const chunkText = raw.trim();
    const out = chunkText === '' ? [] : [{ text: chunkText, offset: this.#bufferOffset + lead }];
    this.#bufferOffset += raw.length;
    this.#buffer = '';
    this.#reset(0);
    return out;
  }

  get pending(): boolean {
    return this.#buffer.trim() !== '';
  }

  /**
   * Scans one character of the chunk that starts at `start`; returns the buffer index to cut at
   * when the chunk is complete. A cut at a sentence end takes the terminator, a closing quote or
   * bracket after it, and the whitespace after that.
   */
  #step(start: number): number | null {
    const buf = this.#buffer;
    const i = this.#scan++;
    const ch = buf[i] as string;
    if (SPACE.test(ch)) {
      if (this.#inWord && this.#words === MAX_WORDS) this.#limitEnd = i;
      this.#inWord = false;
      if (ch === '\n' && this.#words >= MIN_WORDS) return i + 1;
      return null;
    }
    if (!this.#inWord) {
      // A word past the MAX_WORDS-th: cut where that one ended.
      if (this.#words === MAX_WORDS && this.#limitEnd > start) return this.#limitEnd;
      this.#inWord = true;
      this.#words += 1;
    }
    if (!TERMINATORS.has(ch) || this.#words < MIN_WORDS) return null;
    let j = i + 1;
    if (j < buf.length && CLOSERS.has(buf[j] as string)) j += 1;
    if (j === buf.length) return j;
    return SPACE.test(buf[j] as string) ? j + 1 : null;
  }

  #reset(scan: number): void {
    this.#scan = scan;
    this.#words = 0;
    this.#inWord = false;
    this.#limitEnd = -1;
  }

  /** Drops the first `n` characters of the buffer (cut into chunks already). */
  #consume(n: number): void {
    this.#buffer = this.#buffer.slice(n);
    this.#bufferOffset += n;
    this.#scan -= n;
    if (this.#limitEnd >= 0) this.#limitEnd -= n;
  }
}

/**
 * The chunks between consecutive cut positions (`bounds[0]` = 0), trimmed, with their offsets; when
 * there are more than MAX_CHUNKS_PER_FEED, each chunk spans several consecutive ones.
 */
function chunksOf(buffer: string, bufferOffset: number, bounds: readonly number[]): Chunk[] {
  const n = bounds.length - 1;
  const per = Math.max(1, Math.ceil(n / MAX_CHUNKS_PER_FEED));
  const out: Chunk[] = [];
  for (let k = 0; k < n; k += per) {
    const from = bounds[k] as number;
    const to = bounds[Math.min(n, k + per)] as number;
    const raw = buffer.slice(from, to);
    const text = raw.trim();
    if (text !== '')
      out.push({ text, offset: bufferOffset + from + (raw.length - raw.trimStart().length) });
  }
  return out;
}
