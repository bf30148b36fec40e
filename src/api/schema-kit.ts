/**
 * @module api/schema-kit — the small TypeBox helpers the reply schemas share: a union of string
 * literals, a nullable schema, a time in microseconds (described as such) and a reference to a
 * named schema by its `$id`.
 */
import { Type as T, type TSchema } from '@sinclair/typebox';

export const literals = (values: readonly string[]): TSchema =>
  T.Union(values.map((v) => T.Literal(v)));

export const Nullable = <S extends TSchema>(s: S): TSchema => T.Union([s, T.Null()]);

/** A time in whole microseconds (every one the server writes is an integer: clock ms × 1000, or a written time, which must be whole). */
export const Us = (description: string): TSchema =>
  T.Integer({ description: `${description} (microseconds since the Unix epoch)` });

export const ref = (s: { $id?: string }): TSchema => T.Ref(s.$id ?? '');
