/**
 * @module http/uws — the one file that imports uWebSockets.js. It turns uWS callbacks into a
 * plain request object and a promise of a response, reads bodies with a size bound, writes
 * replies corked, and drains: it counts requests in flight so shutdown can wait for them.
 * Everything else in http/ is framework-free.
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
  body: string | Buffer;
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
  /** The reply to requests that arrive while the server drains (sent with `Connection: close`). */
  unavailable: () => HttpResponse;
  handler: (req: HttpRequest) => Promise<HttpResponse | StreamResponse>;
}

export interface HttpServer {
  readonly port: number;
  /**
   * Closes the listening socket. Requests that arrive later on open keep-alive connections get
   * `unavailable()`, and replies to requests still running close their connection, so clients
   * reconnect elsewhere instead of reusing this one.
   */
  drain(): void;
  /** Resolves once no request is being handled (open streams do not count). */
  idle(): Promise<void>;
  /** Drains, then closes every socket: idle keep-alive connections, open streams, unfinished requests. */
  close(): void;
}

/** Requests being handled, and whether the server is draining. */
class Traffic {
  draining = false;
  #inflight = 0;
  #idle: Array<() => void> = [];

  /** Counts a request in; the returned function counts it out (once, however often it is called). */
  begin(): () => void {
    this.#inflight += 1;
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      this.#inflight -= 1;
      if (this.#inflight === 0) for (const cb of this.#idle.splice(0)) cb();
    };
  }

  idle(): Promise<void> {
    return this.#inflight === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }
}

const HEADERS_OF_INTEREST = ['authorization', 'content-type', 'content-length', 'transfer-encoding', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'accept-encoding', 'if-none-match'];

export function listenHttp(opts: HttpServerOptions): Promise<HttpServer> {
  const app = uWS.App();
  const traffic = new Traffic();
  app.any('/*', (res, req) => onRequest(opts, traffic, res, req));
  return new Promise((resolve, reject) => {
    app.listen(opts.host, opts.port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${opts.host}:${opts.port}`));
      const drain = (): void => {
        if (traffic.draining) return;
        traffic.draining = true;
        uWS.us_listen_socket_close(socket);
      };
      const close = (): void => {
        drain();
        // The native App has close() (closes every socket of the app, running onAborted for
        // unfinished requests), but this build's typings leave it out.
        (app as unknown as { close(): void }).close();
      };
      resolve({ port: uWS.us_socket_local_port(socket), drain, idle: () => traffic.idle(), close });
    });
  });
}

function onRequest(opts: HttpServerOptions, traffic: Traffic, res: uWS.HttpResponse, req: uWS.HttpRequest): void {
  if (traffic.draining) {
    const state: ResState = { aborted: false, onAbort: [], settle: () => {}, traffic };
    return send(res, state, opts.unavailable(), true);
  }
  const headers = new Map<string, string>();
  for (const name of HEADERS_OF_INTEREST) {
    const v = req.getHeader(name);
    if (v !== '') headers.set(name, v);
  }
  const method = req.getMethod().toUpperCase();
  const path = req.getUrl();
  const query = new URLSearchParams(req.getQuery() ?? '');
  const state: ResState = { aborted: false, onAbort: [], settle: traffic.begin(), traffic };
  res.onAborted(() => {
    state.aborted = true;
    state.settle();
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
  /** Counts the request out of the traffic in flight: on its reply, abort, or once its stream is open. */
  settle: () => void;
  readonly traffic: Traffic;
}

function openStream(res: uWS.HttpResponse, state: ResState, reply: StreamResponse): void {
  if (state.aborted) return;
  // An open stream is not a request in flight: shutdown ends it (subscriptions close) rather than waiting.
  state.settle();
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

/** Writes a whole reply. With `close` (or while draining) uWS adds `Connection: close` and closes the connection once it is sent. */
function send(res: uWS.HttpResponse, state: ResState, reply: HttpResponse, close: boolean): void {
  if (state.aborted) return;
  state.aborted = true;
  res.cork(() => {
    res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.writeHeader(k, v);
    res.end(reply.body, close || state.traffic.draining);
  });
  state.settle();
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
