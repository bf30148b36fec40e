/**
 * @module http/multipart — multipart/form-data bodies (RFC 7578 over RFC 2046's multipart syntax),
 * for POST /v1/upload. The whole body is already in memory (the listener's size cap applies), so
 * this is a scan for delimiters, not a stream. It replaced uWebSockets.js's `getParts`, whose
 * newest build that runs on glibc 2.36 ships binaries for Node ≤ 20 only: on Node 22 and 24 the
 * package falls back to a shim without `getParts` and every upload failed (ARCHITECTURE.md,
 * "Decisions that differ").
 */
import { invalid } from '../errors/codes.ts';

export interface FormPart {
  name: string;
  filename: string | undefined;
  data: Buffer;
}

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');
/** `; key=value` or `; key="quoted \"value\""` in a header's parameter list. */
const PARAM = /;\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g;

function params(header: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, key = '', raw = ''] of header.matchAll(PARAM)) {
    const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw.trim();
    out.set(key.toLowerCase(), value);
  }
  return out;
}

/** The boundary of a multipart/form-data content type; null for any other type or without one. */
export function boundaryOf(contentType: string): string | null {
  if (!/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const boundary = params(contentType).get('boundary');
  return boundary !== undefined && boundary.length >= 1 && boundary.length <= 70 ? boundary : null;
}

/** One part's headers: its form field name and filename from Content-Disposition. */
function disposition(headers: string): { name: string; filename: string | undefined } {
  for (const line of headers.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
    const p = params(line.slice(colon + 1));
    return { name: p.get('name') ?? '', filename: p.get('filename') };
  }
  return { name: '', filename: undefined };
}

/**
 * The parts of a multipart/form-data body, in order. Null when the content type is not
 * multipart/form-data with a boundary; a body that does not follow its boundary (none found, a
 * part's headers unterminated, no closing delimiter) is invalid input.
 */
export function parseMultipart(body: Buffer, contentType: string): FormPart[] | null {
  const boundary = boundaryOf(contentType);
  if (boundary === null) return null;
  const dash = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.concat([CRLF, dash]);
  // The first delimiter may open the body; later ones (and one after a preamble) follow a CRLF.
  let at = body.subarray(0, dash.length).equals(dash) ? 0 : body.indexOf(delimiter);
  if (at < 0)
    throw invalid(`multipart body has no "--${boundary}" delimiter (the Content-Type's boundary)`);
  if (at > 0) at += CRLF.length;
  const parts: FormPart[] = [];
  for (;;) {
    let pos = at + dash.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts; // "--": the closing delimiter
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++; // transport padding
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a)
      throw invalid(`multipart body: a "--${boundary}" delimiter is not followed by a line break`);
    // Searched from the delimiter line's own CRLF, so a part with no headers ends them right there
    // (`end` = pos, and its headers are the empty string).
    const end = body.indexOf(HEADERS_END, pos);
    if (end < 0)
      throw invalid(
        `multipart body: part ${parts.length + 1}'s headers have no blank line after them`,
      );
    const headers = body.toString('utf8', pos + CRLF.length, end);
    const start = end + HEADERS_END.length;
    const next = body.indexOf(delimiter, start);
    if (next < 0)
      throw invalid(
        `multipart body ends inside part ${parts.length + 1}: no closing "--${boundary}--"`,
      );
    const { name, filename } = disposition(headers);
    parts.push({ name, filename, data: body.subarray(start, next) });
    at = next + CRLF.length;
  }
}
