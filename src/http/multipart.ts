/**
 * @module http/multipart — the one file that imports uWebSockets.js, for its multipart/form-data parser.
 * REST itself listens on node:http (http/listener.ts): uWebSockets.js 20.30 cannot answer
 * HTTP/1.0, closes connections that pipeline requests to asynchronous routes, and holds
 * malformed requests until its idle timeout (issue 12).
 */
import uWS from 'uWebSockets.js';

export interface FormPart {
  name: string;
  filename: string | undefined;
  data: Buffer;
}

/** Parses a multipart/form-data body; null when the body or boundary is not multipart. */
export function parseMultipart(body: Buffer, contentType: string): FormPart[] | null {
  const parts = uWS.getParts(body, contentType);
  if (!parts) return null;
  return parts.map((p) => ({ name: p.name, filename: p.filename, data: Buffer.from(p.data.slice(0)) }));
}
