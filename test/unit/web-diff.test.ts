/** The dashboard's word diff (web/src/diff.ts): the words two contradicting texts do not share are marked. */
import { describe, expect, it } from 'vitest';
import { diffWords } from '../../web/src/diff.ts';

const marked = (parts: Array<{ text: string; marked: boolean }>): string[] =>
  parts.filter((p) => p.marked).map((p) => p.text);

describe('diffWords', () => {
  it('marks the words each side does not share, ignoring case and punctuation', () => {
    const d = diffWords('Ada never drinks coffee.', 'ada drinks Coffee every morning');
    expect(marked(d.a)).toEqual(['never']);
    expect(marked(d.b)).toEqual(['every', 'morning']);
  });

  it('marks a changed number and keeps every character of both texts', () => {
    const a = 'The chess club has 32 members.';
    const b = 'The chess club has  48 paying adult junior members.';
    const d = diffWords(a, b);
    expect(marked(d.a)).toEqual(['32']);
    expect(marked(d.b)).toEqual(['48', 'paying', 'adult', 'junior']);
    expect(d.a.map((p) => p.text).join('')).toBe(a);
    expect(d.b.map((p) => p.text).join('')).toBe(b);
  });

  it('marks nothing between equal texts, and everything against an empty one', () => {
    expect(marked(diffWords('same words here', 'Same words here!').a)).toEqual([]);
    expect(marked(diffWords('', 'all new').b)).toEqual(['all', 'new']);
  });
});
