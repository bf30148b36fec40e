/**
 * @module subscribe/chunker — cuts streamed text into chunks worth embedding: at a sentence end
 * (once the chunk has at least MIN_WORDS words), when MAX_WORDS words have accumulated, or when
 * the caller flushes after an idle pause. Offsets are character offsets in everything fed so far.
 */

export interface Chunk {
  text: string;
  offset: number;
}

const MIN_WORDS = 4;
const MAX_WORDS = 48;
const SENTENCE_END = /[.!?。！？]["')\]]?(\s|$)|\n/g;

export class Chunker {
  #buffer = '';
  #bufferOffset = 0;

  /** Adds text; returns the chunks it completes. */
  feed(text: string): Chunk[] {
    this.#buffer += text;
    const out: Chunk[] = [];
    for (;;) {
      const cut = this.#nextCut();
      if (cut === null) break;
      const raw = this.#buffer.slice(0, cut);
      const lead = raw.length - raw.trimStart().length;
      const chunkText = raw.trim();
      if (chunkText !== '') out.push({ text: chunkText, offset: this.#bufferOffset + lead });
      this.#buffer = this.#buffer.slice(cut);
      this.#bufferOffset += cut;
    }
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
    return out;
  }

  get pending(): boolean {
    return this.#buffer.trim() !== '';
  }

  /** A sentence end with enough words before it, but never past the MAX_WORDS-th word. */
  #nextCut(): number | null {
    const words = [...this.#buffer.matchAll(/\S+/g)];
    const last = words.length > MAX_WORDS ? (words[MAX_WORDS - 1] as RegExpMatchArray) : null;
    const wordLimit = last ? (last.index ?? 0) + last[0].length : null;
    SENTENCE_END.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = SENTENCE_END.exec(this.#buffer)) !== null) {
      const end = m.index + m[0].length;
      if (wordLimit !== null && m.index >= wordLimit) break;
      if (wordCount(this.#buffer.slice(0, end)) >= MIN_WORDS) return end;
    }
    return wordLimit;
  }
}

function wordCount(s: string): number {
  return s.match(/\S+/g)?.length ?? 0;
}
