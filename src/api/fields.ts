/**
 * @module api/fields — request fields that several schemas share, each stating in JSON Schema
 * what the server checks (so the OpenAPI document is the validation, and requests generated from
 * it are accepted): memory ids, entity ids and names, texts with their limits, unit intervals,
 * TTLs, edge types and strategies in every spelling the server reads. What JSON Schema cannot
 * state (a limit in UTF-8 bytes, a serialised size) the description says.
 */
import {
  Type as T,
  type TNumber,
  type TRecord,
  type TString,
  type TUnknown,
  type TUnsafe,
} from '@sinclair/typebox';
import { EDGE_TYPES } from '../model/edge.ts';
import { ID_PATTERN } from '../model/ids.ts';
import { LIMITS } from '../model/limits.ts';
import { STRATEGIES } from '../recall/types.ts';

export const MemoryId = T.String({
  pattern: ID_PATTERN,
  description: 'A memory id: 32 hex characters or a 26-character ULID',
});

/** An entity id, speaker, conversation or message id: 1 to 256 characters. */
export function Name(description?: string): TString {
  return T.String({
    minLength: 1,
    maxLength: LIMITS.entityChars,
    ...(description === undefined ? {} : { description }),
  });
}

/** A name where "" means none (what the reading verbs take). */
export function NameOrNone(description?: string): TString {
  return T.String({
    maxLength: LIMITS.entityChars,
    description: `${description ?? 'An entity id'} ("" means none)`,
  });
}

/** Text that must not be blank, within a limit of UTF-8 bytes (stated as characters: no schema counts bytes). */
export function Text(what: string, bytes: number = LIMITS.contentBytes): TString {
  return T.String({
    minLength: 1,
    maxLength: bytes,
    pattern: '\\S',
    description: `${what}: not blank, at most ${bytes / 1024} KiB as UTF-8 (maxLength counts characters; a text of multi-byte characters reaches the byte limit first)`,
  });
}

/** A number in [0, 1]. */
export function Unit(description?: string): TNumber {
  return T.Number({
    minimum: 0,
    maximum: 1,
    ...(description === undefined ? {} : { description }),
  });
}

/** Seconds to live: more than 0, at most 100 years. */
export function Ttl(description: string): TNumber {
  return T.Number({
    exclusiveMinimum: 0,
    maximum: LIMITS.maxTtlS,
    description: `${description} (seconds, more than 0, at most 100 years)`,
  });
}

/** A JSON object (context, cue context) within the server's limits, which the description states. */
export function JsonObject(what: string): TRecord<TString, TUnknown> {
  return T.Record(T.String(), T.Unknown(), {
    maxProperties: 1024,
    description: `${what}: a JSON object, at most 16 KiB serialised, 1,024 keys per object and 32 levels deep (limits JSON Schema states only for the top level)`,
  });
}

/**
 * A name written in any case (and, with `underscores`, with underscores anywhere): `lower` as the
 * documented spellings, and a pattern for the rest the server reads the same.
 */
function anyCase(
  names: readonly string[],
  opts: { underscores: boolean; prefix?: string; description: string },
): TUnsafe<string> {
  const letters = (word: string): string =>
    [...word.replaceAll('_', '')]
      .map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c))
      .join(opts.underscores ? '_*' : '');
  const u = opts.underscores ? '_*' : '';
  const prefix = opts.prefix === undefined ? '' : `(${u}${letters(opts.prefix)})?`;
  const pattern = `^${prefix}${u}(${names.map(letters).join('|')})${u}$`;
  return T.Unsafe<string>({
    anyOf: [
      { type: 'string', enum: [...names] },
      {
        type: 'string',
        pattern,
        description: 'the same names in any other spelling the server reads',
      },
    ],
    description: opts.description,
  });
}

export const EdgeTypeName = anyCase(EDGE_TYPES, {
  underscores: true,
  prefix: 'edge_type',
  description:
    'An edge type; any case, underscores anywhere and the gRPC EDGE_TYPE_ prefix are read the same (CausedBy, CAUSED_BY, EDGE_TYPE_CAUSED_BY)',
});

export const StrategyName = anyCase(STRATEGIES, {
  underscores: false,
  description: 'A recall strategy (any case)',
});

export const EdgeTypes = T.Array(EdgeTypeName, {
  description: 'Edge types to follow (empty or absent: all)',
});
