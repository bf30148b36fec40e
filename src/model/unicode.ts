/**
 * @module model/unicode — text is valid Unicode everywhere (issue 23). A JavaScript string can hold
 * a lone UTF-16 surrogate (from a JSON `\ud800` escape, or protobufjs decoding the bytes ED A0 80);
 * no UTF-8 encoder can write it faithfully and strict JSON parsers (pydantic's, used by the Python
 * MCP SDK for every message) refuse its escape. Edges refuse such text (`loneSurrogate` and
 * `unicodeProblem`); replies repair what was stored before the check (`wellFormedDeep`,
 * `repairJsonText`), replacing each lone surrogate with U+FFFD as the UTF-8 encoders do.
 */

/** Where the first lone surrogate in `s` is (a UTF-16 index), or -1 when `s` is well formed. */
export function loneSurrogate(s: string): number {
  if (s.isWellFormed()) return -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
    else return i;
  }
  return -1;
}

/** The sentence refusing `s` as the value (or a key) at `path`, or null when it is well formed. */
export function stringProblem(
  path: string,
  s: string,
  what: 'value' | 'key' = 'value',
): string | null {
  const at = loneSurrogate(s);
  if (at < 0) return null;
  const unit = s.charCodeAt(at).toString(16);
  return `${path}${what === 'key' ? ' has a key that' : ''} is not valid Unicode: a lone UTF-16 surrogate (\\u${unit}) at character ${at}`;
}

/**
 * The first text in `value` (strings, object keys, at any depth) that is not valid Unicode, as a
 * sentence naming its place (`field.a[2]`), or null. Byte buffers and numbers are skipped.
 * Iterative, so any depth is safe.
 */
export function unicodeProblem(field: string, value: unknown): string | null {
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: field }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { v, path } = top;
    if (typeof v === 'string') {
      const problem = stringProblem(path, v);
      if (problem !== null) return problem;
      continue;
    }
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++)
        if (typeof v[i] === 'object' || typeof v[i] === 'string')
          stack.push({ v: v[i], path: `${path}[${i}]` });
      continue;
    }
    for (const [k, child] of Object.entries(v)) {
      const problem = stringProblem(`${path}.${k.toWellFormed()}`, k, 'key');
      if (problem !== null) return problem;
      if (typeof child === 'object' || typeof child === 'string')
        stack.push({ v: child, path: `${path}.${k}` });
    }
  }
  return null;
}

/**
 * `value` with every lone surrogate in its strings and keys replaced by U+FFFD. Returns `value`
 * itself when there is nothing to repair (the usual case: no copy is made). Arrays of numbers
 * (embeddings) and byte buffers are not looked into.
 */
export function wellFormedDeep<T>(value: T): T {
  return repaired(value, 0) as T;
}

/** Deeper than any reply nests (client JSON is limited to 32 levels); below it, left as it is. */
const REPAIR_DEPTH = 64;

function repaired(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return v.isWellFormed() ? v : v.toWellFormed();
  if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || depth > REPAIR_DEPTH)
    return v;
  if (Array.isArray(v)) {
    if (v.length > 0 && typeof v[0] === 'number') return v;
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const r = repaired(v[i], depth + 1);
      if (r !== v[i]) (out ??= v.slice())[i] = r;
    }
    return out ?? v;
  }
  let out: Record<string, unknown> | null = null;
  const obj = v as Record<string, unknown>;
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) continue;
    const child = obj[k];
    if (
      typeof child !== 'string' &&
      (typeof child !== 'object' || child === null) &&
      k.isWellFormed()
    )
      continue;
    const r = repaired(child, depth + 1);
    const key = k.isWellFormed() ? k : k.toWellFormed();
    if (r === child && key === k) continue;
    out ??= { ...(v as Record<string, unknown>) };
    if (key !== k) delete out[k];
    out[key] = r;
  }
  return out ?? v;
}

/**
 * JSON text from JSON.stringify with every lone-surrogate escape (`\ud800`, which JSON.stringify
 * writes for a lone surrogate and never for a pair) replaced by `\ufffd`. An escaped backslash
 * before `u` (`\\ud800`, the six characters themselves) is left alone. A scan without a hit
 * costs one indexOf.
 */
export function repairJsonText(text: string): string {
  if (!text.includes('\\ud')) return text;
  return text.replace(LONE_ESCAPE, '$1\\ufffd');
}

const LONE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/** JSON.stringify whose text holds no lone-surrogate escape (see `repairJsonText`). */
export function wellFormedJson(value: unknown): string {
  return repairJsonText(JSON.stringify(value));
}
