/**
 * @module recall/dates — the dates a text names, for time-aware recall (deterministic, local,
 * English): date keys for the lexical index from a memory's content ({@link dateKeysIn}) and the
 * window of time a cue names ({@link timeCueOf}); calendar arithmetic is in UTC, weeks start on Monday.
 */

const MONTHS = [
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
] as const;
const MONTH =
  '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?';
const ORD = '(?:st|nd|rd|th)?';
const YEAR = '((?:19|20)\\d\\d)';

const PATTERNS: ReadonlyArray<{ re: RegExp; parts: (m: RegExpExecArray) => Partial<Ymd> | null }> =
  [
    {
      re: /\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b/g,
      parts: (m) => ({ y: num(m[1]), m: num(m[2]), d: num(m[3]) }),
    },
    {
      re: new RegExp(`\\b(\\d{1,2})${ORD}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR}\\b`, 'g'),
      parts: (m) => ({ d: num(m[1]), m: month(m[2]), y: num(m[3]) }),
    },
    {
      re: new RegExp(`\\b${MONTH}\\s+(\\d{1,2})${ORD},?\\s+${YEAR}\\b`, 'g'),
      parts: (m) => ({ m: month(m[1]), d: num(m[2]), y: num(m[3]) }),
    },
    {
      re: new RegExp(`\\b(early|mid|late)[\\s-]+${MONTH}(?:,?\\s+${YEAR})?\\b(?!\\s+\\d)`, 'g'),
      parts: (m) => ({ part: m[1] as Part, m: month(m[2]), ...(m[3] ? { y: num(m[3]) } : {}) }),
    },
    {
      re: new RegExp(`\\b${MONTH},?\\s+${YEAR}\\b`, 'g'),
      parts: (m) => ({ m: month(m[1]), y: num(m[2]) }),
    },
    {
      re: new RegExp(`\\b${MONTH}\\s+(\\d{1,2})${ORD}\\b(?!,?\\s*\\d)`, 'g'),
      parts: (m) => ({ m: month(m[1]), d: num(m[2]) }),
    },
    {
      re: new RegExp(`\\b(\\d{1,2})${ORD}\\s+(?:of\\s+)?${MONTH}(?![\\p{L}\\d]|,?\\s*\\d)`, 'gu'),
      parts: (m) => ({ d: num(m[1]), m: month(m[2]) }),
    },
    {
      re: new RegExp(
        `\\b(?:in|during|since|until|through|of|for|by|before|after|last|this|next|early|late|mid)\\s+${MONTH}\\b(?!\\s+\\d)`,
        'g',
      ),
      parts: (m) => ({ m: month(m[1]) }),
    },
    { re: /\b((?:19|20)\d\d)\b/g, parts: (m) => ({ y: num(m[1]) }) },
  ];

/** Which third of a month a mention names ("early May": days 1–10, "mid": 11–20, "late": 21 to the end). */
type Part = 'early' | 'mid' | 'late';

interface Ymd {
  y: number;
  m: number;
  d: number;
  part: Part;
}

const PART_DAYS: Record<Part, [number, number | null]> = {
  early: [1, 11],
  mid: [11, 21],
  late: [21, null],
};

/** A time named by a cue: creation times in [startUs, endUs) and the date keys within it. */
export interface TimeCue {
  startUs: number;
  endUs: number;
  keys: string[];
}

/**
 * Date keys of every date written in `text`, without repeats, which the lexical index keeps beside
 * its words: `§d:2023-05-08` (a day), `§m:2023-05` (a month), `§y:2023` (a year) and `§b:05` (a
 * month of any year). A full date gives all four.
 */
export function dateKeysIn(text: string): string[] {
  const keys = new Set<string>();
  for (const p of mentions(text)) for (const k of keysOf(p)) keys.add(k);
  return [...keys];
}

/**
 * The time a cue names, or null when it names none: absolute ("on 8 May 2023", "in May 2023",
 * "2022", "in June") or relative to `nowUs` ("today", "yesterday", "last week", "this month",
 * "3 days ago", "last year"), as a window of creation times plus the date keys that fall in it.
 * Several mentions give their union's span.
 */
export function timeCueOf(cue: string, nowUs: number): TimeCue | null {
  const windows: TimeCue[] = [];
  for (const p of mentions(cue)) windows.push(absolute(p, nowUs));
  const relative = relativeWindow(cue.toLowerCase(), nowUs);
  if (relative) windows.push(relative);
  if (windows.length === 0) return null;
  return {
    startUs: Math.min(...windows.map((w) => w.startUs)),
    endUs: Math.max(...windows.map((w) => w.endUs)),
    keys: [...new Set(windows.flatMap((w) => w.keys))],
  };
}

/** Dates mentioned in a text, most specific first; a span taken by one pattern is not read again. */
function mentions(text: string): Array<Partial<Ymd>> {
  const lower = text.toLowerCase();
  const taken: Array<[number, number]> = [];
  const out: Array<Partial<Ymd>> = [];
  for (const { re, parts } of PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(lower); m !== null; m = re.exec(lower)) {
      const start = m.index;
      const end = start + m[0].length;
      if (taken.some(([a, b]) => start < b && end > a)) continue;
      const p = parts(m);
      if (p === null || !valid(p)) continue;
      taken.push([start, end]);
      out.push(p);
    }
  }
  return out;
}

function valid(p: Partial<Ymd>): boolean {
  if (p.m !== undefined && (p.m < 1 || p.m > 12)) return false;
  if (p.d !== undefined && (p.d < 1 || p.d > 31)) return false;
  return p.y !== undefined || p.m !== undefined;
}

function keysOf(p: Partial<Ymd>): string[] {
  const keys: string[] = [];
  if (p.y !== undefined && p.m !== undefined && p.d !== undefined) keys.push(dayKey(p.y, p.m, p.d));
  if (p.y !== undefined && p.m !== undefined) keys.push(monthKey(p.y, p.m));
  if (p.y !== undefined) keys.push(`§y:${p.y}`);
  if (p.m !== undefined) keys.push(`§b:${pad(p.m)}`);
  return keys;
}

/**
 * The window of an absolute mention; a month (or a day of a month) without a year is its latest
 * occurrence up to now.
 */
function absolute(p: Partial<Ymd>, nowUs: number): TimeCue {
  if (p.part !== undefined && p.m !== undefined) {
    const whole = absolute({ m: p.m, ...(p.y === undefined ? {} : { y: p.y }) }, nowUs);
    const start = new Date(whole.startUs / 1000);
    const [from, to] = PART_DAYS[p.part];
    const [y, m] = [start.getUTCFullYear(), start.getUTCMonth() + 1];
    return window(utc(y, m, from), to === null ? whole.endUs : utc(y, m, to));
  }
  if (p.y === undefined) {
    const now = new Date(nowUs / 1000);
    const m = p.m as number;
    if (p.d !== undefined) {
      const passed =
        m - 1 < now.getUTCMonth() || (m - 1 === now.getUTCMonth() && p.d <= now.getUTCDate());
      const y = passed ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
      return { startUs: utc(y, m, p.d), endUs: utc(y, m, p.d + 1), keys: [dayKey(y, m, p.d)] };
    }
    const y = m - 1 <= now.getUTCMonth() ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
    return { startUs: utc(y, m, 1), endUs: utc(y, m + 1, 1), keys: [`§b:${pad(m)}`] };
  }
  if (p.m === undefined)
    return { startUs: utc(p.y, 1, 1), endUs: utc(p.y + 1, 1, 1), keys: [`§y:${p.y}`] };
  if (p.d === undefined)
    return { startUs: utc(p.y, p.m, 1), endUs: utc(p.y, p.m + 1, 1), keys: [monthKey(p.y, p.m)] };
  return {
    startUs: utc(p.y, p.m, p.d),
    endUs: utc(p.y, p.m, p.d + 1),
    keys: [dayKey(p.y, p.m, p.d)],
  };
}

const DAY_US = 86_400_000_000;
const UNITS: Record<string, 'day' | 'week' | 'month' | 'year'> = {
  day: 'day',
  days: 'day',
  week: 'week',
  weeks: 'week',
  month: 'month',
  months: 'month',
  year: 'year',
  years: 'year',
};
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};

/** today, yesterday, this/last week|month|year, N units ago. */
function relativeWindow(cue: string, nowUs: number): TimeCue | null {
  const now = new Date(nowUs / 1000);
  const today = utc(now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate());
  if (/\btoday\b/.test(cue)) return window(today, nowUs + 1);
  if (/\byesterday\b/.test(cue)) return window(today - DAY_US, today);
  const ago =
    /\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(days?|weeks?|months?|years?)\s+ago\b/.exec(
      cue,
    );
  if (ago) {
    const n = /^\d+$/.test(ago[1] as string)
      ? Number(ago[1])
      : (NUMBER_WORDS[ago[1] as string] ?? 1);
    return calendarUnit(UNITS[ago[2] as string] ?? 'day', -n, now);
  }
  const rel = /\b(this|last|past|previous)\s+(week|month|year)\b/.exec(cue);
  if (rel)
    return calendarUnit(rel[2] as 'week' | 'month' | 'year', rel[1] === 'this' ? 0 : -1, now);
  return null;
}

/** The calendar day/week/month/year `offset` units from the one holding `now`. */
function calendarUnit(unit: 'day' | 'week' | 'month' | 'year', offset: number, now: Date): TimeCue {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth() + 1;
  const d = now.getUTCDate();
  switch (unit) {
    case 'day':
      return window(utc(y, m, d + offset), utc(y, m, d + offset + 1));
    case 'week': {
      const monday = d - ((now.getUTCDay() + 6) % 7);
      return window(utc(y, m, monday + 7 * offset), utc(y, m, monday + 7 * offset + 7));
    }
    case 'month':
      return window(utc(y, m + offset, 1), utc(y, m + offset + 1, 1));
    case 'year':
      return window(utc(y + offset, 1, 1), utc(y + offset + 1, 1, 1));
  }
}

/** A window with the keys of the days (≤ 31 days), months (< a year) or years it spans. */
function window(startUs: number, endUs: number): TimeCue {
  const keys: string[] = [];
  const days = (endUs - startUs) / DAY_US;
  for (let t = startUs; t < endUs; ) {
    const dt = new Date(t / 1000);
    const [y, m, d] = [dt.getUTCFullYear(), dt.getUTCMonth() + 1, dt.getUTCDate()];
    if (days <= 31) {
      keys.push(dayKey(y, m, d));
      t = utc(y, m, d + 1);
    } else if (days < 365) {
      keys.push(monthKey(y, m));
      t = utc(y, m + 1, 1);
    } else {
      keys.push(`§y:${y}`);
      t = utc(y + 1, 1, 1);
    }
  }
  return { startUs, endUs, keys };
}

function utc(y: number, m: number, d: number): number {
  return Date.UTC(y, m - 1, d) * 1000;
}

function dayKey(y: number, m: number, d: number): string {
  return `§d:${y}-${pad(m)}-${pad(d)}`;
}

function monthKey(y: number, m: number): string {
  return `§m:${y}-${pad(m)}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function num(s: string | undefined): number {
  return Number(s);
}

function month(s: string | undefined): number {
  return MONTHS.indexOf((s ?? '').replace('.', '').slice(0, 3) as (typeof MONTHS)[number]) + 1;
}
