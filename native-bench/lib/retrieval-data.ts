/**
 * @module native-bench/lib/retrieval-data — the evaluation datasets in LoCoMo's layout (LoCoMo itself and
 * LifeBench's phone records converted to it, ../shared/data/README.md) read as the memories an agent
 * would write and the questions it would ask: turn texts and times, question categories, and the
 * time a question is asked at. Shared by bench:retrieval (over REST) and recall-lab.ts (in process).
 */

export interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
  /** LifeBench: the record's type (sms, call, calendar, note, photo, push, fitness_health, contact). */
  type?: string;
}

export interface Question {
  question: string;
  evidence: string[];
  category: number;
  /** LifeBench: the question type, whose category numbers mean other things than LoCoMo's. */
  question_type?: string;
  /** LifeBench: the month the question is asked in (`2025-02`): its "now". */
  ask_time?: string;
}

export interface Conversation {
  conversation: Record<string, unknown>;
  qa: Question[];
}

export interface TurnMemory {
  diaId: string;
  speaker: string;
  content: string;
  /** When an agent taking part would have written it: its session's start + TURN_SECONDS per turn. */
  atMs: number;
}

/** Seconds between two turns of a session as the bench writes them (a chat's pace). */
export const TURN_SECONDS = 20;
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

const LOCOMO_CATEGORIES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};
/** LifeBench's category numbers (its question types); 5 (unanswerable) has no evidence. */
const LIFEBENCH_CATEGORIES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal/update',
  3: 'nondeclarative',
  4: 'extraction',
};

/** The scored categories of a dataset (number → name): LifeBench's when its questions carry a question type. */
export function categoryNames(data: readonly Conversation[]): Record<number, string> {
  return data.some((c) => c.qa.some((q) => q.question_type !== undefined))
    ? LIFEBENCH_CATEGORIES
    : LOCOMO_CATEGORIES;
}

/** The questions that are scored: a scored category and some evidence. */
export function scoredQuestions(
  conv: Conversation,
  names: Record<number, string>,
): Array<{ q: Question; qi: number }> {
  return conv.qa.flatMap((q, qi) =>
    q.category in names && q.evidence.length > 0 ? [{ q, qi }] : [],
  );
}

/**
 * The "now" a question is asked at, in µs: the last instant of its `ask_time` month (LifeBench), or
 * `fallbackUs` (the clock) when it has none. A month without a day is asked at its end, so every
 * record of that month was written before it.
 */
export function askedAtUs(q: Question, fallbackUs: number): number {
  const m = /^(\d{4})-(\d{2})$/.exec(q.ask_time ?? '');
  if (!m) return fallbackUs;
  return Date.UTC(Number(m[1]), Number(m[2]), 1) * 1000 - 1;
}

/** A LoCoMo session time (`1:56 pm on 8 May, 2023`, read as UTC; or anything Date.parse reads) in ms since the epoch. */
export function sessionStartMs(text: string): number {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i.exec(
    text.trim(),
  );
  const month = m ? MONTHS.indexOf((m[5] ?? '').toLowerCase()) : -1;
  if (!m || month < 0) {
    const parsed = Date.parse(text);
    if (Number.isFinite(parsed)) return parsed;
    throw new Error(
      `session date '${text}' is neither '1:56 pm on 8 May, 2023' nor a date Date.parse reads; --same-minute loads without session times`,
    );
  }
  const hour = (Number(m[1]) % 12) + ((m[3] ?? '').toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/**
 * The turns of a conversation as memory texts, in session order. `split` (`--split-turns`): a turn
 * of several sentences becomes one message per sentence, in order, by the same speaker, within the
 * turn's 20 s (as people write in messaging apps: one answer over several messages); each message
 * counts as its turn (a hit when any message of an evidence turn is found).
 */
export function turnsOf(conv: Conversation, split: boolean): TurnMemory[] {
  const c = conv.conversation;
  const sessions = Object.keys(c)
    .map((k) => /^session_(\d+)$/.exec(k)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  return sessions.flatMap((s) => {
    const date = String(c[`session_${s}_date_time`] ?? '');
    const start = sessionStartMs(date);
    return (c[`session_${s}`] as Turn[]).flatMap((t, i) => {
      const text = `${t.text}${t.blip_caption ? ` [image: ${t.blip_caption}]` : ''}`;
      const parts = split ? text.split(/(?<=[.!?])\s+(?=\S)/u) : [text];
      return parts.map((part, j) => ({
        diaId: t.dia_id,
        atMs:
          start + i * TURN_SECONDS * 1000 + Math.floor((j * TURN_SECONDS * 1000) / parts.length),
        speaker: t.speaker,
        content: `[${date}] ${t.speaker}: ${part}`,
      }));
    });
  });
}

/** Share of the evidence turns among the found ones (evidence ids are de-duplicated first). */
export function share(evidence: readonly string[], found: readonly (string | undefined)[]): number {
  const want = new Set(evidence.map((e) => e.trim()));
  const got = new Set(found);
  let hit = 0;
  for (const e of want) if (got.has(e)) hit += 1;
  return hit / want.size;
}

/** The memory id bench:retrieval gives the i-th turn: a ULID-shaped id of the turn's time. */
export function turnId(t: TurnMemory, i: number): string {
  return `${t.atMs.toString(16).padStart(12, '0')}${i.toString(16).padStart(20, '0')}`;
}
