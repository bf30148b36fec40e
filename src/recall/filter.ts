/**
 * @module recall/filter — metadata filters on memories: parsed once from their JSON form (at the
 * edge, with errors naming the place), carried as plain data to the shard, compiled there into a
 * predicate that the indexes apply while they search.
 */
import { invalid } from '../errors/codes.ts';
import type { JsonValue, MemoryRecord } from '../model/memory.ts';
import { parseTime } from '../model/time.ts';

export type Scalar = string | number | boolean | null;

const ATTRIBUTES = [
  'importance',
  'created_at',
  'occurred_at',
  'updated_at',
  'last_accessed_at',
  'access_count',
  'kind',
  'entity_id',
  'speaker',
  'conversation_id',
  'message_id',
] as const;
type Attribute = (typeof ATTRIBUTES)[number];
/** Attributes that hold times (µs): a string compared with them is read as an ISO 8601 time. */
const TIMES: ReadonlySet<Attribute> = new Set([
  'created_at',
  'occurred_at',
  'updated_at',
  'last_accessed_at',
]);

/** A field: a memory attribute, or a path into the memory's context. */
export type FieldRef = { attr: Attribute } | { context: string[] };

export type FilterNode =
  | { op: 'and' | 'or'; of: FilterNode[] }
  | { op: 'eq' | 'ne'; field: FieldRef; value: Scalar }
  | { op: 'in' | 'nin'; field: FieldRef; values: Scalar[] }
  | { op: 'gt' | 'gte' | 'lt' | 'lte'; field: FieldRef; bound: number | string }
  | { op: 'exists'; field: FieldRef; exists: boolean };

const COMPARISONS = ['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'] as const;
/** Deepest nesting of $and / $or accepted, and most conditions in one filter. */
const MAX_DEPTH = 8;
const MAX_CONDITIONS = 256;

/**
 * Parses the JSON form (the style of Pinecone and Chroma metadata filters); throws invalid_input
 * naming the offending place (`where` is its root).
 *
 *   filter   := { clause, clause, … }                  every clause must hold (AND; {} holds always)
 *   clause   := "$and": [filter, …] | "$or": [filter, …]
 *             | FIELD: scalar                          equality
 *             | FIELD: { op: value, … }                every operator must hold
 *   op       := $eq $ne (scalar) | $in $nin ([scalar]) | $gt $gte $lt $lte (number or string)
 *             | $exists (boolean)
 *   (a string given for created_at, occurred_at, updated_at or last_accessed_at is an ISO 8601 time: model/time)
 *   FIELD    := importance | created_at | occurred_at | updated_at | last_accessed_at | access_count
 *             | kind | entity_id | speaker | conversation_id | message_id | context.KEY[.KEY…]
 */
export function parseFilter(json: unknown, where = 'filter'): FilterNode {
  const count = { n: 0 };
  return parseObject(json, where, 0, count);
}

function parseObject(
  json: unknown,
  where: string,
  depth: number,
  count: { n: number },
): FilterNode {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw invalid(`${where} must be an object`);
  if (depth > MAX_DEPTH) throw invalid(`${where} nests $and/$or deeper than ${MAX_DEPTH}`);
  const parts: FilterNode[] = [];
  for (const [key, value] of Object.entries(json)) {
    const at = `${where}.${key}`;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0)
        throw invalid(`${at} must be a non-empty array of filters`);
      parts.push({
        op: key === '$and' ? 'and' : 'or',
        of: value.map((f, i) => parseObject(f, `${at}[${i}]`, depth + 1, count)),
      });
    } else if (key.startsWith('$')) {
      throw invalid(
        `${at}: unknown operator '${key}' here; at this level use $and, $or or a field name`,
      );
    } else {
      parts.push(...parseField(parseFieldRef(key, at), value, at, count));
    }
  }
  // An empty object has no condition: it matches every memory.
  return parts.length === 1 ? (parts[0] as FilterNode) : { op: 'and', of: parts };
}

function parseFieldRef(key: string, at: string): FieldRef {
  if ((ATTRIBUTES as readonly string[]).includes(key)) return { attr: key as Attribute };
  if (key.startsWith('context.') && key.length > 'context.'.length) {
    const path = key.slice('context.'.length).split('.');
    if (path.some((p) => p === '')) throw invalid(`${at}: '${key}' has an empty path segment`);
    return { context: path };
  }
  throw invalid(
    `${at}: unknown field '${key}'; use ${ATTRIBUTES.join(', ')} or context.<key> (context fields are written context.${key})`,
  );
}

function parseField(
  field: FieldRef,
  value: unknown,
  at: string,
  count: { n: number },
): FilterNode[] {
  const tick = (): void => {
    if (++count.n > MAX_CONDITIONS)
      throw invalid(`${at}: a filter may hold at most ${MAX_CONDITIONS} conditions`);
  };
  if (typeof value !== 'object' || value === null) {
    tick();
    return [{ op: 'eq', field, value: timed(field, scalar(value, at), at) }];
  }
  if (Array.isArray(value))
    throw invalid(
      `${at} must be a value or an object of operators; for a list of values use {"$in": [...]}`,
    );
  const out: FilterNode[] = [];
  for (const [op, operand] of Object.entries(value)) {
    const where = `${at}.${op}`;
    tick();
    if (!(COMPARISONS as readonly string[]).includes(op))
      throw invalid(`${where}: unknown operator; use one of ${COMPARISONS.join(', ')}`);
    if (op === '$eq' || op === '$ne')
      out.push({
        op: op === '$eq' ? 'eq' : 'ne',
        field,
        value: timed(field, scalar(operand, where), where),
      });
    else if (op === '$in' || op === '$nin') {
      if (!Array.isArray(operand)) throw invalid(`${where} must be an array of values`);
      if (operand.length > 1000)
        throw invalid(`${where} has ${operand.length} values; the limit is 1000`);
      out.push({
        op: op === '$in' ? 'in' : 'nin',
        field,
        values: operand.map((v, i) => timed(field, scalar(v, `${where}[${i}]`), `${where}[${i}]`)),
      });
    } else if (op === '$exists') {
      if (typeof operand !== 'boolean') throw invalid(`${where} must be true or false`);
      out.push({ op: 'exists', field, exists: operand });
    } else {
      if (!(typeof operand === 'number' && Number.isFinite(operand)) && typeof operand !== 'string')
        throw invalid(`${where} must be a number (or a string, compared as text)`);
      out.push({
        op: op.slice(1) as 'gt' | 'gte' | 'lt' | 'lte',
        field,
        bound: timed(field, operand, where),
      });
    }
  }
  if (out.length === 0) throw invalid(`${at} has no operator`);
  return out;
}

/** A string compared with a time attribute, as µs; anything else as it is. */
function timed<V extends Scalar>(field: FieldRef, value: V, at: string): V | number {
  if (typeof value !== 'string' || !('attr' in field) || !TIMES.has(field.attr)) return value;
  const t = parseTime(value);
  if ('problem' in t) throw invalid(`${at} ${t.problem}`);
  return t.us;
}

function scalar(value: unknown, at: string): Scalar {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw invalid(`${at} must be a string, number, boolean or null`);
}

/** Compiles a parsed filter into a predicate over memory records. */
export function compileFilter(node: FilterNode): (m: MemoryRecord) => boolean {
  switch (node.op) {
    case 'and': {
      const parts = node.of.map(compileFilter);
      return (m) => parts.every((p) => p(m));
    }
    case 'or': {
      const parts = node.of.map(compileFilter);
      return (m) => parts.some((p) => p(m));
    }
    case 'exists':
      return (m) => (read(m, node.field) !== undefined) === node.exists;
    case 'eq':
      return (m) => anyValue(read(m, node.field), (v) => v === node.value);
    case 'ne':
      return (m) => !anyValue(read(m, node.field), (v) => v === node.value);
    case 'in': {
      const set = new Set<Scalar>(node.values);
      return (m) => anyValue(read(m, node.field), (v) => set.has(v as Scalar));
    }
    case 'nin': {
      const set = new Set<Scalar>(node.values);
      return (m) => !anyValue(read(m, node.field), (v) => set.has(v as Scalar));
    }
    default: {
      const { op, bound } = node;
      const holds = (v: JsonValue): boolean =>
        typeof v === typeof bound && compare(op, v as number | string, bound);
      return (m) => anyValue(read(m, node.field), holds);
    }
  }
}

function compare(
  op: 'gt' | 'gte' | 'lt' | 'lte',
  v: number | string,
  bound: number | string,
): boolean {
  if (op === 'gt') return v > bound;
  if (op === 'gte') return v >= bound;
  if (op === 'lt') return v < bound;
  return v <= bound;
}

/** A field's value; undefined when absent (entity_id, speaker, conversation_id, message_id null count as absent). */
function read(m: MemoryRecord, field: FieldRef): JsonValue | undefined {
  if ('context' in field) {
    let v: JsonValue | undefined = m.context;
    for (const key of field.context) {
      if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, key))
        return undefined;
      v = v[key];
    }
    return v;
  }
  switch (field.attr) {
    case 'importance':
      return m.importance;
    case 'created_at':
      return m.createdAt;
    case 'occurred_at':
      return m.occurredAt;
    case 'updated_at':
      return m.updatedAt;
    case 'last_accessed_at':
      return m.lastAccessedAt;
    case 'access_count':
      return m.accessCount;
    case 'kind':
      return m.kind;
    case 'entity_id':
      return m.entityId ?? undefined;
    case 'speaker':
      return m.speaker ?? undefined;
    case 'conversation_id':
      return m.conversationId ?? undefined;
    case 'message_id':
      return m.messageId ?? undefined;
  }
}

/** A list value matches when any element does (so `context.tags: "x"` means "tags include x"). */
function anyValue(v: JsonValue | undefined, test: (v: JsonValue) => boolean): boolean {
  if (v === undefined) return false;
  return Array.isArray(v) ? v.some(test) : test(v);
}
