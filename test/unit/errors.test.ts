/** The closed error table (DESIGN 3.2) and errors as data across threads. */
import { describe, expect, it } from 'vitest';
import {
  ERRORS,
  FlashbulbError,
  GrpcStatus,
  invalid,
  isErrorCode,
  notFound,
  type ErrorCode,
} from '../../src/errors/codes.ts';
import { fromWireError, toWireError } from '../../src/errors/wire.ts';

/** DESIGN.md section 3.2, row by row. */
const DESIGN_TABLE: Record<ErrorCode, { http: number; grpc: number }> = {
  invalid_input: { http: 400, grpc: 3 },
  unauthenticated: { http: 401, grpc: 16 },
  forbidden: { http: 403, grpc: 7 },
  not_found: { http: 404, grpc: 5 },
  method_not_allowed: { http: 405, grpc: 12 },
  conflict: { http: 409, grpc: 6 },
  payload_too_large: { http: 413, grpc: 8 },
  unsupported_media_type: { http: 415, grpc: 3 },
  rate_limited: { http: 429, grpc: 8 },
  unavailable: { http: 503, grpc: 14 },
  internal_error: { http: 500, grpc: 13 },
};

const CODES = Object.keys(DESIGN_TABLE) as ErrorCode[];

describe('error table', () => {
  it('maps exactly the documented codes', () => {
    expect(Object.keys(ERRORS).sort()).toEqual([...CODES].sort());
  });

  for (const code of CODES) {
    it(`${code} maps to HTTP ${DESIGN_TABLE[code].http} and gRPC ${DESIGN_TABLE[code].grpc}`, () => {
      expect(ERRORS[code]).toEqual(DESIGN_TABLE[code]);
      expect(isErrorCode(code)).toBe(true);
    });
  }

  it('uses the real gRPC status numbers', () => {
    expect(GrpcStatus).toMatchObject({
      INVALID_ARGUMENT: 3,
      NOT_FOUND: 5,
      ALREADY_EXISTS: 6,
      PERMISSION_DENIED: 7,
      RESOURCE_EXHAUSTED: 8,
      UNIMPLEMENTED: 12,
      INTERNAL: 13,
      UNAVAILABLE: 14,
      UNAUTHENTICATED: 16,
    });
  });

  it('isErrorCode rejects anything else, including inherited property names', () => {
    for (const v of [
      '',
      'bad_request',
      'toString',
      'constructor',
      '__proto__',
      404,
      null,
      undefined,
      {},
    ]) {
      expect(isErrorCode(v), String(v)).toBe(false);
    }
  });
});

describe('errors as data', () => {
  for (const code of CODES) {
    it(`${code} survives toWireError → structured clone → fromWireError`, () => {
      const wire = toWireError(new FlashbulbError(code, `something about ${code}`));
      expect(wire).toEqual({ ok: false, code, message: `something about ${code}` });
      const back = fromWireError(structuredClone(wire));
      expect(back).toBeInstanceOf(FlashbulbError);
      expect(back).toMatchObject({
        code,
        message: `something about ${code}`,
        name: 'FlashbulbError',
      });
    });
  }

  it('helpers build typed errors', () => {
    expect(invalid('field x')).toMatchObject({ code: 'invalid_input', message: 'field x' });
    expect(notFound('gone')).toMatchObject({ code: 'not_found', message: 'gone' });
    expect(new FlashbulbError('rate_limited', 'slow down', { retryAfterS: 3 }).retryAfterS).toBe(3);
  });

  it('unknown errors become internal_error without their details', () => {
    const secret = 'EACCES /etc/shadow at connect() password=hunter2';
    for (const thrown of [
      new Error(secret),
      new TypeError(secret),
      secret,
      { code: 'not_found', message: secret },
      null,
      undefined,
      42,
    ]) {
      const wire = toWireError(thrown);
      expect(wire).toEqual({ ok: false, code: 'internal_error', message: 'internal error' });
      expect(JSON.stringify(wire)).not.toContain('hunter2');
    }
  });

  it('an error that lost its class crossing a thread is not trusted as typed', () => {
    const cloned = structuredClone(new FlashbulbError('forbidden', 'no')) as unknown;
    expect(cloned).not.toBeInstanceOf(FlashbulbError);
    expect(toWireError(cloned).code).toBe('internal_error');
  });

  it('fromWireError turns an unknown code or a missing message into internal_error', () => {
    expect(fromWireError({ code: 'teapot', message: 'x' })).toMatchObject({
      code: 'internal_error',
      message: 'x',
    });
    expect(fromWireError({ code: 'toString', message: 'x' })).toMatchObject({
      code: 'internal_error',
    });
    expect(fromWireError({ code: 'not_found', message: 42 })).toMatchObject({
      code: 'not_found',
      message: 'internal error',
    });
  });
});
