/**
 * The contradiction check's decisions, pinned to the bit, so that making the check cheaper cannot
 * change what it decides: the candidate rule (`isCandidate`) and the classifier (`classifyPair`:
 * verdict, score compared with `toBe`, reason) on every pair of test/fixtures/contradiction-pairs.json
 * and of the pairs below (written here, in the shapes the rules read: negation scope, clauses,
 * opposites, WordNet antonyms, swaps about one entity, numbers, update wording), in both orders,
 * with WordNet and with the built-in lists only, with and without a shared entity; every statement
 * against every other; and the shard's `checkContradictions` on a workspace of those statements
 * (hash-embedded, as FLASHBULB_EMBEDDER=hash writes them). The expected values are in
 * test/fixtures/contradiction-exact.json, written by this file from the classifier as it stood
 * before the check was made cheaper (`FLASHBULB_WRITE_EXACT=1 npx vitest run
 * test/unit/contradiction-exact.test.ts`); rewrite it only for a deliberate change of the rules,
 * and say so in the commit.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { classifyPair, isCandidate } from '../../src/analysis/contradiction.ts';
import { EMPTY_LEXICON, type Lexicon } from '../../src/analysis/lexicon.ts';
import { hashEmbedBatch } from '../../src/embedding/hash-embedder.ts';
import type { MemoryRecord } from '../../src/model/memory.ts';
import { checkContradictions } from '../../src/shard/contradictions.ts';
import { loadLexicon } from '../../src/shard/lexicon-loader.ts';
import { ShardState } from '../../src/shard/store/apply.ts';
import type { LiveRecord } from '../../src/shard/store/records.ts';

const FIXTURE = new URL('../fixtures/contradiction-exact.json', import.meta.url);
const write = process.env.FLASHBULB_WRITE_EXACT === '1';

/** Pairs written here: [older, newer]. */
const EXTRA: ReadonlyArray<readonly [string, string]> = [
  ['A man is playing a guitar', 'Nobody is playing the guitar'],
  ['A person is boiling noodles in a pot', 'There is no person boiling noodles'],
  ['Two dogs are running through the field', 'There are no dogs running through the field'],
  ['The woman is slicing a tomato', 'The woman is not cutting a tomato'],
  ['The boy is jumping into the pool', 'The boy is jumping out of the pool'],
  ['The man is turning the light on', 'The man is turning the light off'],
  ['The girl is sitting on the bench', 'The girl is standing on the bench'],
  ['The kitten is climbing up the tree', 'The kitten is climbing down the tree'],
  ['The crowd is walking into the stadium', 'The crowd is leaving the stadium'],
  ['A huge dog is barking at the mailman', 'A small dog is barking at the mailman'],
  ['Some men are fighting in the street', 'Two men are not fighting in the street'],
  [
    'The billing service fixed the invoice for March yesterday afternoon (ref 51234).',
    'The billing service never fixed the invoice for March yesterday afternoon (ref 51234).',
  ],
  [
    'The customer reported a timeout when uploading large PDFs after the last release, and wants a follow-up by Friday (ref 1200).',
    'The customer reported a timeout when uploading large PDFs after the last release, although nobody could reproduce it (ref 887).',
  ],
  [
    'Maria from support escalated the flaky integration test during the Tuesday stand-up (ref 4).',
    'Maria from support escalated the flaky integration test during the Tuesday stand-up (ref 9).',
  ],
  [
    'The server runs on port 8080. It restarts every night.',
    'The server no longer runs on port 8080; it is on 9090 now.',
  ],
  ['Bob lives in Berlin.', 'Bob does not live in Berlin, but he works there.'],
  ['Alice lives in Paris.', 'Alice lives in London.'],
  ['Alice drives a car.', 'Alice drives an automobile.'],
  ['Alice has a dog.', 'Alice has a puppy.'],
  ['Alice lives in Paris with Tom.', 'Alice works in London with Tom.'],
  ["Ravi's favourite colour is blue.", "Ravi's favourite colour is green now."],
  ['The meeting is at 3pm on the 4th of May.', 'The meeting is at 4pm on the 4th of May.'],
  ['The team has twelve engineers.', 'The team currently has 14 engineers.'],
  ['Room 101 seats 12 people.', 'Room 205 seats 30 people.'],
  ['The store opens early on Sundays.', 'The store opens late on Sundays.'],
  ['Sam loves the new office.', 'Sam hates the new office.'],
  ['The deploy succeeded on the first try.', 'The deploy failed on the first try.'],
  ['Nobody is holding a hedgehog', 'Someone is holding a hedgehog'],
  ['The kids are playing outdoors', 'The kids are playing indoors'],
  ['Jo moved to Lisbon in 2021.', 'Jo used to live in Lisbon and has now moved to Porto.'],
];

interface Pair {
  older: string;
  newer: string;
  similarity: number;
}

function pairs(): Pair[] {
  const { pairs: fixture } = JSON.parse(
    readFileSync(new URL('../fixtures/contradiction-pairs.json', import.meta.url), 'utf8'),
  ) as { pairs: Pair[] };
  const extra = EXTRA.map(([older, newer], i) => ({
    older,
    newer,
    similarity: [0.46, 0.52, 0.63, 0.74, 0.85][i % 5] as number,
  }));
  return [...fixture, ...extra].map(({ older, newer, similarity }) => ({
    older,
    newer,
    similarity,
  }));
}

type Outcome = [verdict: string, score: number, reason: string];

interface Expected {
  /** Per pair: 4 orders × lexicons, then the same with a shared entity. */
  classified: Outcome[][];
  /** Per pair: isCandidate at 0.25, 0.3, 0.4, 0.49, 0.5 (both orders), as 0/1. */
  candidates: string[];
  /** Every statement against every other (WordNet, similarity 0.7, shared entity): the count of 'none' and the rest. */
  cross: { none: number; found: Array<[number, number, ...Outcome]> };
  /** checkContradictions per newer memory of the workspace: its records, described. */
  checks: string[][];
}

let lexicon: Lexicon = EMPTY_LEXICON;
let expected: Expected | null = null;
beforeAll(async () => {
  lexicon = await loadLexicon();
  if (!write) expected = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Expected;
}, 30_000);

const outcome = (
  older: string,
  newer: string,
  sim: number,
  lx: Lexicon,
  sameEntity: boolean,
): Outcome => {
  const c = classifyPair(older, newer, sim, { lexicon: lx, sameEntity });
  return [c.verdict, c.score, c.reason];
};

function classified(): Outcome[][] {
  return pairs().map(({ older, newer, similarity }) =>
    [false, true].flatMap((sameEntity) =>
      [lexicon, EMPTY_LEXICON].flatMap((lx) => [
        outcome(older, newer, similarity, lx, sameEntity),
        outcome(newer, older, similarity, lx, sameEntity),
      ]),
    ),
  );
}

function candidates(): string[] {
  return pairs().map(({ older, newer }) =>
    [0.25, 0.3, 0.4, 0.49, 0.5]
      .flatMap((s) => [isCandidate(older, newer, s), isCandidate(newer, older, s)])
      .map((b) => (b ? '1' : '0'))
      .join(''),
  );
}

function statements(): string[] {
  return [...new Set(pairs().flatMap((p) => [p.older, p.newer]))];
}

function cross(): Expected['cross'] {
  const all = statements();
  const out: Expected['cross'] = { none: 0, found: [] };
  all.forEach((a, i) => {
    all.forEach((b, j) => {
      if (i === j) return;
      const o = outcome(a, b, 0.7, lexicon, true);
      if (o[0] === 'none') out.none += 1;
      else out.found.push([i, j, ...o]);
    });
  });
  return out;
}

function describeRecord(r: LiveRecord): string {
  if (r.t === 'edge')
    return `edge ${r.e.source_id} ${r.e.edge_type} ${r.e.target_id} ${r.e.confidence} ${r.e.reason ?? ''}`;
  if (r.t === 'pending')
    return `pending ${r.p.memory_id_a} ${r.p.memory_id_b} ${r.p.proposed} ${r.p.classifier_score} ${r.p.similarity} ${r.p.reason ?? ''}`;
  return r.t;
}

/** Every older statement stored (hash-embedded, two entities), then each newer one checked against them in turn. */
function checks(): string[][] {
  const w = new ShardState().workspace('exact');
  const ps = pairs();
  const texts = ps.flatMap((p) => [p.older, p.newer]);
  const vectors = hashEmbedBatch(texts, 384);
  const at = 1_700_000_000_000_000;
  const record = (i: number): MemoryRecord => ({
    id: `m${String(i).padStart(4, '0')}`,
    content: texts[i] as string,
    importance: 0.5,
    context: {},
    entityId: i % 4 < 2 ? 'entity-a' : null,
    kind: 'episode',
    embedding: vectors.slice(i * 384, (i + 1) * 384),
    createdAt: at + i,
    updatedAt: at + i,
    lastAccessedAt: at + i,
    accessCount: 0,
    logicalClock: 0,
    sourceMemoryIds: null,
    supersededBy: null,
    expiresAt: null,
    occurredAt: at + i,
    speaker: null,
    conversationId: null,
    messageId: null,
  });
  for (let i = 0; i < texts.length; i += 2) w.put(record(i));
  return ps.map((_, p) => {
    const m = record(2 * p + 1);
    return checkContradictions(w, [m], at + 10_000_000, lexicon).records.map(describeRecord);
  });
}

describe('the contradiction check decides exactly as before', () => {
  if (write) {
    it('writes test/fixtures/contradiction-exact.json', () => {
      const out: Expected = {
        classified: classified(),
        candidates: candidates(),
        cross: cross(),
        checks: checks(),
      };
      writeFileSync(FIXTURE, `${JSON.stringify(out)}\n`);
    });
    return;
  }

  it('uses WordNet, not the built-in lists only', () => {
    expect(lexicon).not.toBe(EMPTY_LEXICON);
  });

  it('classifies every pair as before, both orders, both lexicons, with and without an entity', () => {
    const got = classified();
    const want = (expected as Expected).classified;
    expect(got.length).toBe(want.length);
    got.forEach((row, i) => {
      row.forEach(([v, s, r], j) => {
        const [ev, es, er] = want[i]?.[j] ?? [];
        expect({ pair: i, case: j, v, r }).toEqual({ pair: i, case: j, v: ev, r: er });
        expect(Object.is(s, es), `pair ${i} case ${j}: score ${s} against ${es}`).toBe(true);
      });
    });
  });

  it('compares the same pairs below the cosine cut-off', () => {
    expect(candidates()).toEqual((expected as Expected).candidates);
  });

  it('classifies every statement against every other as before', () => {
    const got = cross();
    const want = (expected as Expected).cross;
    expect(got.none).toBe(want.none);
    expect(got.found).toEqual(want.found);
    got.found.forEach((f, i) => {
      expect(Object.is(f[3], want.found[i]?.[3])).toBe(true);
    });
  });

  it("finds the same edges and candidates in a workspace (the shard's check)", () => {
    expect(checks()).toEqual((expected as Expected).checks);
  });
});
