/** @module errors/codes — the closed table of error codes and their transport mappings. */

/** gRPC status codes used by the table (numeric values of grpc.status). */
export const GrpcStatus = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export type ErrorCode =
  | 'invalid_input'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable'
  | 'internal_error';

interface Mapping {
  readonly http: number;
  readonly grpc: number;
}

/** Every code maps to an HTTP status and a gRPC status; a code without a row does not compile. */
export const ERRORS: Readonly<Record<ErrorCode, Mapping>> = {
  invalid_input: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  unauthenticated: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  forbidden: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  method_not_allowed: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED },
  conflict: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  payload_too_large: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  unsupported_media_type: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT },
  rate_limited: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  internal_error: { http: 500, grpc: GrpcStatus.INTERNAL },
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}

/** The one protocol-neutral error type. `retryAfterS` (HTTP Retry-After) is set for `rate_limited`, and for `unavailable` when the wait is known. */
export class FlashbulbError extends Error {
  readonly code: ErrorCode;
  readonly retryAfterS: number | undefined;
  /** Methods allowed on the path, for `method_not_allowed` (HTTP `Allow`). */
  readonly allow: readonly string[] | undefined;
  /** The configured limit the request would pass (its variable, e.g. FLASHBULB_MAX_REPLY_BYTES). */
  readonly limit: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { retryAfterS?: number; allow?: readonly string[]; limit?: string } = {},
  ) {
    super(message);
    this.name = 'FlashbulbError';
    this.code = code;
    this.retryAfterS = opts.retryAfterS;
    this.allow = opts.allow;
    this.limit = opts.limit;
  }

  /** The server's fault (a 5xx), not the caller's: what tracing marks as an error status. */
  get fault(): boolean {
    return ERRORS[this.code].http >= 500;
  }
}

export function invalid(message: string): FlashbulbError {
  return new FlashbulbError('invalid_input', message);
}

export function notFound(message: string): FlashbulbError {
  return new FlashbulbError('not_found', message);
}
