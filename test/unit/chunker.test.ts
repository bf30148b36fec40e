/**
 * The subscription chunker (DESIGN.md 8): fed text is cut at sentence ends once a chunk has at
 * least 4 words, after 48 words, or when flushed after an idle pause; every chunk carries its
 * character offset in everything fed so far (leading whitespace is not part of a chunk).
 */
import { describe, expect, it } from 'vitest';
import { Chunker, type Chunk } from '../../src/subscribe/chunker.ts';

const words = (n: number, prefix = 'w'): string =>
  Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`).join(' ');
const wordCount = (s: string): number => s.match(/\S+/g)?.length ?? 0;

/** Every chunk's text must sit at its offset in the concatenation of everything fed. */
function expectOffsetsConsistent(fed: string, chunks: readonly Chunk[]): void {
  for (const c of chunks)
    expect(fed.slice(c.offset, c.offset + c.text.length), `chunk at ${c.offset}`).toBe(c.text);
}

describe('Chunker: sentence cuts', () => {
  it('cuts at a sentence end followed by whitespace once the chunk has 4 words', () => {
    const c = new Chunker();
    expect(c.feed('The budget meeting moved. And then')).toEqual([
      { text: 'The budget meeting moved.', offset: 0 },
    ]);
    expect(c.pending).toBe(true);
  });

  it('a sentence end at the end of what was fed counts as a cut', () => {
    const c = new Chunker();
    expect(c.feed('The budget meeting moved.')).toEqual([
      { text: 'The budget meeting moved.', offset: 0 },
    ]);
    expect(c.pending).toBe(false);
    expect(c.flush()).toEqual([]);
  });

  it('does not cut a sentence of fewer than 4 words; it joins the next sentence', () => {
    const c = new Chunker();
    expect(c.feed('Hi there. ')).toEqual([]);
    expect(c.pending).toBe(true);
    expect(c.feed('Three words only! ')).toEqual([
      { text: 'Hi there. Three words only!', offset: 0 },
    ]);
    // Exactly three words, on their own, never cut.
    const d = new Chunker();
    expect(d.feed('One two three. ')).toEqual([]);
    expect(d.feed('four. ')).toEqual([{ text: 'One two three. four.', offset: 0 }]);
  });

  it('recognises ! ? and closing quotes/brackets after the terminator, and newlines', () => {
    const c = new Chunker();
    const fed =
      'Is this the final answer? She said "we ship it today." (Then it was done.) Fourth line has no end\nand a fifth here';
    const out = c.feed(fed);
    expect(out.map((x) => x.text)).toEqual([
      'Is this the final answer?',
      'She said "we ship it today."',
      '(Then it was done.)',
      'Fourth line has no end',
    ]);
    expectOffsetsConsistent(fed, out);
    expect(c.flush()).toEqual([{ text: 'and a fifth here', offset: fed.indexOf('and a fifth') }]);
  });

  it('does not cut inside numbers or abbreviations without a following space', () => {
    const c = new Chunker();
    expect(c.feed('The value of pi is 3.14159 roughly')).toEqual([]);
    expect(c.flush()).toEqual([{ text: 'The value of pi is 3.14159 roughly', offset: 0 }]);
  });

  it('cuts several sentences from one feed, in order, with their offsets', () => {
    const c = new Chunker();
    const fed = 'Alpha beta gamma delta. Epsilon zeta eta theta! Iota kappa lambda mu? tail words';
    const out = c.feed(fed);
    expect(out).toEqual([
      { text: 'Alpha beta gamma delta.', offset: 0 },
      { text: 'Epsilon zeta eta theta!', offset: 24 },
      { text: 'Iota kappa lambda mu?', offset: 48 },
    ]);
    expectOffsetsConsistent(fed, out);
    expect(c.flush()).toEqual([{ text: 'tail words', offset: 70 }]);
  });
});

describe('Chunker: the 48-word cut', () => {
  it('does not cut at exactly 48 words (the last word may still be growing)', () => {
    const c = new Chunker();
    expect(c.feed(words(48))).toEqual([]);
    expect(c.pending).toBe(true);
  });

  it('cuts after the 48th word once a 49th starts, keeping the rest buffered', () => {
    const c = new Chunker();
    const fed = words(49);
    const out = c.feed(fed);
    expect(out).toEqual([{ text: words(48), offset: 0 }]);
    expect(c.flush()).toEqual([{ text: 'w49', offset: fed.indexOf('w49') }]);
  });

  it('cuts a long run without sentence ends into 48-word chunks', () => {
    const c = new Chunker();
    const fed = words(150);
    const out = [...c.feed(fed), ...c.flush()];
    expect(out.map((x) => wordCount(x.text))).toEqual([48, 48, 48, 6]);
    expectOffsetsConsistent(fed, out);
    expect(out.map((x) => x.text).join(' ')).toBe(fed);
  });

  it('the 48-word cut also applies when text arrives word by word', () => {
    const c = new Chunker();
    const all = words(100).split(' ');
    let fed = '';
    const out: Chunk[] = [];
    all.forEach((w, i) => {
      const piece = i === 0 ? w : ` ${w}`;
      fed += piece;
      out.push(...c.feed(piece));
    });
    out.push(...c.flush());
    expect(out.map((x) => wordCount(x.text))).toEqual([48, 48, 4]);
    expectOffsetsConsistent(fed, out);
  });

  it('no chunk is longer than 48 words, even when a long sentence arrives in one feed', () => {
    // A 60-word sentence fed at once must be cut like the same words fed one by one: 48 + 12.
    // (Otherwise a chunk grows without bound and the embedder truncates what it cannot see.)
    const sentence = `${words(59)} w60.`;
    const whole = new Chunker();
    const a = [...whole.feed(sentence), ...whole.flush()];
    const piecewise = new Chunker();
    const b: Chunk[] = [];
    sentence.split(' ').forEach((w, i) => {
      b.push(...piecewise.feed(i === 0 ? w : ` ${w}`));
    });
    b.push(...piecewise.flush());
    expect(b.map((x) => wordCount(x.text))).toEqual([48, 12]);
    expect(a.map((x) => wordCount(x.text))).toEqual([48, 12]);
    expect(a).toEqual(b);
  });
});

describe('Chunker: flush, offsets and whitespace', () => {
  it('flush emits whatever is buffered, trimmed, and empties the buffer', () => {
    const c = new Chunker();
    expect(c.feed('no sentence end here')).toEqual([]);
    expect(c.flush()).toEqual([{ text: 'no sentence end here', offset: 0 }]);
    expect(c.pending).toBe(false);
    expect(c.flush()).toEqual([]);
  });

  it('flush of only whitespace emits nothing but still advances the offset', () => {
    const c = new Chunker();
    expect(c.feed('   \t ')).toEqual([]);
    expect(c.pending).toBe(false);
    expect(c.flush()).toEqual([]);
    expect(c.feed('After the gap we continue.')).toEqual([
      { text: 'After the gap we continue.', offset: 5 },
    ]);
  });

  it('offsets count everything fed so far across feeds and flushes', () => {
    const c = new Chunker();
    const a = 'The quarterly budget review is due. ';
    const b = 'Marketing will present the launch plan.';
    const d = ' and then';
    expect(c.feed(a)).toEqual([{ text: 'The quarterly budget review is due.', offset: 0 }]);
    expect(c.feed(b)).toEqual([
      { text: 'Marketing will present the launch plan.', offset: a.length },
    ]);
    expect(c.feed(d)).toEqual([]);
    expect(c.flush()).toEqual([{ text: 'and then', offset: a.length + b.length + 1 }]);
    const e = 'Later text arrives after a flush.';
    expect(c.feed(e)).toEqual([{ text: e, offset: a.length + b.length + d.length }]);
  });

  it('a sentence split across feeds keeps the offset of its start', () => {
    const c = new Chunker();
    expect(c.feed('Intro words go here. The first part of')).toEqual([
      { text: 'Intro words go here.', offset: 0 },
    ]);
    expect(c.feed(' a sentence ends here. More')).toEqual([
      { text: 'The first part of a sentence ends here.', offset: 21 },
    ]);
    expect(c.flush()).toEqual([{ text: 'More', offset: 61 }]);
  });

  it('leading whitespace is skipped in the text and counted in the offset', () => {
    const c = new Chunker();
    const fed = '   \n\n  Hello there my dear friend.   Second one is right here.';
    const out = c.feed(fed);
    expect(out).toEqual([
      { text: 'Hello there my dear friend.', offset: fed.indexOf('Hello') },
      { text: 'Second one is right here.', offset: fed.indexOf('Second') },
    ]);
    expectOffsetsConsistent(fed, out);
  });

  it('random splits of the same text give chunks consistent with their offsets', () => {
    const text =
      'The rollout starts on Monday morning. Engineers will watch the error budget closely! ' +
      'If latency rises, we pause the deploy and page the on-call engineer? ' +
      `${words(70, 'x')} and finally a closing remark without a full stop`;
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 20; trial++) {
      const c = new Chunker();
      const out: Chunk[] = [];
      let i = 0;
      while (i < text.length) {
        const n = 1 + Math.floor(rand() * 30);
        out.push(...c.feed(text.slice(i, i + n)));
        i += n;
      }
      out.push(...c.flush());
      expectOffsetsConsistent(text, out);
      // Offsets strictly increase and chunks never overlap.
      for (let k = 1; k < out.length; k++) {
        const prev = out[k - 1] as Chunk;
        expect((out[k] as Chunk).offset).toBeGreaterThanOrEqual(prev.offset + prev.text.length);
      }
      // Nothing is lost: the chunks together hold every word.
      expect(
        out
          .map((x) => x.text)
          .join(' ')
          .split(/\s+/),
      ).toEqual(text.split(/\s+/));
      for (const x of out) expect(wordCount(x.text)).toBeLessThanOrEqual(48);
    }
  });
});
