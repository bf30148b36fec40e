/**
 * @module recall/hybrid — the features hybrid similarity ranks a candidate by (all in [0, 1]: cosine,
 * lexical share, the lift toward the question before it, the neighbours' best match, the thread's
 * match, a named attribution, a date in the cue's time), their fixed weights, and the relevance
 * that blends them.
 */
import { eventOrder, type JsonValue, type MemoryRecord } from '../model/memory.ts';
import { clamp01 } from './scoring.ts';
import type { LexicalMatcher, RecallSource } from './types.ts';

/** Match: the weight of the cosine (the lexical share gets the rest). */
export const MATCH_COSINE_WEIGHT = 0.65;
/**
 * The thread match's share given to the thread read as one text (the rest: its best member's
 * match). Chosen per fold end to end among 0, 0.25, 0.5, 0.75 and 1: 0.5 in every fold (native-bench/HISTORY.md,
 * "Recall that generalises").
 */
export const THREAD_UNION = 0.5;
/** A context value longer than this is text, not a name. */
const NAME_MAX_CHARS = 60;
const CAPITAL = /^\p{Lu}/u;
/** A question mark (Latin, full-width, Arabic): the text asks something. */
const ASKS = /[?？؟]/u;
/**
 * How many messages of one speaker's run before a memory `reply` walks back through to find the
 * question the run answers (a bound on the walk, not a fitted constant: an answer split over more
 * consecutive messages than this is rare, and its later messages rank as without the feature).
 */
const REPLY_RUN = 5;

/**
 * A candidate's features:
 *   cosine   the cue's cosine with the memory (clamped at 0);
 *   lexical  the IDF-weighted share of the cue's words the memory holds (LexicalIndex.score);
 *   reply    when the memory answers a question, how much better the question matches than the
 *            memory itself: max(0, match(question) − match(m)); the question is the memory written
 *            just before it when that one asks something (a question mark) and is not by the same
 *            speaker, or, for a run of messages by one speaker (an answer split over several), the
 *            question by someone else just before the run;
 *   context  the best match among the memory's neighbours (the memories written just before and
 *            after it in the same stretch of conversation), its own match when it has none;
 *   thread   the match of the memory's thread (the stretch of conversation its neighbours chain
 *            into: a session) over its candidates, the memory included: half the best member's
 *            match, half the thread read as one text (its best cosine, and the IDF-weighted share
 *            of the cue's words its members hold together); none (its weight left out of the
 *            memory's relevance) when it has no neighbour or its stretch is longer than a session
 *            (RecallSource.thread is null);
 *   named    1 when the cue names who the memory is attributed to: its speaker, its entity id, or a
 *            short context string value written like a name (a speaker, an author, a person: it
 *            starts with a capital letter), appears in the cue as whole words, in any case;
 *   time     1 when the memory is dated inside the time the cue names.
 * where match(m) = 0.65·cosine(m) + 0.35·lexical(m). The names are read from the memory's fields,
 * never from its content: a memory whose content mentions a name already matches it lexically.
 */
export interface Features {
  cosine: number;
  lexical: number;
  context: number;
  /** null: no thread evidence either way (the weight is left out). */
  thread: number | null;
  named: number;
  /** How much better the memory just before it matches, when that memory asks something (else 0). */
  reply: number;
  time: number;
}

/**
 * Weights of the features in the relevance, chosen by leave-one-conversation-out cross-validation
 * on the development data (native-bench/fit-ranker.ts; native-bench/HISTORY.md, "Recall that generalises"). cosine,
 * lexical, context and time are the earlier calibrated blend; `named` was chosen per fold on the
 * other conversations (0.15 or 0.2 in every fold before `thread`; with it, 0.2 in every fold);
 * `thread` the same way (0.6, 0.6, 0.8 per fold; 0.6 on all three); `reply` the same way (0.8 in
 * every fold). `time` on the LifeBench development data, whose questions nearly all name a month
 * or a day (LoCoMo's rarely do), chosen per person on the other among 0.1–0.5: 0.3 and 0.4, 0.3
 * best on both by R@5 + R@10. `reply` must not exceed cosine + lexical (see {@link hybridRelevance}).
 */
export type Weights = Record<keyof Features, number>;

export const HYBRID_WEIGHTS: Readonly<Weights> = {
  cosine: 0.65,
  lexical: 0.35,
  reply: 0.8,
  context: 0.4,
  thread: 0.6,
  named: 0.2,
  time: 0.3,
};

/**
 * Relevance in [0, 1]: the weighted features over the sum of the weights that apply. The time
 * weight applies only when the cue names a time, the name weight only when it names someone a
 * candidate is attributed to, so a recall without either means what it always meant. `reply` adds
 * to the sum but not to the weights it is divided by: it moves the memory's own match (cosine and
 * lexical, whose weights sum to 1) toward its question's, 0.8 of the way
 * (0.65·cosine + 0.35·lexical + 0.8·max(0, match(question) − match(m)) ≤ 1 while 0.8 ≤ 1), so a
 * memory that repeats the cue still has relevance 1 written alone, and one that follows no
 * question ranks as without the feature.
 */
export function hybridRelevance(
  f: Features,
  applies: { time: boolean; named: boolean },
  w: Readonly<Weights> = HYBRID_WEIGHTS,
): number {
  const time = applies.time ? w.time : 0;
  const named = applies.named ? w.named : 0;
  const thread = f.thread === null ? 0 : w.thread;
  const sum =
    w.cosine * f.cosine +
    w.lexical * f.lexical +
    w.reply * f.reply +
    w.context * f.context +
    thread * (f.thread ?? 0) +
    named * f.named +
    time * f.time;
  return sum / (w.cosine + w.lexical + w.context + thread + named + time);
}

/**
 * How much of a memory's density (RecallSource.density) comes off its cosine: chosen by
 * leave-one-out over the five development units (three LoCoMo conversations, two LifeBench people)
 * among 0, 0.3, 0.6 and 1 on R@5 + R@10: 0.6 in all five folds (native-bench/recall-lab.ts,
 * docs/benchmarks.md).
 */
export const DENSITY: { weight: number } = { weight: 0.6 };

/**
 * The crowding of each candidate of a pool: DENSITY.weight × (its density − the pool's mean
 * density), 0 for a memory without one. Hubs — memories written from one template, near many
 * others and so near many cues — lose part of their cosine to the memories that stand out; the
 * pool's mean keeps a typical candidate's cosine as it was (CSLS-like hubness reduction: Conneau et
 * al. 2018, Radovanović et al. 2010).
 */
export function crowding(
  src: RecallSource,
  pool: readonly MemoryRecord[],
  nearest: readonly string[],
): (m: MemoryRecord) => number {
  const of = new Map<string, number>();
  for (const m of pool) {
    const d = src.density(m);
    if (d !== null) of.set(m.id, d);
  }
  let sum = 0;
  let n = 0;
  for (const id of nearest) {
    const d = of.get(id);
    if (d === undefined) continue;
    sum += d;
    n += 1;
  }
  if (n === 0) return () => 0;
  const mean = sum / n;
  return (m) => {
    const d = of.get(m.id);
    return d === undefined ? 0 : DENSITY.weight * (d - mean);
  };
}

/**
 * The cosine the features read: the cosine less the crowding, in [0, 1], and at most twice the
 * cosine. A memory sparser than the pool is lifted, but one that does not match the cue is not made
 * to: a memory alone among a crowd of near-duplicates (the crowd's mean density near 1) would
 * otherwise gain up to 0.6 whatever it says. Measured: the same R@5 / R@10 as the lift unbounded on
 * both development sets (penalising only, lifting nothing, loses LifeBench R@10 0.694 → 0.677).
 */
export function uncrowded(cosine: number, crowd: number): number {
  return clamp01(cosine - Math.max(-cosine, crowd));
}

/** Computes (and caches) the features of candidates for one cue. */
export class FeatureScorer {
  readonly #matches = new Map<string, number>();
  readonly #near = new Map<string, MemoryRecord[]>();
  readonly #voices = new Map<string, string>();
  /** Whether the cue names a value (an entity id, a context string): candidates share a few speakers. */
  readonly #named = new Map<string, boolean>();
  /** The cue's words, lower-cased, space-separated and space-padded (for whole-word search). */
  readonly #cueWords: string;

  constructor(
    private readonly src: RecallSource,
    cueText: string,
    private readonly cosineOf: (m: MemoryRecord) => number,
    private readonly lexical: LexicalMatcher,
  ) {
    this.#cueWords = ` ${wordsOf(cueText).join(' ')} `;
  }

  neighbours(m: MemoryRecord): MemoryRecord[] {
    let found = this.#near.get(m.id);
    if (found === undefined) this.#near.set(m.id, (found = this.src.neighbours(m)));
    return found;
  }

  match(m: MemoryRecord): number {
    let v = this.#matches.get(m.id);
    if (v === undefined) {
      v =
        MATCH_COSINE_WEIGHT * this.cosineOf(m) +
        (1 - MATCH_COSINE_WEIGHT) * this.lexical.normOf(m.id);
      this.#matches.set(m.id, v);
    }
    return v;
  }

  /** `thread`: the value of {@link threads} for this memory. */
  features(m: MemoryRecord, dated: boolean, thread: number | null): Features {
    const near = this.neighbours(m);
    // A memory written on its own (no neighbour) is its own context: no evidence either way.
    let context = near.length === 0 ? this.match(m) : 0;
    for (const n of near) context = Math.max(context, this.match(n));
    return {
      cosine: this.cosineOf(m),
      lexical: this.lexical.normOf(m.id),
      context,
      thread,
      named: this.named(m) ? 1 : 0,
      reply: this.reply(m),
      time: dated ? 1 : 0,
    };
  }

  /**
   * `reply`: when the memory answers a question, how much better that question matches the cue
   * than the memory does (0 when it does not): in a dialogue the answer follows its question, often
   * without repeating the question's words. The question is the memory written just before it (its
   * earlier neighbour) when that one asks something and is not by the memory's own speaker; or, when
   * the memory is one of a run of messages by the same speaker (an answer split over several
   * messages), the message by someone else just before the run, when it asks something and no
   * message of the run does (see {@link #askedBefore}). Speakers are known only when the memories
   * are attributed to someone ({@link #voiceOf}); without that, any question just before counts.
   */
  reply(m: MemoryRecord): number {
    const before = this.#earlier(m);
    if (before === undefined) return 0;
    const voice = this.#voiceOf(m);
    const same = voice !== '' && this.#voiceOf(before) === voice;
    // A message after its own speaker's question does not answer it.
    if (same && ASKS.test(before.content)) return 0;
    const asked = same ? this.#askedBefore(voice, before) : before;
    if (asked === undefined) return 0;
    // The question mark is tested last: most earlier neighbours match no better.
    const lift = this.match(asked) - this.match(m);
    return lift > 0 && ASKS.test(asked.content) ? lift : 0;
  }

  #earlier(m: MemoryRecord): MemoryRecord | undefined {
    return this.neighbours(m).find((n) => eventOrder(n, m) < 0);
  }

  /**
   * The message that may hold the question a run of one speaker's messages answers: `before` (the
   * message just before the memory, by the same speaker, asking nothing) and the messages before
   * it are walked back while they are by that speaker (`voice`) and ask nothing; the first by
   * someone else (with an attribution of its own) is the candidate, whose question mark the caller
   * tests. Speakers are told apart by who the memories are attributed to ({@link #voiceOf}); a
   * memory without an attribution has no known run, and only the message just before it can be its
   * question.
   */
  #askedBefore(voice: string, before: MemoryRecord): MemoryRecord | undefined {
    let run: MemoryRecord | undefined = before;
    for (let i = 0; i < REPLY_RUN && run !== undefined; i++) {
      const other = this.#voiceOf(run);
      if (other !== voice) return other === '' ? undefined : run;
      if (i > 0 && ASKS.test(run.content)) return undefined;
      run = this.#earlier(run);
    }
    return undefined;
  }

  /**
   * Who a memory is attributed to, as one string: its speaker when it has one; else its context's
   * values written like names (the ones {@link named} reads: short strings starting with a capital
   * letter), with their keys; '' when it has neither. Two messages of one stretch with the same
   * voice are by the same speaker.
   */
  #voiceOf(m: MemoryRecord): string {
    let v = this.#voices.get(m.id);
    if (v === undefined && m.speaker !== null) this.#voices.set(m.id, (v = `\u0002${m.speaker}`));
    if (v === undefined) {
      v = '';
      for (const key of Object.keys(m.context).sort()) {
        const x = m.context[key];
        if (typeof x === 'string' && x.length <= NAME_MAX_CHARS && CAPITAL.test(x))
          v += `${key}\u0000${x}\u0001`;
      }
      this.#voices.set(m.id, v);
    }
    return v;
  }

  /**
   * The thread feature of each candidate: the best match among the candidates of its thread, itself
   * included (a thread's best match lifts its other members and never dilutes its own), or null
   * when it has no neighbour or no bounded thread (a memory written on its own, or inside a stream
   * without pauses: no evidence either way, and it ranks as without the feature). Threads are asked
   * for earliest first (event order), so the answer does not depend on the pool's order.
   */
  threads(pool: readonly MemoryRecord[]): Map<string, number | null> {
    const oldestFirst = [...pool].sort(eventOrder);
    const keyOf = new Map<string, string>();
    const members = new Map<string, MemoryRecord[]>();
    for (const m of oldestFirst) {
      const key = this.src.thread(m);
      if (key === null) continue;
      keyOf.set(m.id, key);
      members.get(key)?.push(m) ?? members.set(key, [m]);
    }
    const best = new Map<string, number>();
    for (const [key, ms] of members) best.set(key, this.#threadMatch(ms));
    return new Map(
      oldestFirst.map((m) => {
        const key = keyOf.get(m.id);
        return [
          m.id,
          key === undefined || this.neighbours(m).length === 0 ? null : (best.get(key) ?? null),
        ];
      }),
    );
  }

  /**
   * A thread's match: half its best member's match, half the thread read as one text (its best
   * cosine, and the share of the cue's words its members hold together): a question whose words
   * are spread over several turns of a session finds that session.
   */
  #threadMatch(ms: readonly MemoryRecord[]): number {
    let best = 0;
    let cos = 0;
    for (const m of ms) {
      best = Math.max(best, this.match(m));
      cos = Math.max(cos, this.cosineOf(m));
    }
    const whole =
      MATCH_COSINE_WEIGHT * cos +
      (1 - MATCH_COSINE_WEIGHT) * this.lexical.unionOf(ms.map((m) => m.id));
    return (1 - THREAD_UNION) * best + THREAD_UNION * whole;
  }

  /** Whether the cue names the memory's speaker, its entity or one of its short context string values. */
  named(m: MemoryRecord): boolean {
    if (m.speaker !== null && this.#names(m.speaker)) return true;
    if (m.entityId !== null && this.#names(m.entityId)) return true;
    return Object.values(m.context).some((v) => this.#nameIn(v));
  }

  /** A context value names someone when it is written like a name: it starts with a capital letter. */
  #nameIn(v: JsonValue): boolean {
    const named = (x: JsonValue): boolean =>
      typeof x === 'string' && CAPITAL.test(x) && this.#names(x);
    return Array.isArray(v) ? v.some(named) : named(v);
  }

  #names(value: string): boolean {
    if (value.length > NAME_MAX_CHARS) return false;
    let v = this.#named.get(value);
    if (v === undefined) {
      const words = wordsOf(value);
      v = words.length > 0 && this.#cueWords.includes(` ${words.join(' ')} `);
      this.#named.set(value, v);
    }
    return v;
  }
}

/** Lower-cased letter/number runs, a possessive `'s` dropped (`Caroline's` names Caroline). */
function wordsOf(text: string): string[] {
  return [
    ...text
      .normalize('NFKC')
      .toLowerCase()
      .matchAll(/[\p{L}\p{M}\p{N}]+(?:['’]\p{L}+)?/gu),
  ].map((w) => w[0].replace(/['’]s$/u, ''));
}
