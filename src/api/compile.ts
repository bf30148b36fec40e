/**
 * @module api/compile — compiles TypeBox schemas with ajv once, at start-up, and turns a failed
 * validation into one message that names the field (api/messages says which error and how).
 */
import AjvModule, { type ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import { invalid } from '../errors/codes.ts';
import { explain } from './messages.ts';

const Ajv = AjvModule.default;
// verbose: errors carry the value and schema at fault (read only on failure), so they can be explained.
const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, verbose: true });

export type Validator<T> = (value: unknown) => T;

export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  const check: ValidateFunction = ajv.compile(schema);
  return (value: unknown) => {
    if (check(value)) return value as Static<S>;
    throw invalid(explain(check.errors ?? []));
  };
}
