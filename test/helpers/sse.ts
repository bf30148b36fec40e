/**
 * A small Server-Sent Events client over node:http for tests. It opens a POST (or any method)
 * request, and once the response is 200 with `text/event-stream` it parses events incrementally
 * as bytes arrive: `event:`, `data:` (multi-line joined with "\n"), `id:`, and `:` comments.
 * Every socket gets its own connection (no agent), so destroying one never touches another.
 */
import http from 'node:http';

export interface SseEvent {
  /** The `event:` field; 'message' when absent (unnamed events). */
  event: string;
  /** The raw `data:` payload. */
  data: string;
  /** The `id:` field, or null when absent. */
  id: string | null;
  /** `data` parsed as JSON (undefined when it is not JSON). */
  json: any;
  /** When the event was received (Date.now(), ms). */
  at: number;
}

export interface SseOpenFailure {
  ok: false;
  status: number;
  body: any;
  text: string;
}

export class SseStream {
  readonly ok = true as const;
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Every event received so far, in order. */
  readonly events: SseEvent[] = [];
  /** Comment lines (without the leading ':'), e.g. keep-alives. */
  readonly comments: string[] = [];
  /** Resolves when the server ends the response (or the socket closes). */
  readonly ended: Promise<void>;
  #ended = false;
  #buf = '';
  #cur: { event: string | null; data: string[]; id: string | null } = {
    event: null,
    data: [],
    id: null,
  };
  #waiters: Array<() => void> = [];
  readonly #req: http.ClientRequest;
  readonly #res: http.IncomingMessage;

  constructor(req: http.ClientRequest, res: http.IncomingMessage) {
    this.#req = req;
    this.#res = res;
    this.status = res.statusCode ?? 0;
    this.headers = res.headers;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.#onData(chunk));
    this.ended = new Promise<void>((resolve) => {
      const done = (): void => {
        if (this.#ended) return;
        this.#ended = true;
        resolve();
        this.#wake();
      };
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
  }

  get isEnded(): boolean {
    return this.#ended;
  }

  /** Events of a given name (unnamed pushes are 'message'). */
  named(event: string): SseEvent[] {
    return this.events.filter((e) => e.event === event);
  }

  /** The unnamed push events' JSON payloads. */
  get pushes(): any[] {
    return this.named('message').map((e) => e.json);
  }

  /** Waits until `pred(events)` holds; rejects after `timeoutMs` with what was seen. */
  async until(
    pred: (events: SseEvent[]) => boolean,
    timeoutMs = 5000,
    what = 'condition',
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.events)) {
      if (this.#ended && !pred(this.events))
        throw new Error(`stream ended before ${what}; events: ${this.#describe()}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; events: ${this.#describe()}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for at least `n` events named `event`, and returns them. */
  async waitFor(event: string, n = 1, timeoutMs = 5000): Promise<SseEvent[]> {
    await this.until(
      (evs) => evs.filter((e) => e.event === event).length >= n,
      timeoutMs,
      `${n} '${event}' event(s)`,
    );
    return this.named(event);
  }

  /** Waits for at least `n` pushes (unnamed events), and returns their payloads. */
  async waitForPushes(n: number, timeoutMs = 5000): Promise<any[]> {
    await this.waitFor('message', n, timeoutMs);
    return this.pushes;
  }

  /** Stops reading (the socket's receive buffer then fills and the server sees backpressure). */
  pause(): void {
    this.#res.pause();
  }

  /** Starts reading again after `pause()`. */
  resume(): void {
    this.#res.resume();
  }

  /** Drops the connection from the client side. */
  destroy(): void {
    this.#req.destroy();
    this.#res.destroy();
  }

  #describe(): string {
    const brief = (e: SseEvent): object => ({
      event: e.event,
      id: e.id,
      data: e.data.length > 160 ? `${e.data.slice(0, 160)}…` : e.data,
    });
    const evs = this.events;
    const shown =
      evs.length <= 6
        ? evs.map(brief)
        : [
            ...evs.slice(0, 3).map(brief),
            `… ${evs.length - 6} more …`,
            ...evs.slice(-3).map(brief),
          ];
    return `${evs.length} event(s) ${JSON.stringify(shown)}`;
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  #onData(chunk: string): void {
    this.#buf += chunk;
    let nl: number;
    let got = false;
    while ((nl = this.#buf.search(/\r\n|\r|\n/)) >= 0) {
      const sepLen = this.#buf.startsWith('\r\n', nl) ? 2 : 1;
      const line = this.#buf.slice(0, nl);
      this.#buf = this.#buf.slice(nl + sepLen);
      if (this.#line(line)) got = true;
    }
    if (got) this.#wake();
  }

  /** Handles one line; true when it completed an event. */
  #line(line: string): boolean {
    if (line === '') {
      const cur = this.#cur;
      this.#cur = { event: null, data: [], id: null };
      if (cur.event === null && cur.data.length === 0 && cur.id === null) return false;
      const data = cur.data.join('\n');
      let json: any;
      try {
        json = JSON.parse(data);
      } catch {
        json = undefined;
      }
      this.events.push({ event: cur.event ?? 'message', data, id: cur.id, json, at: Date.now() });
      return true;
    }
    if (line.startsWith(':')) {
      this.comments.push(line.slice(1).trimStart());
      return false;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#cur.event = value;
    else if (field === 'data') this.#cur.data.push(value);
    else if (field === 'id') this.#cur.id = value;
    return false;
  }
}

/**
 * Opens an SSE request. Resolves with the stream once the response head arrives with status 200,
 * or with the failure (status and parsed body) otherwise.
 */
export function openSse(
  base: string,
  path: string,
  opts: { method?: string; body?: unknown; key?: string | null } = {},
): Promise<SseStream | SseOpenFailure> {
  const url = new URL(path, base);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (opts.key) headers['authorization'] = `Bearer ${opts.key}`;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: opts.method ?? 'POST',
        headers,
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let body: any = text;
            try {
              body = JSON.parse(text);
            } catch {
              /* not JSON */
            }
            resolve({ ok: false, status: res.statusCode ?? 0, body, text });
          });
          res.on('error', reject);
          return;
        }
        resolve(new SseStream(req, res));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens a subscription and waits for its `subscribed` event; throws if opening fails. */
export async function subscribeSse(
  base: string,
  key: string | null,
  body: unknown = {},
  path = '/v1/subscribe',
): Promise<{ stream: SseStream; id: number }> {
  const s = await openSse(base, path, { body, key });
  if (!s.ok) throw new Error(`subscribe failed: ${s.status} ${s.text}`);
  const [first] = await s.waitFor('subscribed');
  return { stream: s, id: first?.json?.subscription_id as number };
}
