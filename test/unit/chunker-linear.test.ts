/**
 * Issue 12, defect 3: the chunker is one pass over the text (it used to rescan its whole buffer
 * for every cut, quadratic in the chunks a feed completes), and one feed completes at most
 * MAX_CHUNKS_PER_FEED chunks, so a 64 KiB feed cannot queue thousands of embeddings. The cuts are
 * those of the original rescanning chunker, kept here as the reference, on any text and any
 * split of it into feeds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Chunker, MAX_CHUNKS_PER_FEED, type Chunk } from '../../src/subscribe/chunker.ts';

/** The chunker before the fix, verbatim in behaviour: rescans the buffer for each cut. */
class ReferenceChunker {
  #buffer = '';
  #bufferOffset = 0;

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

  flush(): Chunk[] {
    const raw = this.#buffer;
    const lead = raw.length - raw.trimStart().length;
    const chunkText = raw.trim();
    const out = chunkText === '' ? [] : [{ text: chunkText, offset: this.#bufferOffset + lead }];
    this.#bufferOffset += raw.length;
    this.#buffer = '';
    return out;
  }

  #nextCut(): number | null {
    const words = [...this.#buffer.matchAll(/\S+/g)];
    const last = words.length > 48 ? (words[47] as RegExpMatchArray) : null;
    const wordLimit = last ? (last.index ?? 0) + last[0].length : null;
    const re = /[.!?。！？]["')\]]?(\s|$)|\n/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(this.#buffer)) !== null) {
      const end = m.index + m[0].length;
      if (wordLimit !== null && m.index >= wordLimit) break;
      if ((this.#buffer.slice(0, end).match(/\S+/g)?.length ?? 0) >= 4) return end;
    }
    return wordLimit;
  }
}

/** Text made of words, sentence ends, closers, newlines and spaces: what the cut rules look at. */
const textPiece = fc.constantFrom(
  'alpha',
  'b',
  'gamma',
  '3.14',
  '.',
  '!',
  '?',
  '。',
  '"',
  ')',
  ' ',
  ' ',
  ' ',
  '\n',
  '\t',
  'word.',
  'end!"',
  'x)',
);
const text = fc.array(textPiece, { maxLength: 300 }).map((parts) => parts.join(''));

function run(
  c: { feed(t: string): Chunk[]; flush(): Chunk[] },
  pieces: readonly string[],
): Chunk[][] {
  return [...pieces.map((p) => c.feed(p)), c.flush()];
}

describe('Chunker: linear, bounded per feed', () => {
  it('cuts exactly as the reference chunker, for any text split into any feeds', () => {
    fc.assert(
      fc.property(text, fc.array(fc.nat(40), { maxLength: 20 }), (t, splits) => {
        const pieces: string[] = [];
        let at = 0;
        for (const n of splits) {
          pieces.push(t.slice(at, at + n));
          at += n;
        }
        pieces.push(t.slice(at));
        expect(run(new Chunker(), pieces)).toEqual(run(new ReferenceChunker(), pieces));
      }),
      { numRuns: 300 },
    );
  });

  it(`a 64 KiB feed of short sentences makes at most ${MAX_CHUNKS_PER_FEED} chunks covering all of it`, () => {
    const fed = 'Go now. '.repeat(8000);
    const c = new Chunker();
    const out = [...c.feed(fed), ...c.flush()];
    expect(out.length).toBeLessThanOrEqual(MAX_CHUNKS_PER_FEED);
    expect(out.length).toBeGreaterThan(MAX_CHUNKS_PER_FEED / 2);
    for (const ch of out) expect(fed.slice(ch.offset, ch.offset + ch.text.length)).toBe(ch.text);
    expect(out.map((ch) => ch.text).join(' ')).toBe(fed.trim());
  });

  it('a feed within the bound is cut sentence by sentence as before', () => {
    const fed = 'Go now, right now. '.repeat(MAX_CHUNKS_PER_FEED);
    const out = new Chunker().feed(fed);
    expect(out).toHaveLength(MAX_CHUNKS_PER_FEED);
    expect(new Set(out.map((ch) => ch.text))).toEqual(new Set(['Go now, right now.']));
  });

  it('chunks 1 MiB of short sentences in one feed (the rescanning chunker would not finish)', () => {
    const fed = 'Go now. '.repeat(128 * 1024);
    const c = new Chunker();
    const out = c.feed(fed);
    expect(out.length).toBeLessThanOrEqual(MAX_CHUNKS_PER_FEED);
    expect(out.at(-1)?.offset).toBeGreaterThan(fed.length - 20_000);
  });
});
