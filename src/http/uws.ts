/**
 * @module http/uws — the one file that imports uWebSockets.js. It turns uWS callbacks into a
 * plain request object and a promise of a response, reads bodies with a size bound, and writes
 * replies corked. Everything else in http/ is framework-free.
 */
import { STATUS_CODES } from 'node:http';
import uWS from 'uWebSockets.js';

export interface HttpRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: ReadonlyMap<string, string>;
  body: Buffer;
}

export interface HttpResponse {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** A response that stays open (Server-Sent Events). */
export interface StreamResponse {
  kind: 'stream';
  status: number;
  headers: Record<string, string>;
  start(stream: OutStream): void;
}

/** The writing end of an open response. `write` returns false when the client is not keeping up. */
export interface OutStream {
  readonly closed: boolean;
  write(chunk: string): boolean;
  onWritable(cb: () => void): void;
  onClose(cb: () => void): void;
  end(): void;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  /** Largest body accepted for a path; larger ones get `tooLarge` without being read. */
  maxBodyBytes: (path: string) => number;
  tooLarge: (limit: number) => HttpResponse;
  handler: (req: HttpRequest) => Promise<HttpResponse | StreamResponse>;
}

export interface HttpServer {
  readonly port: number;
  close(): void;
}

const HEADERS_OF_INTEREST = ['authorization', 'content-type', 'content-length', 'transfer-encoding', 'accept'];

export function listenHttp(opts: HttpServerOptions): Promise<HttpServer> {
  const app = uWS.App();
  app.any('/*', (res, req) => onRequest(opts, res, req));
  return new Promise((resolve, reject) => {
    app.listen(opts.host, opts.port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${opts.host}:${opts.port}`));
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) });
    });
  });
}

function onRequest(opts: HttpServerOptions, res: uWS.HttpResponse, req: uWS.HttpRequest): void {
  const headers = new Map<string, string>();
  for (const name of HEADERS_OF_INTEREST) {
    const v = req.getHeader(name);
    if (v !== '') headers.set(name, v);
  }
  const method = req.getMethod().toUpperCase();
  const path = req.getUrl();
  const query = new URLSearchParams(req.getQuery() ?? '');
  const state: ResState = { aborted: false, onAbort: [] };
  res.onAborted(() => {
    state.aborted = true;
    for (const cb of state.onAbort) cb();
  });
  const limit = opts.maxBodyBytes(path);
  const declared = Number(headers.get('content-length') ?? '0');
  if (declared > limit) return send(res, state, opts.tooLarge(limit), true);
  const respond = (body: Buffer): void => {
    opts.handler({ method, path, query, headers, body }).then(
      (reply) => ('kind' in reply ? openStream(res, state, reply) : send(res, state, reply, false)),
      () => send(res, state, { status: 500, body: '{"error_code":"internal_error","message":"internal error"}' }, false),
    );
  };
  if (!(declared > 0) && !headers.has('transfer-encoding')) return respond(Buffer.alloc(0));
  readBody(res, limit, (body) => {
    if (body === null) send(res, state, opts.tooLarge(limit), true);
    else respond(body);
  });
}

function readBody(res: uWS.HttpResponse, limit: number, done: (body: Buffer | null) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    if (over) return;
    size += chunk.byteLength;
    if (size > limit) {
      over = true;
      done(null);
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) done(Buffer.concat(chunks));
  });
}

interface ResState {
  aborted: boolean;
  onAbort: Array<() => void>;
}

function openStream(res: uWS.HttpResponse, state: ResState, reply: StreamResponse): void {
  if (state.aborted) return;
  res.cork(() => {
    res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
    for (const [k, v] of Object.entries(reply.headers)) res.writeHeader(k, v);
  });
  let ended = false;
  const stream: OutStream = {
    get closed() {
      return state.aborted || ended;
    },
    write: (chunk) => {
      if (stream.closed) return false;
      let ok = false;
      res.cork(() => {
        ok = res.write(chunk);
      });
      return ok;
    },
    onWritable: (cb) => {
      res.onWritable(() => {
        cb();
        return true;
      });
    },
    onClose: (cb) => {
      state.onAbort.push(cb);
    },
    end: () => {
      if (stream.closed) return;
      ended = true;
      res.cork(() => res.end());
      for (const cb of state.onAbort) cb();
    },
  };
  reply.start(stream);
}

function send(res: uWS.HttpResponse, state: ResState, reply: HttpResponse, close: boolean): void {
  if (state.aborted) return;
  state.aborted = true;
  res.cork(() => {
    res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.writeHeader(k, v);
    res.end(reply.body, close);
  });
}

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
