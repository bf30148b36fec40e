/**
 * @module model/limits — the value limits of DESIGN.md 14, in one place for the two that apply
 * them: the request schemas (api/requests, and through them the OpenAPI document, so generated
 * requests keep within them) and the verbs' checks (verbs/validate), which name the field at fault.
 */

export const LIMITS = {
  contentBytes: 64 * 1024,
  contextBytes: 16 * 1024,
  cueBytes: 64 * 1024,
  entityChars: 256,
  batchIds: 500,
  listLimit: 1000,
  listDefault: 100,
  forgetPerCall: 1000,
  /** Messages one conversation ingest takes. */
  messagesPerCall: 10_000,
  /** Longest TTL (and farthest expiry): 100 years. */
  maxTtlS: 100 * 365 * 86_400,
} as const;

/** Integer options refused outside [min, max] (the ones above their maximum are not capped). */
export const RANGES = {
  topK: [1, 1000],
  efSearch: [1, 10_000],
  maxMemories: [1, 200],
  maxPushesPerChunk: [1, 1000],
  utcOffsetMin: [-720, 840],
} as const satisfies Record<string, readonly [number, number]>;

/** A workspace slug: lower-case letters, digits, _ and -, 1 to 63 characters, starting with a letter or digit. */
export const SLUG_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;
