/**
 * @module http/exchange — the REST listener's face: the plain request and response objects the rest
 * of http/ works with (a whole body, or a stream of SSE writes), and the listener's options
 * (limits, the connection gate, the handler) and handle. Types only; http/listener implements them
 * on node:http.
 */
import type { ConnectionGate } from './connection-gate.ts';

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
  /** Text, bytes (the dashboard's precompressed files), or text in parts, written a few at a time (api/json-slices). */
  body: string | Buffer | ReadonlyArray<string | Buffer>;
  /** Called once the reply has been sent, or its connection closed before (what it held is given back). */
  done?: () => void;
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

/** What a request's head says: enough to route and authenticate it before reading its body. */
export type RequestHead = Omit<HttpRequest, 'body'>;

/** The caps and timeouts that keep strangers from holding the listener (docs/operations/limits.md). */
export interface ListenerLimits {
  gate: ConnectionGate;
  /** A request head must arrive within this (and an idle keep-alive connection closes after it). */
  headersTimeoutMs: number;
  /** A body that sends nothing for this long gets 408 and its connection closes. */
  bodyTimeoutMs: number;
  /** The whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
}

export interface HttpServerOptions<A> {
  host: string;
  port: number;
  limits: ListenerLimits;
  /** Health routes: the only ones served on the connections kept for health checks. */
  isHealth: (path: string) => boolean;
  /**
   * Decides from the head alone, before any body byte is read: `admitted` goes to the handler
   * (`authenticated`: it presented a valid key, so its connection is no stranger's: connection-gate),
   * `reply` is sent at once (an unauthenticated caller), closing the connection if a body was
   * coming or the connection has not authenticated.
   */
  admit: (head: RequestHead) => { admitted: A; authenticated: boolean } | { reply: HttpResponse };
  /** Largest body accepted for a path; larger ones get `tooLarge` without being read. */
  maxBodyBytes: (path: string) => number;
  tooLarge: (limit: number) => HttpResponse;
  /** A 503 naming why (draining, over a connection cap), sent with `Connection: close`. */
  unavailable: (reason: string) => HttpResponse;
  /** The reply to a request that is not HTTP (sent with `Connection: close`). */
  malformed: (reason: string) => HttpResponse;
  handler: (req: HttpRequest, admitted: A) => Promise<HttpResponse | StreamResponse>;
}

export interface HttpServer {
  readonly port: number;
  /**
   * Stops accepting connections. Requests that arrive later on open keep-alive connections get
   * `unavailable()`, and replies to requests still running close their connection, so clients
   * reconnect elsewhere instead of reusing this one.
   */
  drain(): void;
  /** Resolves once no request is being handled (open streams do not count). */
  idle(): Promise<void>;
  /** Drains, then closes every socket: idle keep-alive connections, open streams, unfinished requests. */
  close(): void;
}
