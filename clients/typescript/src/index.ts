/**
 * @module @flashbulb/client — a typed client for Flashbulb's REST API: one method per route
 * (generated from the server's OpenAPI document), `subscribe()` as an async iterator of pushes,
 * errors carrying the server's `error_code`, retries on 429 / 503 honouring `Retry-After`, and
 * workspace scoping. Needs only the platform's `fetch` (Node 20+, browsers, Deno, Bun).
 *
 * Where it connects: the options, else FLASHBULB_URL / FLASHBULB_API_KEY / FLASHBULB_WORKSPACE
 * (where the runtime has `process.env`), else http://localhost:6381, the port `flashbulb serve`
 * listens on: a new user's first server is a local one. A server it cannot reach rejects with
 * `FlashbulbConnectionError` naming the URL and where it came from; a 401 says how to give a key.
 */
import {
  GeneratedClient,
  OPERATIONS,
  type CallArgs,
  type ErrorCode,
  type OperationId,
  type SubscribeBody,
  type SubscribeClosedEvent,
  type SubscribeMessageEvent,
  type UploadResponse,
} from './generated.ts';

export * from './generated.ts';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  retries?: number;
  /** First back-off when the server gives no Retry-After, doubled each time (default 200 ms). */
  baseDelayMs?: number;
  /** Longest single wait, Retry-After included (default 10 s). */
  maxDelayMs?: number;
}

export interface ClientOptions {
  /** The server (default: FLASHBULB_URL, else `http://localhost:6381`). */
  baseUrl?: string | undefined;
  /** A bearer API key, fb_admin_… or fb_live_… (default: FLASHBULB_API_KEY). */
  apiKey?: string | undefined;
  /** Act in this workspace (admin keys) through the /v1/workspaces/<slug>/ prefix (default: FLASHBULB_WORKSPACE). */
  workspace?: string | undefined;
  retry?: RetryOptions;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
}

export interface RequestOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** The server's port when nothing says otherwise: `flashbulb serve`'s default. */
export const DEFAULT_URL = 'http://localhost:6381';

/** An error answer from the server: its HTTP status, `error_code` and message. */
export class FlashbulbError extends Error {
  override readonly name: string = 'FlashbulbError';
  readonly status: number;
  /** The server's `error_code`, or `connection_error` when no server answered. */
  readonly code: ErrorCode | 'connection_error';
  /** Seconds the server asked to wait (429, 503), when it said. */
  readonly retryAfterS: number | undefined;

  constructor(
    status: number,
    code: ErrorCode | 'connection_error',
    message: string,
    retryAfterS?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = status;
    this.code = code;
    this.retryAfterS = retryAfterS;
  }
}

/** No server answered (refused, unknown host, network down): `status` 0, `code` `connection_error`. */
export class FlashbulbConnectionError extends FlashbulbError {
  override readonly name: string = 'FlashbulbConnectionError';

  constructor(message: string, cause: unknown) {
    super(0, 'connection_error', message, undefined, { cause });
  }
}

type Origin = 'option' | 'FLASHBULB_URL' | 'FLASHBULB_API_KEY' | 'default' | 'none';

/** A variable of the environment, where the runtime has one (Node, Bun, Deno's process); blank is unset. */
function env(name: string): string | undefined {
  const value = (
    globalThis as { process?: { env?: Record<string, string | undefined> } }
  ).process?.env?.[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

interface Resolved {
  base: string;
  apiKey: string | undefined;
  workspace: string | undefined;
  urlFrom: Origin;
  keyFrom: Origin;
}

function resolve(opts: ClientOptions): Resolved {
  const fromEnv = env('FLASHBULB_URL');
  const [url, urlFrom]: [string, Origin] = opts.baseUrl
    ? [opts.baseUrl, 'option']
    : fromEnv
      ? [fromEnv, 'FLASHBULB_URL']
      : [DEFAULT_URL, 'default'];
  if (!/^https?:\/\//.test(url)) {
    throw new TypeError(
      `${urlFrom === 'option' ? 'baseUrl' : 'FLASHBULB_URL'} must be an http:// or https:// URL such as ${DEFAULT_URL}, not ${JSON.stringify(url)}`,
    );
  }
  const key = opts.apiKey ?? env('FLASHBULB_API_KEY');
  const keyFrom: Origin = opts.apiKey ? 'option' : key ? 'FLASHBULB_API_KEY' : 'none';
  return {
    base: url.replace(/\/+$/, ''),
    apiKey: key,
    workspace: opts.workspace ?? env('FLASHBULB_WORKSPACE'),
    urlFrom,
    keyFrom,
  };
}

function unreachable(r: Resolved, err: unknown): FlashbulbConnectionError {
  const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
  const where =
    r.urlFrom === 'default'
      ? `${r.base}, the default: no baseUrl was given and FLASHBULB_URL is not set. Start a server there (flashbulb serve) or point the client at yours: baseUrl or FLASHBULB_URL`
      : `${r.base} (from ${r.urlFrom === 'option' ? 'baseUrl' : 'FLASHBULB_URL'})`;
  return new FlashbulbConnectionError(`cannot reach Flashbulb at ${where}: ${cause}`, err);
}

function explain(r: Resolved, error: FlashbulbError): FlashbulbError {
  if (error.status !== 401) return error;
  const hint =
    r.keyFrom === 'none'
      ? 'no API key was given: pass apiKey or set FLASHBULB_API_KEY (the server prints an admin key the first time it starts; admins make more with keysCreate)'
      : `the key came from ${r.keyFrom === 'option' ? 'apiKey' : 'FLASHBULB_API_KEY'}`;
  return new FlashbulbError(
    error.status,
    error.code,
    `${error.message}; ${hint}`,
    error.retryAfterS,
  );
}

const RETRIED = new Set([429, 503]);

export class FlashbulbClient extends GeneratedClient<RequestOptions> {
  readonly #opts: ClientOptions;
  readonly #fetch: typeof fetch;
  readonly #at: Resolved;

  /** `new FlashbulbClient()` reads FLASHBULB_URL (else http://localhost:6381), FLASHBULB_API_KEY and FLASHBULB_WORKSPACE. */
  constructor(opts: ClientOptions = {}) {
    super();
    this.#opts = opts;
    this.#fetch = opts.fetch ?? ((input, init) => fetch(input, init));
    this.#at = resolve(opts);
  }

  /** The same client acting in another workspace (admin keys). */
  withWorkspace(workspace: string): FlashbulbClient {
    return new FlashbulbClient({ ...this.#opts, workspace });
  }

  /** This client acting in workspace `slug`, which is created first if it does not exist (admin keys). */
  async ensureWorkspace(slug: string, options?: RequestOptions): Promise<FlashbulbClient> {
    try {
      await this.workspacesCreate({ slug }, options);
    } catch (err) {
      if (!(err instanceof FlashbulbError && err.code === 'conflict')) throw err;
    }
    return this.withWorkspace(slug);
  }

  /**
   * Opens a subscription and resolves once the server confirmed it. Iterate it for pushes;
   * `feed(text)` sends conversation text, `close()` ends it (and the iteration).
   */
  async subscribe(body: SubscribeBody = {}, options: RequestOptions = {}): Promise<Subscription> {
    const abort = new AbortController();
    const signal = options.signal ? anySignal([options.signal, abort.signal]) : abort.signal;
    const res = await this.#send(
      'subscribe',
      { body },
      { ...options, signal },
      'text/event-stream',
    );
    if (!res.body)
      throw new FlashbulbError(
        res.status,
        'internal_error',
        'the subscription answered without a stream',
      );
    const events = sseEvents(res.body);
    const first = await events.next();
    if (first.done || first.value.event !== 'subscribed') {
      abort.abort();
      throw new FlashbulbError(
        res.status,
        'internal_error',
        'the stream did not start with a subscribed event',
      );
    }
    const id = (JSON.parse(first.value.data) as { subscription_id: number }).subscription_id;
    return new Subscription(this, id, events, abort);
  }

  /** Uploads documents (.md / .txt); each name is the file's relative path. */
  async upload(
    files: ReadonlyArray<{ name: string; content: string | Blob }>,
    options: RequestOptions = {},
  ): Promise<UploadResponse> {
    const form = new FormData();
    for (const f of files)
      form.append(
        'files',
        typeof f.content === 'string' ? new Blob([f.content], { type: 'text/plain' }) : f.content,
        f.name,
      );
    const res = await this.#send('upload', { body: form }, options);
    return (await res.json()) as UploadResponse;
  }

  protected override async call<T>(
    op: OperationId,
    args: CallArgs,
    options?: RequestOptions,
  ): Promise<T> {
    const res = await this.#send(op, args, options ?? {});
    const kind = OPERATIONS[op].response;
    if (kind === 'text') return (await res.text()) as T;
    if (kind === 'none' || res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  /** Sends one request, retrying 429 and 503 answers; throws FlashbulbError for any other error status. */
  async #send(
    op: OperationId,
    args: CallArgs,
    options: RequestOptions,
    accept = 'application/json',
  ): Promise<Response> {
    const url = this.#url(op, args);
    const headers: Record<string, string> = { accept, ...this.#opts.headers, ...options.headers };
    if (this.#at.apiKey) headers['authorization'] = `Bearer ${this.#at.apiKey}`;
    let body: string | FormData | undefined;
    if (args.body instanceof FormData) body = args.body;
    else if (args.body !== undefined) {
      body = JSON.stringify(args.body);
      headers['content-type'] = 'application/json';
    }
    const retry = { retries: 3, baseDelayMs: 200, maxDelayMs: 10_000, ...this.#opts.retry };
    for (let attempt = 0; ; attempt++) {
      const init: RequestInit = { method: OPERATIONS[op].method, headers };
      if (body !== undefined) init.body = body;
      if (options.signal) init.signal = options.signal;
      let res: Response;
      try {
        res = await this.#fetch(url, init);
      } catch (err) {
        throw err instanceof TypeError ? unreachable(this.#at, err) : err; // fetch's network errors are TypeErrors
      }
      if (res.ok) return res;
      const error = explain(this.#at, await toError(res));
      if (!RETRIED.has(res.status) || attempt >= retry.retries) throw error;
      const backoff = retry.baseDelayMs * 2 ** attempt * (0.5 + Math.random() / 2);
      await sleep(
        Math.min(
          retry.maxDelayMs,
          error.retryAfterS === undefined ? backoff : error.retryAfterS * 1000,
        ),
        options.signal,
      );
    }
  }

  #url(op: OperationId, args: CallArgs): string {
    const spec = OPERATIONS[op];
    let path: string = spec.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(args.params?.[name] ?? ''),
    );
    const ws = this.#at.workspace;
    if (ws !== undefined && spec.scoped)
      path = path.replace(/^\/v1\//, `/v1/workspaces/${encodeURIComponent(ws)}/`);
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(args.query ?? {}))
      if (v !== undefined && v !== null) query.set(k, String(v));
    const qs = query.toString();
    return `${this.#at.base}${path}${qs === '' ? '' : `?${qs}`}`;
  }
}

/** An open subscription: an async iterator of pushes, plus `feed` and `close`. */
export class Subscription implements AsyncIterable<SubscribeMessageEvent> {
  readonly id: number;
  /** Why the stream ended, once it has (`closed`, or `shutdown` when the server stopped). */
  closedReason: SubscribeClosedEvent['reason'] | null = null;
  readonly #client: FlashbulbClient;
  readonly #events: AsyncGenerator<SseEvent>;
  readonly #abort: AbortController;

  constructor(
    client: FlashbulbClient,
    id: number,
    events: AsyncGenerator<SseEvent>,
    abort: AbortController,
  ) {
    this.#client = client;
    this.id = id;
    this.#events = events;
    this.#abort = abort;
  }

  /** Sends text from the conversation; matching memories arrive as pushes. */
  async feed(text: string, options?: RequestOptions): Promise<void> {
    await this.#client.feed(String(this.id), { text }, options);
  }

  /** Closes the subscription on the server; iteration ends after the pushes already sent. */
  async close(options?: RequestOptions): Promise<void> {
    try {
      await this.#client.closeSubscription(String(this.id), options);
    } catch (err) {
      if (!(err instanceof FlashbulbError && err.code === 'not_found')) throw err;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SubscribeMessageEvent> {
    try {
      for await (const e of this.#events) {
        if (e.event === 'closed') {
          this.closedReason = (JSON.parse(e.data) as SubscribeClosedEvent).reason;
          return;
        }
        if (e.event === 'message') yield JSON.parse(e.data) as SubscribeMessageEvent;
      }
    } finally {
      this.#abort.abort();
    }
  }
}

interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

/** Parses a Server-Sent Events stream (comments skipped; `message` is the default event name). */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event: SseEvent = { event: 'message', data: '', id: undefined };
  let hasData = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r?\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(buffer[nl] === '\r' ? nl + 2 : nl + 1);
        if (line === '') {
          if (hasData) yield event;
          event = { event: 'message', data: '', id: undefined };
          hasData = false;
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event.event = val;
          else if (field === 'id') event.id = val;
          else if (field === 'data') {
            event.data = hasData ? `${event.data}\n${val}` : val;
            hasData = true;
          }
        }
      }
    }
  } catch (err) {
    if ((err as { name?: string }).name !== 'AbortError') throw err;
  } finally {
    reader.releaseLock();
  }
}

async function toError(res: Response): Promise<FlashbulbError> {
  const header = res.headers.get('retry-after');
  const retryAfterS = header !== null && /^\d+(\.\d+)?$/.test(header) ? Number(header) : undefined;
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error_code?: ErrorCode; message?: string };
    if (typeof body.error_code === 'string')
      return new FlashbulbError(res.status, body.error_code, body.message ?? text, retryAfterS);
  } catch {
    /* not a Flashbulb error body */
  }
  return new FlashbulbError(
    res.status,
    res.status >= 500 ? 'internal_error' : 'invalid_input',
    `HTTP ${res.status}: ${text.slice(0, 200)}`,
    retryAfterS,
  );
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

function anySignal(signals: AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  for (const s of signals) {
    if (s.aborted) controller.abort(s.reason);
    else s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}
