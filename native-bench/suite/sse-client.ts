/**
 * @module native-bench/suite/sse-client — a minimal Server-Sent Events reader over node:http for
 * POST /v1/subscribe: one connection of its own, events handed to a callback as they complete.
 */
import { request, type ClientRequest } from 'node:http';

export interface SseEvent {
  /** `event:` field; 'message' for unnamed events. */
  event: string;
  data: string;
}

export interface SseConnection {
  close(): void;
}

interface OpenOptions {
  port: number;
  path: string;
  apiKey: string;
  body: unknown;
  onEvent: (e: SseEvent) => void;
}

/** Opens the stream; resolves once the response head is 200, rejects otherwise. */
export function openSse(opts: OpenOptions): Promise<SseConnection> {
  const payload = JSON.stringify(opts.body);
  const headers = {
    authorization: `Bearer ${opts.apiKey}`,
    accept: 'text/event-stream',
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  };
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(
      {
        host: '127.0.0.1',
        port: opts.port,
        path: opts.path,
        method: 'POST',
        headers,
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`subscribe: HTTP ${res.statusCode ?? 0}`));
          return;
        }
        const parser = new EventParser(opts.onEvent);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.push(chunk));
        res.on('error', () => undefined);
        resolve({ close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Splits the stream into events; only `event:` and `data:` matter here. */
class EventParser {
  #buffer = '';
  #event = 'message';
  #data: string[] = [];
  readonly #emit: (e: SseEvent) => void;

  constructor(emit: (e: SseEvent) => void) {
    this.#emit = emit;
  }

  push(chunk: string): void {
    this.#buffer += chunk;
    let nl: number;
    while ((nl = this.#buffer.indexOf('\n')) >= 0) {
      this.#line(this.#buffer.slice(0, nl).replace(/\r$/, ''));
      this.#buffer = this.#buffer.slice(nl + 1);
    }
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#data.length > 0) this.#emit({ event: this.#event, data: this.#data.join('\n') });
      this.#event = 'message';
      this.#data = [];
    } else if (line.startsWith('event:')) this.#event = line.slice(6).trim();
    else if (line.startsWith('data:')) this.#data.push(line.slice(5).trimStart());
  }
}
