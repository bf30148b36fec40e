/**
 * analysis/lexicon-tables and analysis/lexicon over a tiny WordNet written here in the database's
 * own line formats: the parsed relations survive packing, and the packed tables move to another
 * thread by transfer (their buffers detached from the sender: nothing is copied or rebuilt).
 */
import { describe, expect, it } from 'vitest';
import { buildTables, lexiconOf, type WordNetFiles } from '../../src/analysis/lexicon.ts';
import { transferList } from '../../src/analysis/lexicon-tables.ts';

const FILES: WordNetFiles = {
  noun: {
    index: [
      'person n 1 0 1 0 00000100',
      'woman n 1 1 @ 1 0 00000200',
      'lady n 1 1 @ 1 0 00000250',
    ].join('\n'),
    data: [
      '00000100 03 n 01 person 0 000 | a human being',
      '00000200 18 n 01 woman 0 001 @ 00000100 n 0000 | an adult female person',
      '00000250 18 n 01 lady 0 001 @ 00000200 n 0000 | a polite name for a woman',
    ].join('\n'),
  },
  verb: { index: '', data: '' },
  adj: {
    index: [
      'hot a 1 1 ! 1 0 00000300',
      'cold a 1 1 ! 1 0 00000400',
      'scalding a 1 1 & 1 0 00000500',
    ].join('\n'),
    data: [
      '00000300 00 a 01 hot 0 001 ! 00000400 a 0101 | high in temperature',
      '00000400 00 a 01 cold 0 001 ! 00000300 a 0101 | low in temperature',
      '00000500 00 s 01 scalding 0 001 & 00000300 a 0000 | hot enough to burn',
    ].join('\n'),
  },
  adv: { index: '', data: '' },
};

describe('packed WordNet tables', () => {
  it('keep lemmas, hypernyms, antonyms and similar-to heads', () => {
    const lx = lexiconOf(buildTables(FILES));
    expect(lx.lemmas('women')).toContain('woman');
    expect(lx.covers('person', 'lady')).toBe(true);
    expect(lx.covers('lady', 'person')).toBe(false);
    expect(lx.near('lady', 'woman')).toBe(true);
    expect(lx.antonyms('hot', 'cold')).toBe(true);
    expect(lx.antonyms('scalding', 'cold')).toBe(true);
    expect(lx.antonyms('scalding', 'hot')).toBe(false);
    expect(lx.covers('person', 'unknownword')).toBe(false);
  });

  it('move to another thread by transfer and answer the same there', () => {
    const tables = buildTables(FILES);
    const moved = structuredClone(tables, { transfer: transferList(tables) });
    expect(tables.senses.length).toBe(0);
    expect(tables.hypernyms.values.length).toBe(0);
    const lx = lexiconOf(moved);
    expect(lx.covers('person', 'woman')).toBe(true);
    expect(lx.antonyms('cold', 'scalding')).toBe(true);
  });
});
