/**
 * @module http/listener — the REST listener on node:http (llhttp). It turns each request into a
 * plain request object and a promise of a response, reads bodies with a size bound, answers HEAD
 * like GET without the body, and drains: it counts requests in flight so shutdown can wait for
 * them. llhttp gives what uWebSockets.js 20.30 could not (issue 12): HTTP/1.0 answered and closed
 * unless keep-alive is asked for, pipelined requests answered in order, and malformed requests
 * (bad version, bare LF, header without colon, space in the path) a prompt 400.
 * Everything else in http/ is framework-free; the objects it hands over are declared in
 * http/exchange.
 */
import http from 'node:http';
import net, { type Socket } from 'node:net';
import {
  connectionsRefused,
  connectionsTimedOut,
  requestsRejectedBeforeBody,
} from '../metrics/index.ts';
import { writeParts } from './parts-writer.ts';
import type {
  HttpResponse,
  StreamResponse,
  OutStream,
  HttpServerOptions,
  HttpServer,
} from './exchange.ts';

/** A connection on a place kept for health checks is closed after this long without traffic. */
const HEALTH_ONLY_IDLE_MS = 1000;
/** How often node:http checks the header and request timeouts (its default, 30 s, let them run 30 s over). */
const TIMEOUT_CHECK_MS = 500;

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
    return this.#inflight === 0
      ? Promise.resolve()
      : new Promise((resolve) => this.#idle.push(resolve));
  }
}

const HEADERS_OF_INTEREST = [
  'authorization',
  'content-type',
  'content-length',
  'transfer-encoding',
  'content-encoding',
  'accept',
  // MCP's Streamable HTTP transport; the dashboard's static files (http/static.ts).
  'mcp-protocol-version',
  'mcp-session-id',
  'accept-encoding',
  'if-none-match',
  // W3C trace context (src/tracing): the parent of the request's span when tracing is on; and
  // what the span records of the request (http/request-span).
  'traceparent',
  'host',
  'user-agent',
  'x-forwarded-proto',
];

export function listenHttp<A>(opts: HttpServerOptions<A>): Promise<HttpServer> {
  const traffic = new Traffic();
  const sockets = new Set<Socket>();
  const { limits } = opts;
  const server = http.createServer({
    keepAliveTimeout: limits.headersTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs + 1),
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    noDelay: true,
    // The Host header is not needed (one virtual host), and HTTP/1.0 clients often leave it out.
    requireHostHeader: false,
  });
  server.on('connection', (socket: Socket) => {
    if (traffic.draining) return void socket.destroy();
    // A connection that does not authenticate in time, or must make room for a newcomer, is closed,
    // after the reply it is sending if there is one.
    const admission = limits.gate.admit(socket, 'rest', true, () =>
      (busy.get(socket) ?? 0) === 0 ? socket.destroy() : closeWhenIdle.add(socket),
    );
    if (admission === 'refused') return refuseConnection(opts, socket);
    if (admission === 'health_only') {
      // A reserved place is held briefly: one health check, then the connection closes.
      healthOnly.add(socket);
      socket.setTimeout(Math.min(HEALTH_ONLY_IDLE_MS, limits.headersTimeoutMs), () =>
        socket.destroy(),
      );
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) =>
    onRequest(opts, traffic, req, res, false),
  );
  // `Expect: 100-continue`: the client waits for a go-ahead before sending its body. It gets one
  // only once the head is admitted; a refusal (401, 413, 415) is the final answer instead.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) =>
    onRequest(opts, traffic, req, res, true),
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
    rejectMalformed(opts, err, socket),
  );
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : opts.port;
      const drain = (): void => {
        if (traffic.draining) return;
        traffic.draining = true;
        // Stop listening but leave open connections alone: their next request gets `unavailable`.
        // http.Server#close would also drop idle keep-alive connections without an answer, so
        // this is net.Server's close, which only closes the listening socket.
        net.Server.prototype.close.call(server);
      };
      const close = (): void => {
        drain();
        for (const s of sockets) s.destroy();
      };
      resolve({ port, drain, idle: () => traffic.idle(), close });
    });
  });
}

/** Connections admitted on the places kept for health checks. */
const healthOnly = new WeakSet<Socket>();
/** Requests being answered on each connection, and the connections to close once they are. */
const busy = new WeakMap<Socket, number>();
const closeWhenIdle = new WeakSet<Socket>();

/** A request llhttp could not parse: a 400 naming the problem, then the connection closes. */
function rejectMalformed<A>(
  opts: HttpServerOptions<A>,
  err: NodeJS.ErrnoException,
  socket: Socket,
): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  if (timedOut) connectionsTimedOut.labels('request').inc();
  endWith(socket, timedOut ? { status: 408, body: '' } : opts.malformed(describeParseError(err)));
}

/** Over a connection cap: told so before anything is read, then closed. */
function refuseConnection<A>(opts: HttpServerOptions<A>, socket: Socket): void {
  endWith(
    socket,
    opts.unavailable('too many connections (from this address or in all); retry shortly'),
  );
}

/** Writes a whole reply on a bare socket and closes it once written. */
function endWith(socket: Socket, reply: HttpResponse): void {
  const body =
    typeof reply.body === 'string' || Buffer.isBuffer(reply.body)
      ? Buffer.from(reply.body)
      : Buffer.concat(reply.body.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  const head = [
    `HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status] ?? ''}`,
    'connection: close',
    `content-length: ${body.length}`,
  ];
  for (const [k, v] of Object.entries(reply.headers ?? {})) head.push(`${k}: ${v}`);
  socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]), () =>
    socket.destroy(),
  );
}

function describeParseError(err: NodeJS.ErrnoException): string {
  const reason = (err as { reason?: unknown }).reason;
  const detail = typeof reason === 'string' && reason !== '' ? reason : err.message;
  return `malformed HTTP request: ${detail}${err.code === undefined ? '' : ` (${err.code})`}`;
}

function onRequest<A>(
  opts: HttpServerOptions<A>,
  traffic: Traffic,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  expectsContinue: boolean,
): void {
  const state: ResState = {
    done: false,
    closed: false,
    onClose: [],
    settle: traffic.begin(),
    traffic,
  };
  const socket = req.socket;
  busy.set(socket, (busy.get(socket) ?? 0) + 1);
  res.once('close', () => {
    const left = (busy.get(socket) ?? 1) - 1;
    busy.set(socket, left);
    if (left === 0 && closeWhenIdle.has(socket)) socket.destroy();
    state.closed = true;
    state.settle();
    for (const cb of state.onClose.splice(0)) cb();
  });
  if (traffic.draining)
    return send(res, state, opts.unavailable('the server is shutting down'), true);
  const headers = new Map<string, string>();
  for (const name of HEADERS_OF_INTEREST) {
    const v = req.headers[name];
    if (typeof v === 'string' && v !== '') headers.set(name, v);
  }
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const method = (req.method ?? 'GET').toUpperCase();
  const declared = Number(headers.get('content-length') ?? '0');
  const hasBody = declared > 0 || headers.has('transfer-encoding');
  const reserved = healthOnly.has(req.socket);
  if (reserved && !opts.isHealth(path)) {
    connectionsRefused.labels('rest', 'reserved').inc();
    return send(
      res,
      state,
      opts.unavailable(
        'too many connections: the last places are kept for health checks; retry shortly',
      ),
      true,
    );
  }
  const limit = opts.maxBodyBytes(path);
  if (declared > limit) return send(res, state, opts.tooLarge(limit), true);
  const decided = opts.admit({ method, path, query, headers });
  if ('reply' in decided) {
    if (hasBody) requestsRejectedBeforeBody.inc();
    // A stranger's refused request ends its connection: it cannot hold one by asking again and again.
    return send(res, state, decided.reply, hasBody || opts.limits.gate.isStranger(socket));
  }
  if (decided.authenticated) opts.limits.gate.authenticated(socket);
  const respond = (body: Buffer): void => {
    opts.handler({ method, path, query, headers, body }, decided.admitted).then(
      (reply) =>
        'kind' in reply ? openStream(res, state, reply) : send(res, state, reply, reserved),
      () =>
        send(
          res,
          state,
          { status: 500, body: '{"error_code":"internal_error","message":"internal error"}' },
          false,
        ),
    );
  };
  // Without a body there is nothing to wait for (node:http discards the empty stream itself).
  if (!hasBody) return respond(EMPTY);
  if (expectsContinue) res.writeContinue();
  readBody(req, { limit, idleMs: opts.limits.bodyTimeoutMs }, (body) => {
    if (body === 'too_large') return send(res, state, opts.tooLarge(limit), true);
    if (body === 'stalled') {
      connectionsTimedOut.labels('body').inc();
      return send(res, state, { status: 408, body: '' }, true);
    }
    respond(body);
  });
}

const EMPTY = Buffer.alloc(0);

/** Reads a body up to `limit` bytes; a body that sends nothing for `idleMs` is `stalled`. */
function readBody(
  req: http.IncomingMessage,
  bounds: { limit: number; idleMs: number },
  done: (body: Buffer | 'too_large' | 'stalled') => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (body: Buffer | 'too_large' | 'stalled'): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    done(body);
  };
  const stalled = (): void => finish('stalled');
  const timer = setTimeout(stalled, bounds.idleMs);
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    timer.refresh();
    size += chunk.length;
    if (size > bounds.limit) return finish('too_large');
    chunks.push(chunk);
  });
  req.on('end', () => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
  req.on('close', () => clearTimeout(timer));
}

interface ResState {
  done: boolean;
  /** The response has closed (sent, or its connection went). */
  closed: boolean;
  onClose: Array<() => void>;
  /** Counts the request out of the traffic in flight: on its reply, its close, or once its stream is open. */
  settle: () => void;
  readonly traffic: Traffic;
}

function openStream(res: http.ServerResponse, state: ResState, reply: StreamResponse): void {
  if (state.done || res.destroyed) return;
  state.done = true;
  // An open stream is not a request in flight: shutdown ends it (subscriptions close) rather than waiting.
  state.settle();
  res.writeHead(reply.status, reply.headers);
  res.flushHeaders();
  let ended = false;
  const stream: OutStream = {
    get closed() {
      return ended || res.destroyed || res.writableEnded;
    },
    write: (chunk) => (stream.closed ? false : res.write(chunk)),
    onWritable: (cb) => {
      res.on('drain', cb);
    },
    onClose: (cb) => {
      state.onClose.push(cb);
    },
    end: () => {
      if (stream.closed) return;
      ended = true;
      res.end();
    },
  };
  reply.start(stream);
}

/** Writes a whole reply (without the body for HEAD). With `close` (or while draining) the connection closes once it is sent. */
function send(
  res: http.ServerResponse,
  state: ResState,
  reply: HttpResponse,
  close: boolean,
): void {
  if (reply.done) {
    if (state.closed) reply.done();
    else state.onClose.push(reply.done);
  }
  if (state.done || res.destroyed) return;
  state.done = true;
  const { body } = reply;
  const parts = typeof body === 'string' || Buffer.isBuffer(body) ? null : body;
  const length =
    parts === null
      ? Buffer.byteLength(body as string | Buffer)
      : parts.reduce((n, p) => n + (typeof p === 'string' ? Buffer.byteLength(p) : p.length), 0);
  const headers: Record<string, string | number> = { ...reply.headers, 'content-length': length };
  if (close || state.traffic.draining || closeWhenIdle.has(res.socket as Socket))
    headers['connection'] = 'close';
  res.writeHead(reply.status, headers);
  if (parts === null) res.end(body);
  else void writeParts(res, parts);
}
