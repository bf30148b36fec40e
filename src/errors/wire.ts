/** @module errors/wire — errors as data, so they survive postMessage between threads. */
import { FlashbulbError, isErrorCode, type ErrorCode } from './codes.ts';

export type Result<T> = { ok: true; value: T } | { ok: false; code: ErrorCode; message: string };

/** Turns anything thrown into a wire error; unknown errors become internal_error without details. */
export function toWireError(err: unknown): { ok: false; code: ErrorCode; message: string } {
  if (err instanceof FlashbulbError) return { ok: false, code: err.code, message: err.message };
  return { ok: false, code: 'internal_error', message: 'internal error' };
}

/** Rebuilds the typed error on the receiving side. */
export function fromWireError(wire: { code: unknown; message: unknown }): FlashbulbError {
  const code = isErrorCode(wire.code) ? wire.code : 'internal_error';
  const message = typeof wire.message === 'string' ? wire.message : 'internal error';
  return new FlashbulbError(code, message);
}
