/**
 * @module reflect/contradiction — a heuristic classifier for a pair of similar statements:
 *
 * - negation asymmetry: one side negates what the other asserts (shared content words, one
 *   negation more on one side);
 * - antonyms: the sides differ by a word and its opposite (likes / hates, open / closed …);
 * - disagreeing numbers or dates about the same subject;
 * - revision wording ("now", "no longer", "moved to", "changed to" …) on the newer side turns a
 *   disagreement into an update (verdict `revision`, newer revises older).
 *
 * Scores ≥ CONFIDENT create edges; scores in [UNCERTAIN, CONFIDENT) become pending candidates.
 */
import { tokens } from './summarize.ts';

export const CONFIDENT = 0.7;
export const UNCERTAIN = 0.45;
const MAX_CHARS = 600;

export type Verdict = 'contradiction' | 'revision' | 'none';

export interface Classification {
  verdict: Verdict;
  score: number;
  reason: string;
}

const NEGATIONS = /\b(not|no|never|none|nobody|nothing|neither|nor|cannot|can't|won't|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|hasn't|haven't|hadn't|shouldn't|wouldn't|couldn't)\b/gi;
const REVISION = /\b(now|no longer|any ?more|changed|moved|switched|updated|instead|actually|nowadays|these days|as of|from now on|has become|became|used to)\b/i;

const ANTONYM_PAIRS: Array<[string, string]> = [
  ['like', 'dislike'], ['likes', 'dislikes'], ['love', 'hate'], ['loves', 'hates'], ['loved', 'hated'], ['always', 'never'],
  ['true', 'false'], ['open', 'closed'], ['increase', 'decrease'], ['increased', 'decreased'], ['rose', 'fell'], ['up', 'down'],
  ['hot', 'cold'], ['alive', 'dead'], ['win', 'lose'], ['won', 'lost'], ['accept', 'reject'], ['accepted', 'rejected'],
  ['allow', 'forbid'], ['allowed', 'forbidden'], ['more', 'less'], ['start', 'stop'], ['started', 'stopped'], ['enable', 'disable'],
  ['enabled', 'disabled'], ['success', 'failure'], ['succeeded', 'failed'], ['pass', 'fail'], ['passed', 'failed'], ['buy', 'sell'],
  ['include', 'exclude'], ['agree', 'disagree'], ['agrees', 'disagrees'], ['approve', 'reject'], ['approved', 'rejected'],
  ['happy', 'unhappy'], ['safe', 'unsafe'], ['available', 'unavailable'], ['online', 'offline'], ['present', 'absent'],
  ['married', 'single'], ['employed', 'unemployed'], ['early', 'late'], ['cheap', 'expensive'], ['best', 'worst'],
  ['prefers', 'avoids'], ['supports', 'opposes'], ['support', 'oppose'], ['healthy', 'sick'], ['legal', 'illegal'],
  ['vegetarian', 'carnivore'], ['introvert', 'extrovert'], ['remote', 'onsite'], ['positive', 'negative'], ['profit', 'loss'],
];
const ANTONYMS = new Map<string, string>();
for (const [a, b] of ANTONYM_PAIRS) {
  ANTONYMS.set(a, b);
  ANTONYMS.set(b, a);
}

/** Classifies `newer` against `older` (both texts); `similarity` is their embedding cosine. */
export function classifyPair(olderText: string, newerText: string, similarity: number): Classification {
  // Statements are compared on their opening: long documents are not single claims.
  const older = olderText.slice(0, MAX_CHARS);
  const newer = newerText.slice(0, MAX_CHARS);
  const a = new Set(tokens(older));
  const b = new Set(tokens(newer));
  const overlap = jaccard(a, b);
  const revisionWording = REVISION.test(newer) && !REVISION.test(older);
  const finding = negation(older, newer, overlap) ?? antonym(a, b) ?? numbers(older, newer, a, b) ?? (revisionWording ? update(a, b, overlap) : null);
  if (!finding) return { verdict: 'none', score: 0, reason: 'no disagreement found' };
  // Similar embeddings make the disagreement about the same thing more likely.
  const score = Math.min(0.98, finding.score + (similarity >= 0.8 ? 0.08 : similarity >= 0.6 ? 0.03 : -0.1));
  if (revisionWording || finding.kind === 'number' && /\b(now|currently|as of)\b/i.test(newer)) {
    return { verdict: 'revision', score, reason: `${finding.reason}; the newer statement reads as an update` };
  }
  return { verdict: 'contradiction', score, reason: finding.reason };
}

interface Finding {
  kind: 'negation' | 'antonym' | 'number' | 'update';
  score: number;
  reason: string;
}

function negation(older: string, newer: string, overlap: number): Finding | null {
  const na = (older.match(NEGATIONS) ?? []).length;
  const nb = (newer.match(NEGATIONS) ?? []).length;
  if (na === nb || overlap < 0.5) return null;
  return { kind: 'negation', score: 0.55 + 0.35 * overlap, reason: 'one statement negates the other' };
}

function antonym(a: Set<string>, b: Set<string>): Finding | null {
  for (const w of a) {
    const opposite = ANTONYMS.get(w);
    if (opposite && b.has(opposite) && !a.has(opposite) && !b.has(w)) {
      const rest = jaccard(without(a, w), without(b, opposite));
      if (rest >= 0.4) return { kind: 'antonym', score: 0.5 + 0.4 * rest, reason: `'${w}' versus '${opposite}'` };
    }
  }
  return null;
}

/** With update wording: same subject, some content replaced ("lives in Berlin" → "now lives in Paris"). */
function update(a: Set<string>, b: Set<string>, overlap: number): Finding | null {
  const onlyA = [...a].filter((w) => !b.has(w));
  const onlyB = [...b].filter((w) => !a.has(w));
  if (overlap < 0.4 || onlyA.length === 0 || onlyB.length === 0) return null;
  return { kind: 'update', score: 0.5 + 0.4 * overlap, reason: `'${onlyA.join(' ')}' is replaced by '${onlyB.join(' ')}'` };
}

const NUMBER = /\d+(?:[.,:]\d+)*(?:am|pm|%)?|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/gi;

function numbers(older: string, newer: string, a: Set<string>, b: Set<string>): Finding | null {
  const na = new Set((older.match(NUMBER) ?? []).map((x) => x.toLowerCase()));
  const nb = new Set((newer.match(NUMBER) ?? []).map((x) => x.toLowerCase()));
  if (na.size === 0 || nb.size === 0) return null;
  const shared = [...na].filter((x) => nb.has(x)).length;
  if (shared === Math.min(na.size, nb.size)) return null;
  const subject = jaccard(a, b);
  if (subject < 0.5) return null;
  return { kind: 'number', score: 0.45 + 0.4 * subject, reason: `the statements disagree on ${[...na].join('/')} versus ${[...nb].join('/')}` };
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter += 1;
  return inter / (a.size + b.size - inter);
}

function without(s: Set<string>, w: string): Set<string> {
  const out = new Set(s);
  out.delete(w);
  return out;
}
