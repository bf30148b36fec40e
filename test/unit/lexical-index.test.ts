/**
 * The lexical index (shard/index/lexical.ts) and its tokenizer: tokens, BM25 against values computed
 * by hand, the match share, updates on replace and remove, forgotten terms leaving the dictionary.
 */
import { describe, expect, it } from 'vitest';
import { BM25_B, BM25_K1, LexicalIndex, type LexicalDoc } from '../../src/shard/index/lexical.ts';
import { oneEditApart, TYPO_DISCOUNT } from '../../src/shard/index/typos.ts';
import { stem, tokenize } from '../../src/shard/index/tokenize.ts';

const doc = (content: string, extra: Partial<LexicalDoc> = {}): LexicalDoc => ({
  content,
  entityId: null,
  context: {},
  ...extra,
});

describe('tokenize', () => {
  it('lower-cases, drops stop words and possessives, keeps names, numbers and decimals', () => {
    expect(tokenize("What did Caroline's sister pay? $1,250.50 on 8 May 2023, v3.5")).toEqual([
      'carolin',
      'sister',
      'pay',
      '1250.50',
      '8',
      '2023',
      'v3.5',
    ]);
  });

  it('stems the common forms of a word to one key, and leaves short words alone', () => {
    for (const group of [
      ['paint', 'paints', 'painted', 'painting'],
      ['run', 'runs', 'running'],
      ['bake', 'baked', 'baking'],
      ['adoption', 'adoptions'],
      ['camp', 'camping', 'camped'],
    ]) {
      expect(new Set(group.map(stem)).size, group.join(',')).toBe(1);
    }
    expect(stem('bus')).toBe('bus');
    expect(stem('glass')).toBe('glass');
    expect(stem('stories')).toBe('story');
  });

  it('splits scripts written without spaces into bigrams and keeps other scripts whole', () => {
    expect(tokenize('東京タワー')).toEqual(['東京', '京タ', 'タワ', 'ワー']);
    expect(tokenize('Zürich Straße')).toEqual(['zürich', 'straße']);
  });
});

describe('BM25', () => {
  const idx = new LexicalIndex();
  idx.add('a', doc('apple banana apple'));
  idx.add('b', doc('banana cherry'));
  idx.add('c', doc('cherry durian elderberry fig'));

  it('scores match the formula computed by hand', () => {
    const n = 3;
    const avg = (3 + 2 + 4) / 3;
    const idf = (df: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));
    const part = (tf: number, len: number): number =>
      (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * len) / avg));
    const hits = idx.search(idx.query('apple banana'), 10);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b']);
    expect(hits[0]?.score).toBeCloseTo(idf(1) * part(2, 3) + idf(2) * part(1, 3), 9);
    expect(hits[1]?.score).toBeCloseTo(idf(2) * part(1, 2), 9);
  });

  it('the match is the IDF-weighted share of the query terms a memory holds; unknown terms count against it', () => {
    const n = 3;
    const idf = (df: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));
    const scores = idx.score(idx.query('apple cherry zebra'));
    const total = idf(1) + idf(2) + idf(0);
    expect(scores.norm('a')).toBeCloseTo(idf(1) / total, 9);
    expect(scores.norm('b')).toBeCloseTo(idf(2) / total, 9);
    expect(scores.norm('nope')).toBe(0);
    expect(idx.score(idx.query('banana apple')).norm('a')).toBeCloseTo(1, 9);
  });

  it('reading scores after another query ran is an error, not a wrong answer', () => {
    const first = idx.score(idx.query('apple'));
    idx.score(idx.query('cherry'));
    expect(() => first.norm('a')).toThrow(/another query/);
  });

  it('filters during the search and returns at most k, best first', () => {
    expect(idx.search(idx.query('banana cherry'), 1).map((h) => h.id)).toEqual(['b']);
    expect(
      idx
        .search(idx.query('banana cherry'), 5, (id) => id !== 'b')
        .map((h) => h.id)
        .sort(),
    ).toEqual(['a', 'c']);
  });

  it('minor fields (entity, context strings) are searchable at a lower weight than content', () => {
    const i = new LexicalIndex();
    i.add('content', doc('meeting with zanzibar team'));
    i.add('entity', doc('meeting notes', { entityId: 'zanzibar' }));
    i.add(
      'context',
      doc('meeting notes', { context: { place: 'zanzibar', nested: { deep: ['harbour'] } } }),
    );
    const hits = i.search(i.query('zanzibar'), 5);
    expect(hits[0]?.id).toBe('content');
    expect(hits.map((h) => h.id).sort()).toEqual(['content', 'context', 'entity']);
    expect(i.search(i.query('harbour'), 5).map((h) => h.id)).toEqual(['context']);
  });

  it('a speaker is a minor field: it scores as the same name written in the context', () => {
    const i = new LexicalIndex();
    i.add('speaker', doc('we met at noon', { speaker: 'Caroline' }));
    i.add('context', doc('we met at noon', { context: { speaker: 'Caroline' } }));
    i.add('nobody', doc('we met at noon'));
    const hits = i.search(i.query('Caroline'), 5);
    expect(hits.map((h) => h.id).sort()).toEqual(['context', 'speaker']);
    expect(hits[0]?.norm).toBeCloseTo(hits[1]?.norm ?? -1, 12);
  });
});

describe('typos (a recall query matches indexed words one edit from a cue word, at a discount)', () => {
  const idx = new LexicalIndex();
  idx.add('right', doc('joined the support group downtown'));
  idx.add('typo', doc('joined the suport group downtown'));
  idx.add('both', doc('support and suport, both spellings'));
  idx.add('swap', doc('a supprot letter'));
  idx.add('other', doc('a quiet evening at home'));
  idx.add('short', doc('my cat sat'));
  const n = 6;
  const idf = (df: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));

  it('without the option nothing changes: a misspelled memory shares nothing with the cue word', () => {
    expect(idx.score(idx.query('support')).norm('typo')).toBe(0);
    expect(idx.query('support').terms.map((t) => t.term)).toEqual(['support']);
  });

  it('a memory holding the word one typo away gets the discount of the cue word, capped by the rarer IDF', () => {
    const q = idx.query('support', { typos: true });
    expect(q.terms.map((t) => t.term).sort()).toEqual(['support', 'suport', 'supprot'].sort());
    expect(q.idfSum).toBeCloseTo(idf(2), 9);
    const scores = idx.score(q);
    expect(scores.norm('right')).toBeCloseTo(1, 9);
    expect(scores.norm('typo')).toBeCloseTo(TYPO_DISCOUNT, 9); // min(idf(support), idf(suport)) = idf(support)
    expect(scores.norm('swap')).toBeCloseTo(TYPO_DISCOUNT, 9);
    expect(scores.norm('other')).toBe(0);
    expect(
      idx
        .search(q, 10)
        .map((h) => h.id)
        .slice(0, 2)
        .sort(),
    ).toEqual(['both', 'right']);
  });

  it('a memory is credited once per cue word (the word itself before its misspelling), in the share and in a union', () => {
    const scores = idx.score(idx.query('support', { typos: true }));
    expect(scores.norm('both')).toBeCloseTo(1, 9);
    expect(scores.union(['typo', 'swap'])).toBeCloseTo(TYPO_DISCOUNT, 9);
    expect(scores.union(['typo', 'right'])).toBeCloseTo(1, 9);
  });

  it('a cue word no memory holds still counts against the share, and finds its typo at the discount of the rarer word', () => {
    const q = idx.query('supportt', { typos: true });
    expect(q.terms.map((t) => t.term)).toEqual(['support']);
    expect(q.terms[0]?.idf).toBeCloseTo(TYPO_DISCOUNT * idf(2), 9);
    expect(q.idfSum).toBeCloseTo(idf(0), 9);
  });

  it('words under five letters, and numbers, match only themselves', () => {
    expect(idx.query('cap hat', { typos: true }).terms).toEqual([]);
    expect(idx.query('12345', { typos: true }).terms).toEqual([]);
  });

  it('a cue word asked before still finds misspellings written after it, and none that were removed', () => {
    const live = new LexicalIndex();
    live.add('a', doc('the garden party'));
    live.add('b', doc('a garedn full of roses'));
    expect(live.query('garden', { typos: true }).terms.map((t) => t.term)).toEqual([
      'garden',
      'garedn',
    ]);
    live.add('c', doc('the gardenn gate'));
    live.add('d', doc('a harden steel blade'));
    expect(live.query('garden', { typos: true }).terms.map((t) => t.term)).toEqual([
      'garden',
      'gardenn',
      'garedn',
      'harden',
    ]);
    live.remove('b');
    expect(live.query('garden', { typos: true }).terms.map((t) => t.term)).toEqual([
      'garden',
      'gardenn',
      'harden',
    ]);
    live.add('e', doc('garedn again'));
    expect(live.query('garden', { typos: true }).terms.map((t) => t.term)).toEqual([
      'garden',
      'gardenn',
      'garedn',
      'harden',
    ]);
  });

  it('oneEditApart: a letter dropped, inserted or replaced, or two neighbours swapped; nothing further', () => {
    for (const [a, b] of [
      ['garden', 'gardn'],
      ['garden', 'gardenn'],
      ['garden', 'harden'],
      ['garden', 'gadren'],
      ['garden', 'gardne'],
      ['ab', 'ba'],
    ]) {
      expect(oneEditApart(a as string, b as string), `${a} ~ ${b}`).toBe(true);
      expect(oneEditApart(b as string, a as string), `${b} ~ ${a}`).toBe(true);
    }
    for (const [a, b] of [
      ['garden', 'garden'],
      ['garden', 'gard'],
      ['garden', 'hardem'],
      ['garden', 'gerdan'],
      ['garden', 'gardenss'],
      ['garden', 'agrdne'],
    ]) {
      expect(oneEditApart(a as string, b as string), `${a} !~ ${b}`).toBe(false);
    }
  });
});

describe('updates', () => {
  it('remove takes a memory out of every posting, and a term whose last memory goes leaves the dictionary', () => {
    const idx = new LexicalIndex();
    idx.add('a', doc('the quokka smiles at the photographer'));
    idx.add('b', doc('the photographer packs up'));
    const terms = idx.termCount;
    idx.remove('a');
    expect(idx.search(idx.query('quokka'), 5)).toEqual([]);
    expect(idx.search(idx.query('photographer'), 5).map((h) => h.id)).toEqual(['b']);
    expect(idx.termCount).toBe(terms - 2); // quokka, smile
    idx.remove('b');
    expect(idx.termCount).toBe(0);
    expect(idx.size).toBe(0);
  });

  it('a replaced memory is found by its new words only; document numbers are reused safely', () => {
    const idx = new LexicalIndex();
    idx.add('a', doc('old wording about tulips'));
    idx.remove('a');
    idx.add('b', doc('something about daffodils'));
    idx.add('a', doc('new wording about roses'));
    expect(idx.search(idx.query('tulips'), 5)).toEqual([]);
    expect(idx.search(idx.query('roses'), 5).map((h) => h.id)).toEqual(['a']);
    expect(idx.search(idx.query('daffodils'), 5).map((h) => h.id)).toEqual(['b']);
    expect(() => idx.add('a', doc('twice'))).toThrow(/already indexed/);
  });

  it('after many removals (postings left behind, lists compacted, numbers reused) it scores exactly as an index of the live memories', () => {
    const words = [
      'alpha',
      'bravo',
      'charlie',
      'delta',
      'echo',
      'foxtrot',
      'golf',
      'hotel',
      'india',
      'juliet',
    ];
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const text = (): string =>
      `${Array.from({ length: 1 + rand(6) }, () => words[rand(words.length)]).join(' ')} 2023-0${1 + rand(9)}-1${rand(10)}`;
    const idx = new LexicalIndex();
    const live = new Map<string, string>();
    for (let step = 0; step < 3000; step++) {
      const id = `m${rand(300)}`;
      const old = live.get(id);
      if (old !== undefined) {
        idx.remove(id);
        live.delete(id);
      }
      if (rand(3) > 0) {
        const t = text();
        idx.add(id, doc(t));
        live.set(id, t);
      }
    }
    const fresh = new LexicalIndex();
    for (const [id, t] of live) fresh.add(id, doc(t));
    expect(idx.size).toBe(live.size);
    expect(idx.termCount).toBe(fresh.termCount);
    for (const q of [
      'alpha',
      'bravo charlie',
      'delta echo foxtrot golf',
      'hotel india juliet zulu',
    ]) {
      const got = idx
        .search(idx.query(q), 400)
        .map((h) => [h.id, h.score] as const)
        .sort();
      const want = fresh
        .search(fresh.query(q), 400)
        .map((h) => [h.id, h.score] as const)
        .sort();
      expect(got.map(([id]) => id)).toEqual(want.map(([id]) => id));
      for (const [i, [, score]] of got.entries()) expect(score).toBeCloseTo(want[i]?.[1] ?? NaN, 9);
    }
    const year = idx.withDateKeys(['§y:2023'], 1000).sort();
    expect(year).toEqual([...live.keys()].sort());
  });

  it('keeps the dates a memory names as keys outside BM25', () => {
    const idx = new LexicalIndex();
    idx.add('a', doc('[1:56 pm on 8 May, 2023] Caroline: hello'));
    idx.add('b', doc('we met on 2023-06-02'));
    expect(idx.withDateKeys(['§m:2023-05'], 10)).toEqual(['a']);
    expect(idx.withDateKeys(['§y:2023'], 10).sort()).toEqual(['a', 'b']);
    expect(idx.withDateKeys(['§d:2023-06-02', '§d:2023-05-08'], 1)).toHaveLength(1);
    expect(idx.query('§y:2023 §m:2023-05').terms.map((t) => t.term)).toEqual(['2023']);
  });
});

describe('withAllWords (the list filter q)', () => {
  it('finds the memories holding every word, whatever list is shortest, and never a removed one', () => {
    const idx = new LexicalIndex();
    idx.add('a', doc('Alice painted the garden fence'));
    idx.add('b', doc('Alice paints in the garden'));
    idx.add('c', doc('Bob painted a boat'));
    idx.add('d', doc('A fence', { entityId: 'alice' }));
    expect(idx.withAllWords('painting')).toEqual(new Set(['a', 'b', 'c']));
    expect(idx.withAllWords('garden ALICE paint')).toEqual(new Set(['a', 'b']));
    expect(idx.withAllWords('fence alice')).toEqual(new Set(['a', 'd']));
    expect(idx.withAllWords('zeppelin painted')).toEqual(new Set());
    expect(idx.withAllWords('the a')).toBeNull();
    idx.remove('a');
    expect(idx.withAllWords('painted fence')).toEqual(new Set());
    idx.add('e', doc('Fence painted blue'));
    expect(idx.withAllWords('painted fence')).toEqual(new Set(['e']));
  });
});
