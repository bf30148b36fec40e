/**
 * @module api/compile — compiles TypeBox schemas with ajv once, at start-up, and turns the first
 * validation error into a message that names the field.
 */
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import { invalid } from '../errors/codes.ts';

const Ajv = AjvModule.default;
const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });

export interface Validator<T> {
  (value: unknown): T;
}

export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  const check: ValidateFunction = ajv.compile(schema);
  return (value: unknown) => {
    if (check(value)) return value as Static<S>;
    throw invalid(describe(check.errors?.[0]));
  };
}

function describe(err: ErrorObject | undefined): string {
  if (!err) return 'request body is invalid';
  const field = err.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const where = field === '' ? 'request body' : field;
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
