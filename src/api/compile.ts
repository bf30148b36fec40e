/**
 * @module api/compile — compiles TypeBox schemas with ajv once, at start-up, and turns the first
 * validation error into a message that names the field.
 */
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import { invalid } from '../errors/codes.ts';
import { parseTime, TIME_PATTERN, timeFrom } from '../model/time.ts';

const Ajv = AjvModule.default;
// verbose: errors carry the value and schema at fault (read only on failure), so a bad time can be explained.
const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, verbose: true });

export interface Validator<T> {
  (value: unknown): T;
}

export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  const check: ValidateFunction = ajv.compile(schema);
  return (value: unknown) => {
    if (check(value)) return value as Static<S>;
    const errors = check.errors ?? [];
    const time = errors.find((e) => e.keyword === 'anyOf' && isTimeSchema(e.parentSchema));
    throw invalid(time === undefined ? describe(errors[0]) : describeTime(time));
  };
}

function fieldOf(err: ErrorObject): string {
  const field = err.instancePath.replace(/^\//, '').replaceAll('/', '.');
  return field === '' ? 'request body' : field;
}

function isTimeSchema(schema: unknown): boolean {
  const branches = (schema as { anyOf?: unknown } | undefined)?.anyOf;
  return Array.isArray(branches) && branches.some((b) => (b as { pattern?: unknown }).pattern === TIME_PATTERN);
}

/** A value that is no time: what is wrong with it, in the words of model/time. */
function describeTime(err: ErrorObject): string {
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

function describe(err: ErrorObject | undefined): string {
  if (!err) return 'request body is invalid';
  const field = err.instancePath.replace(/^\//, '').replaceAll('/', '.');
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
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
      return `${where} ${err.message ?? 'is out of range'}`;
    default:
      return `${where} ${err.message ?? 'is invalid'}`;
  }
}
