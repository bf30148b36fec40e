/**
 * @module model/json-size — about how many bytes a value takes as JSON (`replyBytes`): strings by
 * their UTF-8 length plus quotes, numbers as 12 bytes, vectors element by element. What the
 * reply budgets count (router/reply-budget) and what chooses how a reply is serialised
 * (api/json-slices).
 */

/** Bytes a number takes in JSON, roughly (timestamps in µs are 16, scores 18, counts 1–4). */
const NUMBER_BYTES = 12;

/**
 * About how many bytes `value` takes as JSON. Iterative (any depth), O(values) and a scan of its
 * text (1,000 memories of 16 KB: a few milliseconds). With `stopAbove`, it stops counting once the
 * total is past it (and returns a total past it): a cheap "is it small?".
 */
export function replyBytes(value: unknown, stopAbove = Infinity): number {
  let total = 0;
  const stack: unknown[] = [value];
  for (
    let v = stack.pop();
    (v !== undefined || stack.length > 0) && total <= stopAbove;
    v = stack.pop()
  ) {
    if (typeof v === 'string') total += Buffer.byteLength(v) + 2;
    else if (typeof v === 'number') total += NUMBER_BYTES;
    else if (typeof v === 'boolean' || v === null || v === undefined) total += 5;
    else if (typeof v === 'bigint') total += 20;
    else if (ArrayBuffer.isView(v))
      total +=
        ('length' in v && typeof v.length === 'number' ? v.length : v.byteLength) * NUMBER_BYTES;
    else if (Array.isArray(v)) {
      total += 2 + v.length;
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (v instanceof Map) {
      total += 2;
      for (const [k, child] of v) {
        total += String(k).length + 4;
        stack.push(child);
      }
    } else if (typeof v === 'object') {
      total += 2;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        total += k.length + 4;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return total;
}
