/**
 * @module model/json-shape — the shape limits of client JSON (nesting depth, keys per object),
 * checked without recursion so that no input can exhaust the stack of the checker itself.
 * Deeply nested values are refused at every edge: structured clone, msgpack and JSON.stringify
 * all recurse, and a value nested a few thousand levels deep makes a shard's reply undecodable.
 */
import { stringProblem } from './unicode.ts';

export const JSON_LIMITS = {
  /** Levels of objects and arrays, the outermost counting as 1. */
  depth: 32,
  /** Members of one object. */
  keysPerObject: 1024,
} as const;

/**
 * Deepest nesting of objects and arrays in JSON text, scanning at most until `stopAbove` is passed
 * (strings are skipped, so brackets inside them do not count). Linear in the text.
 */
export function jsonTextDepth(text: string, stopAbove: number = JSON_LIMITS.depth): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > stopAbove) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/**
 * The first way `value` breaks the limits, as a sentence naming the place (`field.a.b`), or null.
 * Text that is not valid Unicode (a lone surrogate in a string or a key) breaks them too.
 * Iterative, so any depth is safe to check.
 */
export function jsonShapeProblem(field: string, value: unknown): string | null {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [
    { v: value, path: field, depth: 1 },
  ];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { v, path, depth } = top;
    if (typeof v === 'string') {
      const problem = stringProblem(path, v);
      if (problem !== null) return problem;
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth > JSON_LIMITS.depth)
      return `${path} nests objects and arrays deeper than the limit of ${JSON_LIMITS.depth} levels`;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++)
        stack.push({ v: v[i], path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > JSON_LIMITS.keysPerObject)
      return `${path} has ${keys.length} keys; the limit is ${JSON_LIMITS.keysPerObject} keys per object`;
    for (const k of keys) {
      const problem = stringProblem(`${path}.${k.toWellFormed()}`, k, 'key');
      if (problem !== null) return problem;
      stack.push({ v: (v as Record<string, unknown>)[k], path: `${path}.${k}`, depth: depth + 1 });
    }
  }
  return null;
}

/** Whether objects and arrays in `value` nest at most `limit` levels (iterative, any depth is safe). */
export function withinDepth(value: unknown, limit: number = JSON_LIMITS.depth): boolean {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (typeof top.v !== 'object' || top.v === null) continue;
    if (top.depth > limit) return false;
    for (const child of Object.values(top.v))
      if (typeof child === 'object' && child !== null)
        stack.push({ v: child, depth: top.depth + 1 });
  }
  return true;
}

export const CUT_MARKER = '[nested deeper than the limit; removed]';

/**
 * A copy of `value` whose objects and arrays below `limit` levels are replaced by CUT_MARKER.
 * For values stored before the limit existed: the recursion stops at `limit`, so it is safe.
 */
export function cutAtDepth(value: unknown, limit: number = JSON_LIMITS.depth, depth = 1): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > limit) return CUT_MARKER;
  if (Array.isArray(value)) return value.map((v) => cutAtDepth(v, limit, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, cutAtDepth(v, limit, depth + 1)]),
  );
}
