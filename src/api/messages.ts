/**
 * @module api/messages — one sentence for a request that failed its schema, naming the field and
 * the fault in the words of the field's kind: a time (model/time says what is wrong with it), a
 * name read in any case (the names it may be), a memory id, two fields given where one may be,
 * none of the fields of which one is needed, a limit. Of ajv's errors the deepest is the one at
 * fault (a union reports every branch it tried; the branch that got furthest is the one meant).
 */
import type { ErrorObject } from 'ajv';
import { ID_PATTERN } from '../model/ids.ts';
import { parseTime, TIME_PATTERN, timeFrom } from '../model/time.ts';

type Schema = {
  anyOf?: unknown[];
  enum?: unknown[];
  pattern?: unknown;
  required?: unknown;
  description?: unknown;
};

export function explain(errors: readonly ErrorObject[]): string {
  if (errors.length === 0) return 'request body is invalid';
  const depth = (e: ErrorObject): number =>
    e.instancePath === '' ? 0 : e.instancePath.split('/').length;
  const deepest = Math.max(...errors.map(depth));
  const atFault = errors.filter((e) => depth(e) === deepest);
  const special = atFault.find(
    (e) => e.keyword === 'anyOf' && (isTime(e.parentSchema) || isNames(e.parentSchema)),
  );
  if (special !== undefined)
    return isTime(special.parentSchema) ? timeMessage(special) : namesMessage(special);
  const time = errors.find((e) => e.keyword === 'anyOf' && isTime(e.parentSchema));
  if (time !== undefined) return timeMessage(time);
  const oneOfFields = atFault.find(
    (e) =>
      e.keyword === 'anyOf' && branches(e.parentSchema).every((x) => Array.isArray(x.required)),
  );
  if (oneOfFields !== undefined) return describe(oneOfFields);
  return describe(
    atFault.find((e) => e.keyword !== 'type' && e.keyword !== 'anyOf') ??
      (atFault[0] as ErrorObject),
  );
}

/** The field as the verbs name it: `edges[0].edge_type`. */
function pathOf(err: ErrorObject): string {
  return err.instancePath
    .split('/')
    .slice(1)
    .map((seg) => seg.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce(
      (out, seg) => (/^\d+$/.test(seg) ? `${out}[${seg}]` : out === '' ? seg : `${out}.${seg}`),
      '',
    );
}

function fieldOf(err: ErrorObject): string {
  const field = pathOf(err);
  return field === '' ? 'request body' : field;
}

function branches(schema: unknown): Schema[] {
  const b = (schema as Schema | undefined)?.anyOf;
  return Array.isArray(b) ? (b as Schema[]) : [];
}

function isTime(schema: unknown): boolean {
  return branches(schema).some((b) => b.pattern === TIME_PATTERN);
}

/** api/fields' names in any case: the documented names, and a pattern for their other spellings. */
function isNames(schema: unknown): boolean {
  const b = branches(schema);
  return b.length === 2 && Array.isArray(b[0]?.enum) && typeof b[1]?.pattern === 'string';
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `'${text.length > 64 ? `${text.slice(0, 64)}…` : text}'`;
}

/** A value that is no time: what is wrong with it, in the words of model/time. */
function timeMessage(err: ErrorObject): string {
  const where = fieldOf(err);
  const value: unknown = err.data;
  if (typeof value === 'string') {
    const parsed = parseTime(value);
    return `${where} ${'problem' in parsed ? parsed.problem : `'${value}': the year must be written 1970 to 2299`}`;
  }
  if (typeof value === 'number') {
    const parsed = timeFrom(value);
    return `${where} ${'problem' in parsed ? parsed.problem : `${value} is not a time`}`;
  }
  return `${where} must be a time: integer microseconds since the epoch or an ISO 8601 string, got ${value === null ? 'null' : typeof value}`;
}

function namesMessage(err: ErrorObject): string {
  const names = (branches(err.parentSchema)[0]?.enum ?? []).join(', ');
  if (typeof err.data !== 'string') return `${fieldOf(err)} must be a string: one of ${names}`;
  return `${fieldOf(err)} ${shown(err.data)} is not one of ${names}`;
}

/** A number outside its range, with the whole range when the schema has both ends. */
function rangeMessage(where: string, err: ErrorObject): string {
  const s = err.parentSchema as { minimum?: number; maximum?: number; exclusiveMinimum?: number };
  const got = `got ${String(err.data)}`;
  if (s.minimum !== undefined && s.maximum !== undefined)
    return `${where} must be between ${s.minimum} and ${s.maximum}, ${got}`;
  if (s.exclusiveMinimum !== undefined)
    return `${where} must be more than ${s.exclusiveMinimum}${s.maximum === undefined ? '' : ` and at most ${s.maximum}`}, ${got}`;
  if (s.minimum !== undefined) return `${where} must be at least ${s.minimum}, ${got}`;
  return `${where} must be at most ${String(s.maximum)}, ${got}`;
}

function describe(err: ErrorObject): string {
  const field = pathOf(err);
  const where = fieldOf(err);
  switch (err.keyword) {
    case 'required':
      return `${field === '' ? '' : `${field}.`}${String(err.params['missingProperty'])} is required`;
    case 'type':
      return `${where} must be ${String(err.params['type'])}`;
    case 'enum':
      return `${where} must be one of ${(err.params['allowedValues'] as unknown[]).join(', ')}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
      return rangeMessage(where, err);
    case 'maxLength':
      return `${where} is ${String((err.data as string).length)} characters; the limit is ${String(err.params['limit'])}`;
    case 'minLength':
      return err.params['limit'] === 1
        ? `${where} must not be empty`
        : `${where} must be at least ${String(err.params['limit'])} characters`;
    case 'maxItems':
      return `${where} has ${String((err.data as unknown[]).length)} items; the limit is ${String(err.params['limit'])}`;
    case 'minItems':
      return `${where} must have at least ${String(err.params['limit'])} item${err.params['limit'] === 1 ? '' : 's'}`;
    case 'pattern':
      if (err.params['pattern'] === '\\S') return `${where} must not be empty or blank`;
      if (err.params['pattern'] === TIME_PATTERN) return timeMessage(err);
      if (err.params['pattern'] === ID_PATTERN)
        return `${where} ${shown(err.data)} is not a memory id (32 hex characters or a 26-character ULID)`;
      return `${where} ${shown(err.data)} is not ${typeof (err.parentSchema as Schema).description === 'string' ? `valid: ${String((err.parentSchema as Schema).description)}` : `of the form ${String(err.params['pattern'])}`}`;
    case 'additionalProperties': {
      const s = err.parentSchema as {
        properties?: Record<string, unknown>;
        patternProperties?: Record<string, unknown>;
      };
      const known = Object.keys(s.properties ?? {}).join(', ');
      const patterns = Object.keys(s.patternProperties ?? {});
      const name = String(err.params['additionalProperty']);
      return `${field === '' ? name : `${field}.${name}`}: unknown field '${name}'; use ${known}${patterns.length > 0 ? ` or a name matching ${patterns.join(', ')}` : ''}`;
    }
    case 'minProperties':
      return `${where} must not be empty`;
    case 'not': {
      // api/requests' notBoth: `not: {required: [a, b]}`.
      const both = (err.schema as Schema).required;
      return Array.isArray(both) ? `give ${both.join(' or ')}, not both` : `${where} is invalid`;
    }
    case 'anyOf': {
      // At least one of several fields (forget's criteria, revise's changes): `anyOf: [{required: [f]}, …]`.
      const needed = branches(err.parentSchema).flatMap((b) =>
        Array.isArray(b.required) ? (b.required as string[]) : [],
      );
      return needed.length > 0
        ? `give at least one of ${[...new Set(needed)].join(', ')}`
        : `${where} ${err.message ?? 'is invalid'}`;
    }
    default:
      return `${where} ${err.message ?? 'is invalid'}`;
  }
}
