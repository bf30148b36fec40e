/** Memory ids: monotonic ULIDs as hex; hex (any case) and ULID text accepted on input. */
import { describe, expect, it } from 'vitest';
import { hexToUlidText, IdGenerator, idTimeMs, parseId } from '../../src/model/ids.ts';

describe('IdGenerator', () => {
  it('produces 32 lowercase hex characters carrying the millisecond', () => {
    const id = new IdGenerator().next(1_700_000_000_123);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(idTimeMs(id)).toBe(1_700_000_000_123);
  });

  it('is strictly increasing within one millisecond', () => {
    const gen = new IdGenerator();
    const ids = Array.from({ length: 5000 }, () => gen.next(1_700_000_000_000));
    for (let i = 1; i < ids.length; i++)
      expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(idTimeMs(ids[0] as string)).toBe(1_700_000_000_000);
  });

  it('stays increasing when the clock goes backwards', () => {
    const gen = new IdGenerator();
    const a = gen.next(2_000_000_000_000);
    const b = gen.next(1_000_000_000_000);
    const c = gen.next(1_500_000_000_000);
    expect(b > a).toBe(true);
    expect(c > b).toBe(true);
  });

  it('starts a new random tail when the millisecond moves on', () => {
    const gen = new IdGenerator();
    const a = gen.next(1_000);
    const b = gen.next(1_001);
    expect(idTimeMs(b)).toBe(1_001);
    expect(b > a).toBe(true);
  });

  it('after observe(), later ids sort after the observed one even with an older clock', () => {
    const gen = new IdGenerator();
    const future = new IdGenerator().next(4_000_000_000_000);
    gen.observe(future);
    const next = gen.next(1_700_000_000_000);
    expect(next > future).toBe(true);
    // Observing an older id changes nothing.
    gen.observe(new IdGenerator().next(1_000));
    expect(gen.next(1_700_000_000_000) > next).toBe(true);
  });

  it('observe() after recovery keeps every new id above all recovered ids', () => {
    const before = new IdGenerator();
    const recovered = Array.from({ length: 100 }, () => before.next(1_700_000_000_000));
    const after = new IdGenerator();
    for (const id of [...recovered].reverse()) after.observe(id);
    const fresh = after.next(1_700_000_000_000);
    for (const id of recovered) expect(fresh > id).toBe(true);
  });
});

describe('parseId and hexToUlidText', () => {
  const hex = '0190a1b2c3d4e5f60718293a4b5c6d7e';

  it('accepts 32 hex characters in any case and returns lowercase', () => {
    expect(parseId(hex)).toBe(hex);
    expect(parseId(hex.toUpperCase())).toBe(hex);
    expect(parseId('0190A1b2C3d4E5f60718293A4b5C6d7E')).toBe(hex);
  });

  it('round-trips hex → ULID text → hex, in either case of the text', () => {
    const text = hexToUlidText(hex);
    expect(text).toMatch(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(parseId(text)).toBe(hex);
    expect(parseId(text.toLowerCase())).toBe(hex);
  });

  it('round-trips the extremes and generated ids', () => {
    const gen = new IdGenerator();
    for (const h of [
      '0'.repeat(32),
      'f'.repeat(32),
      '8'.padEnd(32, '0'),
      gen.next(),
      gen.next(0),
    ]) {
      const text = hexToUlidText(h);
      expect(text).toHaveLength(26);
      expect(parseId(text)).toBe(h);
      expect(hexToUlidText(parseId(text) as string)).toBe(text);
    }
    expect(hexToUlidText('0'.repeat(32))).toBe('0'.repeat(26));
    expect(hexToUlidText('f'.repeat(32))).toBe(`7${'Z'.repeat(25)}`);
  });

  it('decodes a known ULID', () => {
    // ULID spec example: ulid(1469918176385) → 01ARYZ6S41TSV4RRFFQ69G5FAV.
    const h = parseId('01ARYZ6S41TSV4RRFFQ69G5FAV');
    expect(h).not.toBeNull();
    expect(idTimeMs(h as string)).toBe(1_469_918_176_385);
  });

  it('rejects malformed ids', () => {
    for (const bad of [
      '',
      hex.slice(1),
      `${hex}0`,
      `${hex.slice(1)}g`,
      ` ${hex.slice(1)}`,
      `${hex.slice(0, 8)}-${hex.slice(9)}`,
      '01ARZ3NDEKTSV4RRFFQ69G5FA', // 25 chars
      '01ARZ3NDEKTSV4RRFFQ69G5FAVX', // 27 chars
      '81ARZ3NDEKTSV4RRFFQ69G5FAV', // overflows 128 bits
      '01ARZ3NDEKTSV4RRFFQ69G5FAU', // U is not Crockford base32
      '01ARZ3NDEKTSV4RRFFQ69G5FA!',
    ]) {
      expect(parseId(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});
