/**
 * @module model/time — times as callers write them and as replies show them. A written time is
 * an integer of microseconds since the Unix epoch or an ISO 8601 / RFC 3339 string: a date
 * (`2026-03-01`, the start of that day in UTC) or a date-time with a UTC offset (`Z`, `+02:00`;
 * one without an offset is refused rather than guessed), up to nine fraction digits (truncated to
 * microseconds). Every time lies in 0 … 2^53 − 1 µs (1970-01-01T00:00:00Z to
 * 2255-06-05T23:47:34.740991Z), the range a JSON number holds exactly; as text, years 1970 to 2254
 * (a pattern cannot stop at June 2255). Replies write times as
 * UTC with six fraction digits, so an ISO string and its integer say the same microsecond.
 */

/** A time as a caller writes it: µs since the epoch, or ISO 8601 text. */
export type TimeInput = number | string;

/** The latest time: the largest integer a JSON number (an IEEE double) holds exactly, in µs. */
export const MAX_TIME_US = Number.MAX_SAFE_INTEGER;

const D2 = '[0-9]{2}';
/**
 * The shape of a written time, as JSON Schema states it (ASCII digits only; what a pattern cannot
 * say — days in a month, the range — `parseTime` checks).
 */
export const TIME_PATTERN =
  '^(19[7-9][0-9]|2[01][0-9]{2}|22[0-4][0-9]|225[0-4])-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])' +
  `([Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$`;

/** Looser than the pattern, so a near miss can be told what is wrong with it. */
const LOOSE = new RegExp(
  `^([0-9]{4})-(${D2})-(${D2})(?:([Tt ])(${D2}):(${D2})(?::(${D2}))?(?:\\.([0-9]+))?([Zz]|[+-]${D2}:?${D2}|[+-]${D2})?)?$`,
);

export type TimeParse = { us: number } | { problem: string };

/** A written time string → µs since the epoch, or what is wrong with it (to follow the field's name). */
export function parseTime(text: string): TimeParse {
  const m = LOOSE.exec(text);
  if (m === null) return { problem: shapeProblem(text) };
  const [, y, mo, d, sep, h, mi, s, frac, offset] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12) return { problem: `'${text}': month ${mo} does not exist` };
  const days = daysIn(year, month);
  if (day < 1 || day > days)
    return {
      problem: `'${text}': day ${d} does not exist (${MONTHS[month - 1]} ${y} has ${days} days)`,
    };
  const dayUs = Date.UTC(year, month - 1, day) * 1000;
  if (sep === undefined) return inRange(text, dayUs);
  if (sep === ' ')
    return { problem: `'${text}': separate the date and the time with T, not a space` };
  if (s === undefined) return { problem: `'${text}': give the seconds too (HH:MM:SS)` };
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)
    return {
      problem: `'${text}': ${h}:${mi}:${s} is not a time of day (00:00:00 to 23:59:59; leap seconds are not taken)`,
    };
  if (frac !== undefined && frac.length > 9)
    return { problem: `'${text}': at most 9 fraction digits are taken` };
  if (offset === undefined)
    return {
      problem: `'${text}' has no UTC offset: end it with Z for UTC, or give the offset, such as +02:00`,
    };
  const offsetUs = offsetOf(offset);
  if (offsetUs === null)
    return {
      problem: `'${text}': the UTC offset ${offset} must be Z or ±HH:MM (hours 00–23, minutes 00–59)`,
    };
  const fracUs = frac === undefined ? 0 : Number(frac.slice(0, 6).padEnd(6, '0'));
  const us =
    dayUs + ((Number(h) * 60 + Number(mi)) * 60 + Number(s)) * 1_000_000 + fracUs - offsetUs;
  return inRange(text, us);
}

/** A written time → µs since the epoch, or what is wrong with it. */
export function timeFrom(value: TimeInput): TimeParse {
  if (typeof value === 'string') return parseTime(value);
  if (value > MAX_TIME_US)
    return { problem: `${value} is after the latest time, ${MAX_TIME_US} µs (2^53 − 1)` };
  const problem = timeUsProblem(value);
  return problem === null ? { us: value } : { problem };
}

/** µs since the epoch → `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
export function isoFromUs(us: number): string {
  const ms = Math.floor(us / 1000);
  const text = new Date(ms).toISOString();
  return `${text.slice(0, -1)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

/** What is wrong with an integer time (null: nothing). */
export function timeUsProblem(us: number): string | null {
  if (!Number.isSafeInteger(us)) return `${us} is not an integer number of microseconds`;
  if (us < 0)
    return `${us} is before 1970-01-01T00:00:00Z (times are µs since the Unix epoch, not negative)`;
  return null;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function inRange(text: string, us: number): TimeParse {
  if (us < 0) return { problem: `'${text}' is before 1970-01-01T00:00:00Z` };
  if (us > MAX_TIME_US)
    return {
      problem: `'${text}' is after ${isoFromUs(MAX_TIME_US)}, the latest time taken (2^53 − 1 µs)`,
    };
  return { us };
}

function offsetOf(text: string): number | null {
  if (text === 'Z' || text === 'z') return 0;
  const m = /^([+-])([0-9]{2}):([0-9]{2})$/.exec(text);
  if (m === null) return null;
  const [, sign, h, mi] = m;
  if (Number(h) > 23 || Number(mi) > 59) return null;
  return (sign === '-' ? -1 : 1) * (Number(h) * 60 + Number(mi)) * 60_000_000;
}

function shapeProblem(text: string): string {
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  if (/^-?[0-9]+(\.[0-9]+)?$/.test(text))
    return `'${shown}' is a number in a string: send microseconds as a JSON number, or an ISO 8601 time`;
  return `'${shown}' is not a time: give an ISO 8601 date (YYYY-MM-DD) or date-time with an offset (YYYY-MM-DDTHH:MM:SS[.ffffff]Z or ±HH:MM), or integer microseconds since the epoch`;
}
