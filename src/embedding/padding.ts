/**
 * @module embedding/padding — how a length-sorted batch of texts is cut into model runs.
 */

/**
 * Measured with native-bench/micro/embedding.ts-style runs of 256 corpus sentences (10–70 tokens)
 * on 2 ONNX threads: one run of 32 ≈ 120 texts/s, runs of ≤ 8 within 1.15× padding ≈ 155–160/s,
 * one text per run ≈ 135/s.
 */
export const DEFAULT_MAX_BATCH = 8;
export const DEFAULT_MAX_PADDING = 1.15;

/**
 * Sizes of the consecutive runs to cut `sortedLengths` (token counts, ascending) into. A run grows
 * while it holds fewer than `maxBatch` texts and padding every text to the run's longest keeps the
 * tokens computed within `maxPadding` × the real ones. Padding is not free: every padded position
 * goes through every layer, and attention is quadratic in the padded length — measured on this
 * model, one batch of 32 mixed-length sentences cost more per text than embedding them one by one.
 */
export function paddedChunks(
  sortedLengths: readonly number[],
  maxBatch: number,
  maxPadding: number,
): number[] {
  const sizes: number[] = [];
  let count = 0;
  let real = 0;
  for (const len of sortedLengths) {
    // Ascending order: the newcomer is the run's longest, so the padded total is len × (count + 1).
    if (count > 0 && (count === maxBatch || len * (count + 1) > maxPadding * (real + len))) {
      sizes.push(count);
      count = 0;
      real = 0;
    }
    count += 1;
    real += len;
  }
  if (count > 0) sizes.push(count);
  return sizes;
}
