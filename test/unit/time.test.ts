import { describe, expect, it } from 'vitest';
import { Type as T } from '@sinclair/typebox';
import { compile } from '../../src/api/compile.ts';
import { NullableTime, Time } from '../../src/api/time.ts';
import { isoFromUs, MAX_TIME_US, parseTime, TIME_PATTERN, timeFrom } from '../../src/model/time.ts';

const us = (text: string): number => {
  const t = parseTime(text);
  if ('problem' in t) throw new Error(t.problem);
  return t.us;
};
const problem = (text: string): string => {
  const t = parseTime(text);
  return 'problem' in t ? t.problem : `accepted as ${t.us}`;
};

describe('written times (model/time)', () => {
  it('reads dates as the start of the day in UTC and date-times with their offset', () => {
    expect(us('2026-03-01')).toBe(Date.UTC(2026, 2, 1) * 1000);
    expect(us('2026-03-01T09:30:00Z')).toBe(Date.UTC(2026, 2, 1, 9, 30) * 1000);
    expect(us('2026-03-01T11:30:00+02:00')).toBe(Date.UTC(2026, 2, 1, 9, 30) * 1000);
    expect(us('2026-03-01T04:00:00-05:30')).toBe(Date.UTC(2026, 2, 1, 9, 30) * 1000);
    expect(us('2026-03-01t09:30:00z')).toBe(Date.UTC(2026, 2, 1, 9, 30) * 1000);
    expect(us('1970-01-01T00:00:00Z')).toBe(0);
  });

  it('keeps microseconds and truncates digits beyond them', () => {
    const base = Date.UTC(2026, 2, 1, 9, 30) * 1000;
    expect(us('2026-03-01T09:30:00.5Z')).toBe(base + 500_000);
    expect(us('2026-03-01T09:30:00.123456Z')).toBe(base + 123_456);
    expect(us('2026-03-01T09:30:00.123456789Z')).toBe(base + 123_456);
    expect(problem('2026-03-01T09:30:00.1234567890Z')).toMatch(/at most 9 fraction digits/);
  });

  it('refuses a date-time without an offset instead of guessing one', () => {
    expect(problem('2026-03-01T09:30:00')).toMatch(/no UTC offset: end it with Z for UTC/);
  });

  it('says what is wrong with a near miss', () => {
    expect(problem('2026-02-30')).toMatch(/day 30 does not exist \(February 2026 has 28 days\)/);
    expect(us('2028-02-29')).toBe(Date.UTC(2028, 1, 29) * 1000);
    expect(problem('2026-13-01')).toMatch(/month 13 does not exist/);
    expect(problem('2026-03-01T24:00:00Z')).toMatch(/is not a time of day/);
    expect(problem('2026-03-01 09:30:00Z')).toMatch(/with T, not a space/);
    expect(problem('2026-03-01T09:30Z')).toMatch(/give the seconds too/);
    expect(problem('2026-03-01T09:30:00+0200')).toMatch(/must be Z or ±HH:MM/);
    expect(problem('1772359200000000')).toMatch(/a number in a string/);
    expect(problem('next tuesday')).toMatch(/is not a time: give an ISO 8601 date/);
    expect(problem('1969-12-31')).toMatch(/before 1970-01-01/);
    expect(problem('1970-01-01T00:30:00+01:00')).toMatch(/before 1970-01-01/);
    expect(problem('2299-01-01')).toMatch(/is after 2255-06-05T23:47:34.740991Z/);
  });

  it('integers: non-negative safe integers of microseconds', () => {
    expect(timeFrom(5)).toEqual({ us: 5 });
    expect(timeFrom(MAX_TIME_US)).toEqual({ us: MAX_TIME_US });
    expect(timeFrom(-1)).toMatchObject({ problem: expect.stringMatching(/before 1970/) });
    expect(timeFrom(1.5)).toMatchObject({ problem: expect.stringMatching(/not an integer/) });
  });

  it('writes UTC with six fraction digits, and reads back what it writes', () => {
    expect(isoFromUs(0)).toBe('1970-01-01T00:00:00.000000Z');
    expect(isoFromUs(1_772_357_400_123_456)).toBe('2026-03-01T09:30:00.123456Z');
    expect(isoFromUs(MAX_TIME_US)).toBe('2255-06-05T23:47:34.740991Z');
    for (const t of [0, 1, 999, 1_772_357_400_123_456, MAX_TIME_US])
      expect(us(isoFromUs(t))).toBe(t);
  });

  it('the schema pattern takes every string the parser takes, in the range', () => {
    const re = new RegExp(TIME_PATTERN, 'u');
    for (const text of [
      '2026-03-01',
      '2026-03-01T09:30:00Z',
      '2026-03-01T09:30:00.123456789-11:45',
      '2254-12-31T23:59:59.999999Z',
      isoFromUs(0),
    ]) {
      expect(re.test(text), text).toBe(true);
    }
    for (const text of [
      '2026-03-01T09:30:00',
      '26-03-01',
      '2026-3-1',
      '２０２６-03-01',
      '2026-03-01T09:30:00+0200',
      '2255-01-01',
    ])
      expect(re.test(text), text).toBe(false);
  });
});

describe('the Time schema at the edge (api/compile)', () => {
  const check = compile(
    T.Object({ at: T.Optional(Time('A time')), until: T.Optional(NullableTime('Or never')) }),
  );
  const message = (value: unknown): string => {
    try {
      check(value);
      return 'accepted';
    } catch (err) {
      return (err as Error).message;
    }
  };

  it('takes integers, ISO strings and (where nullable) null', () => {
    expect(message({ at: 1, until: null })).toBe('accepted');
    expect(message({ at: '2026-03-01T09:30:00Z', until: '2026-03-01' })).toBe('accepted');
  });

  it('names the field and what is wrong, not the schema branch', () => {
    expect(message({ at: '2026-03-01T09:30:00' })).toBe(
      "at '2026-03-01T09:30:00' has no UTC offset: end it with Z for UTC, or give the offset, such as +02:00",
    );
    expect(message({ until: 'soon' })).toMatch(/^until 'soon' is not a time/);
    expect(message({ at: -5 })).toMatch(/^at -5 is before 1970/);
    expect(message({ at: 2.5 })).toMatch(/^at 2.5 is not an integer/);
    expect(message({ at: 2 ** 60 })).toMatch(/^at \d+ is after the latest time/);
    expect(message({ at: true })).toMatch(
      /^at must be a time: integer microseconds since the epoch or an ISO 8601 string, got boolean/,
    );
    expect(message({ at: null })).toMatch(/^at must be a time: .* got null/);
  });
});
