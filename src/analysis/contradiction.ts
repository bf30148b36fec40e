/**
 * @module analysis/contradiction — a heuristic classifier for a pair of similar statements: which
 * pairs are compared at all ({@link isCandidate}), and whether the newer contradicts the older or
 * revises it ({@link classifyPair}), with a score and a `reason` naming the rule that fired; each
 * statement is read once (analysis/contradiction-statement, with analysis/statement-terms' words)
 * for every pair it is in.
 */
import { negationScope, opposites, type RuleFinding } from './contradiction-rules.ts';
import { clausesOf, statement, subjectTerms, type Statement } from './contradiction-statement.ts';
import { pairFeatures } from './contradiction-features.ts';
import { learnedDecision } from './contradiction-learned.ts';
import { EMPTY_LEXICON, type Lexicon } from './lexicon.ts';
import { stem, bothAdd, NUMBER_TERMS, jaccard, without } from './statement-terms.ts';

/** Scores at or above this create edges; scores in [UNCERTAIN, CONFIDENT) become pending candidates. */
export const CONFIDENT = 0.7;
export const UNCERTAIN = 0.45;

export type Verdict = 'contradiction' | 'revision' | 'none';

export interface Classification {
  verdict: Verdict;
  score: number;
  reason: string;
}

const ANTONYM_PAIRS: Array<[string, string]> = [
  ['like', 'dislike'],
  ['love', 'hate'],
  ['loved', 'hated'],
  ['always', 'never'],
  ['true', 'false'],
  ['open', 'closed'],
  ['increase', 'decrease'],
  ['increased', 'decreased'],
  ['rose', 'fell'],
  ['hot', 'cold'],
  ['warm', 'cold'],
  ['alive', 'dead'],
  ['win', 'lose'],
  ['won', 'lost'],
  ['accept', 'reject'],
  ['accepted', 'rejected'],
  ['allow', 'forbid'],
  ['allowed', 'forbidden'],
  ['more', 'less'],
  ['start', 'stop'],
  ['started', 'stopped'],
  ['enable', 'disable'],
  ['enabled', 'disabled'],
  ['success', 'failure'],
  ['succeeded', 'failed'],
  ['pass', 'fail'],
  ['passed', 'failed'],
  ['buy', 'sell'],
  ['include', 'exclude'],
  ['agree', 'disagree'],
  ['approve', 'reject'],
  ['approved', 'rejected'],
  ['happy', 'unhappy'],
  ['safe', 'unsafe'],
  ['available', 'unavailable'],
  ['online', 'offline'],
  ['present', 'absent'],
  ['married', 'single'],
  ['employed', 'unemployed'],
  ['early', 'late'],
  ['cheap', 'expensive'],
  ['best', 'worst'],
  ['prefer', 'avoid'],
  ['support', 'oppose'],
  ['healthy', 'sick'],
  ['legal', 'illegal'],
  ['vegetarian', 'carnivore'],
  ['introvert', 'extrovert'],
  ['remote', 'onsite'],
  ['positive', 'negative'],
  ['profit', 'loss'],
  ['high', 'low'],
  ['fast', 'slow'],
  ['easy', 'difficult'],
  ['strong', 'weak'],
  ['possible', 'impossible'],
  ['correct', 'incorrect'],
  ['valid', 'invalid'],
  ['secure', 'insecure'],
  ['stable', 'unstable'],
  ['public', 'private'],
  ['active', 'inactive'],
  ['full', 'empty'],
  ['visible', 'invisible'],
  ['included', 'excluded'],
  ['required', 'optional'],
  ['mandatory', 'optional'],
];
const ANTONYMS = new Map<string, string>();
for (const [a, b] of ANTONYM_PAIRS) {
  ANTONYMS.set(stem(a), stem(b));
  ANTONYMS.set(stem(b), stem(a));
}

function builtInAntonym(x: string, y: string): boolean {
  return ANTONYMS.get(stem(x)) === stem(y);
}

/**
 * Pairs less similar than this are about different things. Chosen for the default model's centred
 * cosines (bge-small-en-v1.5) on SICK train by the rule that a looser cut-off must find more
 * contradictions than it raises false alarms (0.55 → 0.5: +2 found, +0 false alarms; 0.45: +0,
 * +1): `node --import tsx native-bench/contradictions-dev.ts --part all`. all-MiniLM-L6-v2 had 0.55.
 */
export const MIN_SIMILARITY = 0.5;

/**
 * Below MIN_SIMILARITY a pair is still compared when the statements share most of their words: a
 * negation moves the embedding ("A person is playing a guitar" / "Nobody is playing the guitar",
 * cosine 0.46) while the words stay.
 */
export const LEXICAL_MIN_SIMILARITY = 0.3;
/** Share of the shorter statement's content terms the other must hold to be compared below MIN_SIMILARITY. */
export const LEXICAL_OVERLAP = 0.5;

/** Whether the check compares a pair at all (the shard's neighbour search found it with cosine `similarity`). */
export function isCandidate(older: string, newer: string, similarity: number): boolean {
  if (similarity >= MIN_SIMILARITY) return true;
  if (similarity < LEXICAL_MIN_SIMILARITY) return false;
  // The statements' terms, as the classifier reads them (memoised: a candidate is classified next).
  const a = statement(older).terms;
  const b = statement(newer).terms;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const t of small) if (large.has(t)) shared += 1;
  return shared >= 2 && shared >= LEXICAL_OVERLAP * small.size;
}

export interface ClassifyOptions {
  /** Word relations (WordNet's, see shard/lexicon-loader); without it words match only themselves. */
  lexicon?: Lexicon;
  /** Rules left out (for measuring each rule's gain): 'scope', 'opposites', 'antonym', 'number', 'update', 'swap'. */
  without?: ReadonlySet<string>;
  /** Both statements are about one entity (the memories share an `entity_id`): asks the value-swap rule. */
  sameEntity?: boolean;
  /**
   * Ask the learned decision (analysis/contradiction-learned) when no rule fires. Off in the
   * service: measured and dropped, as on SICK's trial split it doubled the false alarms on neutral
   * pairs (native-bench/HISTORY.md, "Contradiction detection"); kept to reproduce that measurement.
   */
  learned?: boolean;
}

/**
 * Classifies `newer` against `older` (both texts); `similarity` is their embedding cosine. The rules,
 * in order: negation scope and opposites about one particular subject (analysis/contradiction-rules,
 * with WordNet's word relations when a lexicon is given); antonyms from a built-in list (likes /
 * hates …); disagreeing numbers or dates about the same subject (digits, number words, ordinals,
 * months). Revision wording ("now", "no longer", "moved to", "changed to" …) on the newer side
 * turns a disagreement into an update (verdict `revision`, newer revises older). Words are compared
 * after light normalisation (possessive 's and plural/third-person -s removed; negations and
 * revision wording left out), and a pair whose sides both say something the other does not ("The
 * north entrance is closed" / "The south entrance is open") is about different things. Every
 * `reason` starts with the rule's name ("negation scope: …", "antonyms: …", "numbers: …",
 * "update: …"); the shard stores it on the edge or candidate.
 */
export function classifyPair(
  older: string,
  newer: string,
  similarity: number,
  opts: ClassifyOptions = {},
): Classification {
  const o = statement(older);
  const n = statement(newer);
  const [a, b, wa, wb] = [o.terms, n.terms, o.side, n.side];
  const lx = opts.lexicon ?? EMPTY_LEXICON;
  const on = (rule: string): boolean => !(opts.without?.has(rule) ?? false);
  const revisionWording = n.revision && !o.revision;
  const newerText = n.text;
  const finding =
    (on('scope') ? (negationScope(wa, wb, lx) ?? clauseScope(o, n, lx)) : null) ??
    (on('opposites') ? opposites(wa, wb, lx, builtInAntonym) : null) ??
    (on('antonym') ? antonym(a, b) : null) ??
    (on('number') ? numbers(o, n) : null) ??
    (revisionWording && on('update') ? update(a, b) : null) ??
    (opts.sameEntity === true && on('swap') ? swap(o, n, lx) : null) ??
    (opts.learned === true ? learned(wa.words, wb.words, similarity, lx) : null);
  if (!finding) return { verdict: 'none', score: 0, reason: 'no disagreement found' };
  // Similar embeddings make the disagreement about the same thing more likely.
  const score = Math.min(
    0.98,
    finding.score + (similarity >= 0.8 ? 0.08 : similarity >= 0.6 ? 0.03 : -0.1),
  );
  if (
    revisionWording ||
    (finding.kind === 'number' && /\b(now|currently|as of)\b/i.test(newerText))
  ) {
    return {
      verdict: 'revision',
      score,
      reason: `${finding.reason}; the newer statement reads as an update`,
    };
  }
  return { verdict: 'contradiction', score, reason: finding.reason };
}

/**
 * Negation scope within a clause: when only one side negates and the whole of it does not deny the
 * other ("The server no longer runs on port 8080; it is on 9090 now" says more than it denies), a
 * negated clause of it may ("the server no longer runs on port 8080" / "the server runs on port 8080").
 */
function clauseScope(o: Statement, n: Statement, lx: Lexicon): RuleFinding | null {
  for (const [negated, plain, flip] of [
    [n, o, false],
    [o, n, true],
  ] as const) {
    if (plain.side.negations > 0) continue;
    for (const clause of clausesOf(negated)) {
      if (clause.negations === 0) continue;
      const f = flip
        ? negationScope(clause, plain.side, lx)
        : negationScope(plain.side, clause, lx);
      if (f)
        return {
          ...f,
          reason: f.reason.replace(
            /^negation scope: one statement/,
            'negation scope: a clause of one statement',
          ),
        };
    }
  }
  return null;
}

interface Finding {
  kind: 'negation' | 'antonym' | 'number' | 'update' | 'swap' | 'learned';
  score: number;
  reason: string;
}

/** The features of a pair for the learned decision (native-bench/fit-contradiction.ts fits on them). */
export function featuresOf(
  older: string,
  newer: string,
  similarity: number,
  lexicon: Lexicon = EMPTY_LEXICON,
): number[] {
  return pairFeatures(
    statement(older).side.words,
    statement(newer).side.words,
    similarity,
    lexicon,
    builtInAntonym,
  );
}

/** When no rule fired: the logistic regression over the pair's features (analysis/contradiction-learned). */
function learned(
  wa: readonly string[],
  wb: readonly string[],
  similarity: number,
  lx: Lexicon,
): Finding | null {
  const d = learnedDecision(pairFeatures(wa, wb, similarity, lx, builtInAntonym));
  return d && { kind: 'learned', score: 0.8, reason: `learned: ${d.top} (p=${d.p.toFixed(2)})` };
}

function antonym(a: ReadonlySet<string>, b: ReadonlySet<string>): Finding | null {
  for (const w of a) {
    const opposite = ANTONYMS.get(w);
    if (opposite && b.has(opposite) && !a.has(opposite) && !b.has(w)) {
      const restA = without(a, w);
      const restB = without(b, opposite);
      const rest = jaccard(restA, restB);
      if (rest >= 0.4 && !bothAdd(restA, restB))
        return {
          kind: 'antonym',
          score: 0.5 + 0.4 * rest,
          reason: `antonyms: '${w}' versus '${opposite}'`,
        };
    }
  }
  return null;
}

/** With update wording: same subject, some content replaced ("lives in Berlin" → "now lives in Paris"). */
function update(a: ReadonlySet<string>, b: ReadonlySet<string>): Finding | null {
  const overlap = jaccard(a, b);
  const onlyA = [...a].filter((w) => !b.has(w));
  const onlyB = [...b].filter((w) => !a.has(w));
  if (overlap < 0.4 || onlyA.length === 0 || onlyB.length === 0) return null;
  return {
    kind: 'update',
    score: 0.5 + 0.4 * overlap,
    reason: `update: '${onlyA.join(' ')}' is replaced by '${onlyB.join(' ')}'`,
  };
}

/**
 * A value swapped about one entity: two statements about the same entity (the memories share an
 * `entity_id`), neither negated, alike but for one word each ("Alice lives in Paris" / "Alice lives
 * in London", "Bob's favourite colour is blue" / "… green"), the two words not one another's
 * synonym or hypernym and not numbers (the numbers rule reads those). Only a pending candidate: an
 * entity may hold both values ("Alice likes Paris" / "… London"), which words cannot tell.
 */
function swap(o: Statement, n: Statement, lx: Lexicon): Finding | null {
  if (o.side.negations > 0 || n.side.negations > 0) return null;
  const onlyA = [...o.terms].filter((w) => !n.terms.has(w));
  const onlyB = [...n.terms].filter((w) => !o.terms.has(w));
  if (onlyA.length !== 1 || onlyB.length !== 1 || o.terms.size - 1 < 2) return null;
  const [x, y] = [onlyA[0] as string, onlyB[0] as string];
  if (/\d/.test(x + y) || NUMBER_TERMS.includes(x) || NUMBER_TERMS.includes(y)) return null;
  if (lx.covers(x, y) || lx.covers(y, x) || lx.near(x, y) || lx.near(y, x)) return null;
  return { kind: 'swap', score: 0.55, reason: `swap: '${x}' versus '${y}' about one entity` };
}

function numbers(o: Statement, n: Statement): Finding | null {
  const [na, nb] = [o.numbers, n.numbers];
  if (na.size === 0 || nb.size === 0) return null;
  const shared = [...na].filter((x) => nb.has(x)).length;
  if (shared === Math.min(na.size, nb.size)) return null;
  // Several numbers on each side and none in common: they name different things ("Room 101 seats 12" / "Room 205 seats 30").
  if (shared === 0 && na.size >= 2 && nb.size >= 2) return null;
  const subject = jaccard(subjectTerms(o), subjectTerms(n));
  if (subject < 0.5) return null;
  return {
    kind: 'number',
    score: 0.45 + 0.4 * subject,
    reason: `numbers: the statements disagree on ${[...na].join('/')} versus ${[...nb].join('/')}`,
  };
}
