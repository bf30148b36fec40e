/**
 * @module api/time — the schema of a time a caller writes (`Time`: integer microseconds since the
 * epoch, or an ISO 8601 string; rules in model/time) and of the ISO twin a reply carries beside
 * each microsecond integer (`IsoTime`). Every request field that holds a point in time uses
 * `Time`, so REST, MCP and the OpenAPI document take the same forms; the verb turns it into
 * microseconds with verbs/validate `checkTime`, which names the field.
 */
import { Type as T, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { MAX_TIME_US, TIME_PATTERN, type TimeInput } from '../model/time.ts';

export type { TimeInput };

const RULES =
  'Integer microseconds since the Unix epoch, or an ISO 8601 string: a date (2026-03-01 = its start, 00:00 UTC) or a ' +
  'date-time with a UTC offset (2026-03-01T09:30:00Z, 2026-03-01T11:30:00.250+02:00; no offset is refused, not guessed), ' +
  'up to 9 fraction digits (truncated to microseconds). Integers from 0 to 2^53 − 1 (2255-06-05T23:47:34.740991Z), text from 1970 ' +
  'to 2254; the pattern cannot say that a day must exist in its month (2026-02-30 is refused) or that an offset must not take the time before 1970.';

/** The two branches, shared by `Time` and `NullableTime`; `compile` recognises a time by its pattern. */
const BRANCHES = [
  { type: 'integer', minimum: 0, maximum: MAX_TIME_US },
  { type: 'string', pattern: TIME_PATTERN },
];

/** A point in time as a caller writes it. */
export function Time(description: string): TUnsafe<TimeInput> {
  return T.Unsafe<TimeInput>({ anyOf: BRANCHES, description: `${description}. ${RULES}` });
}

/** A time, or null (meaning what the field's description says, e.g. "never expires"). */
export function NullableTime(description: string): TUnsafe<TimeInput | null> {
  return T.Unsafe<TimeInput | null>({
    anyOf: [...BRANCHES, { type: 'null' }],
    description: `${description}. ${RULES}`,
  });
}

/** The ISO twin of a reply's microsecond time: always UTC, six fraction digits. */
export function IsoTime(description: string): TSchema {
  return T.String({
    format: 'date-time',
    description: `${description}, as ISO 8601 in UTC with microseconds (2026-03-01T09:30:00.000000Z)`,
  });
}
