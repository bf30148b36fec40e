/** Dates in memories and cues (recall/dates.ts) and weighted reciprocal rank fusion (recall/fusion.ts). */
import { describe, expect, it } from 'vitest';
import { dateKeysIn, timeCueOf } from '../../src/recall/dates.ts';
import { reciprocalRankFusion } from '../../src/recall/fusion.ts';

const us = (iso: string): number => Date.parse(iso) * 1000;
/** Wednesday 2026-11-18, 15:00 UTC. */
const NOW = us('2026-11-18T15:00:00Z');

describe('dateKeysIn', () => {
  it('reads day-month-year, month-day-year, ISO, month-year and years', () => {
    expect(dateKeysIn('[1:56 pm on 8 May, 2023] Caroline: hi').sort()).toEqual([
      '§b:05',
      '§d:2023-05-08',
      '§m:2023-05',
      '§y:2023',
    ]);
    expect(dateKeysIn('Due October 13th, 2023.')).toEqual(
      expect.arrayContaining(['§d:2023-10-13', '§m:2023-10']),
    );
    expect(dateKeysIn('released 2024-02-29')).toEqual(
      expect.arrayContaining(['§d:2024-02-29', '§m:2024-02', '§y:2024', '§b:02']),
    );
    expect(dateKeysIn('back in Sept 2021').sort()).toEqual(['§b:09', '§m:2021-09', '§y:2021']);
    expect(dateKeysIn('we went camping in June').sort()).toEqual(['§b:06']);
    expect(dateKeysIn('painted it in 2022').sort()).toEqual(['§y:2022']);
  });

  it('ignores what is not a date', () => {
    expect(dateKeysIn('I may go, room 404, 13:45, version 3.5, 99 problems')).toEqual([]);
    expect(dateKeysIn('on 45 March 2023').sort()).toEqual(['§b:03', '§m:2023-03', '§y:2023']);
  });
});

describe('timeCueOf', () => {
  it('absolute: a day, a month, a year; a month alone is its latest occurrence', () => {
    expect(timeCueOf('What did Maria do on May 3, 2023?', NOW)).toEqual({
      startUs: us('2023-05-03'),
      endUs: us('2023-05-04'),
      keys: ['§d:2023-05-03'],
    });
    expect(timeCueOf('workout class in December 2023', NOW)).toEqual({
      startUs: us('2023-12-01'),
      endUs: us('2024-01-01'),
      keys: ['§m:2023-12'],
    });
    expect(timeCueOf('beach trips in 2023', NOW)).toEqual({
      startUs: us('2023-01-01'),
      endUs: us('2024-01-01'),
      keys: ['§y:2023'],
    });
    expect(timeCueOf('camping in June', NOW)).toEqual({
      startUs: us('2026-06-01'),
      endUs: us('2026-07-01'),
      keys: ['§b:06'],
    });
    expect(timeCueOf('plans for December', NOW)?.startUs).toBe(us('2025-12-01'));
  });

  it('a day of a month without a year is its latest occurrence up to now; early, mid and late are thirds of a month', () => {
    expect(timeCueOf('what did he weigh on February 9th?', NOW)).toEqual({
      startUs: us('2026-02-09'),
      endUs: us('2026-02-10'),
      keys: ['§d:2026-02-09'],
    });
    expect(timeCueOf('the 9th of February', NOW)?.startUs).toBe(us('2026-02-09'));
    expect(timeCueOf('on 18 November', NOW)?.startUs).toBe(us('2026-11-18'));
    expect(timeCueOf('on November 19', NOW)?.startUs).toBe(us('2025-11-19'));
    expect(timeCueOf('in early January', NOW)).toMatchObject({
      startUs: us('2026-01-01'),
      endUs: us('2026-01-11'),
    });
    expect(timeCueOf('mid-March 2024', NOW)).toMatchObject({
      startUs: us('2024-03-11'),
      endUs: us('2024-03-21'),
    });
    expect(timeCueOf('late February 2024', NOW)).toMatchObject({
      startUs: us('2024-02-21'),
      endUs: us('2024-03-01'),
    });
    expect(timeCueOf('late February 2024', NOW)?.keys).toHaveLength(9);
    // In a memory, a day without a year still names only its month of any year.
    expect(dateKeysIn('see you on 9 February')).toEqual(['§b:02']);
    expect(dateKeysIn('in early January 2025').sort()).toEqual(['§b:01', '§m:2025-01', '§y:2025']);
    expect(timeCueOf('at 3 mayors', NOW)).toBeNull();
  });

  it('relative to now: today, yesterday, this/last week (from Monday), last month, N units ago', () => {
    expect(timeCueOf('what happened today', NOW)).toMatchObject({
      startUs: us('2026-11-18'),
      keys: ['§d:2026-11-18'],
    });
    expect(timeCueOf('Yesterday I said', NOW)).toEqual({
      startUs: us('2026-11-17'),
      endUs: us('2026-11-18'),
      keys: ['§d:2026-11-17'],
    });
    const lastWeek = timeCueOf('what did we decide last week?', NOW);
    expect(lastWeek).toMatchObject({ startUs: us('2026-11-09'), endUs: us('2026-11-16') });
    expect(lastWeek?.keys).toHaveLength(7);
    expect(timeCueOf('this week', NOW)).toMatchObject({
      startUs: us('2026-11-16'),
      endUs: us('2026-11-23'),
    });
    expect(timeCueOf('bills from last month', NOW)).toMatchObject({
      startUs: us('2026-10-01'),
      endUs: us('2026-11-01'),
    });
    expect(timeCueOf('3 days ago', NOW)).toMatchObject({
      startUs: us('2026-11-15'),
      endUs: us('2026-11-16'),
    });
    expect(timeCueOf('two years ago', NOW)).toMatchObject({
      startUs: us('2024-01-01'),
      endUs: us('2025-01-01'),
      keys: ['§y:2024'],
    });
    expect(timeCueOf('last year', NOW)).toEqual({
      startUs: us('2025-01-01'),
      endUs: us('2026-01-01'),
      keys: ['§y:2025'],
    });
    expect(timeCueOf('2 months ago', NOW)).toMatchObject({
      startUs: us('2026-09-01'),
      endUs: us('2026-10-01'),
    });
    expect(timeCueOf('2 months ago', NOW)?.keys).toHaveLength(30);
  });

  it('a cue that names no time gives null', () => {
    expect(timeCueOf('what does Alice drink?', NOW)).toBeNull();
    expect(timeCueOf('may I ask about the weekend', NOW)).toBeNull();
  });
});

describe('reciprocal rank fusion', () => {
  it('sums weight / (k + rank) over the lists, k = 60', () => {
    const fused = reciprocalRankFusion([
      { weight: 1, ids: ['a', 'b', 'c'] },
      { weight: 0.5, ids: ['c', 'd'] },
    ]);
    expect(fused.get('a')).toBeCloseTo(1 / 61, 12);
    expect(fused.get('c')).toBeCloseTo(1 / 63 + 0.5 / 61, 12);
    expect(fused.get('d')).toBeCloseTo(0.5 / 62, 12);
  });
});
