import { describe, expect, it } from 'vitest';
import { paddedChunks } from '../../src/embedding/padding.ts';

describe('paddedChunks', () => {
  it('keeps equal lengths together up to maxBatch', () => {
    expect(paddedChunks(Array<number>(20).fill(12), 8, 1.15)).toEqual([8, 8, 4]);
  });

  it('starts a new run when padding to the longest would exceed the ratio', () => {
    // 10,10,10 then 20: padded 80 vs real 50 → cut; 20,21,22: padded 66 vs 63 → kept.
    expect(paddedChunks([10, 10, 10, 20, 21, 22], 8, 1.15)).toEqual([3, 3]);
  });

  it('covers every text exactly once, in order', () => {
    const lengths = Array.from({ length: 100 }, (_, i) => 5 + Math.floor(i / 3)).sort(
      (a, b) => a - b,
    );
    const sizes = paddedChunks(lengths, 8, 1.15);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(100);
    let at = 0;
    for (const size of sizes) {
      const run = lengths.slice(at, at + size);
      const longest = run[run.length - 1] ?? 0;
      const real = run.reduce((a, b) => a + b, 0);
      expect(size).toBeLessThanOrEqual(8);
      if (size > 1) expect(longest * size).toBeLessThanOrEqual(1.15 * real);
      at += size;
    }
  });

  it('gives one run per text when no padding is allowed between different lengths', () => {
    expect(paddedChunks([3, 4, 5], 8, 1)).toEqual([1, 1, 1]);
    expect(paddedChunks([], 8, 1.15)).toEqual([]);
  });
});
