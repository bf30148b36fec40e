/**
 * @module native-bench/lib/rest-client — a minimal Flashbulb REST client over node:http with a
 * keep-alive Agent (one socket per concurrent client), sending the bearer key on every request.
 */
import { Agent, request } from 'node:http';

export interface Reply {
  status: number;
  body: Buffer;
}

export class RestClient {
  readonly #agent: Agent;
  readonly #host: string;
  readonly #port: number;
  readonly #auth: string;

  constructor(opts: { host: string; port: number; apiKey: string; maxSockets: number }) {
    this.#agent = new Agent({
      keepAlive: true,
      maxSockets: opts.maxSockets,
      maxFreeSockets: opts.maxSockets,
    });
    this.#host = opts.host;
    this.#port = opts.port;
    this.#auth = `Bearer ${opts.apiKey}`;
  }

  get(path: string): Promise<Reply> {
    return this.send('GET', path, null);
  }

  post(path: string, body: unknown): Promise<Reply> {
    return this.send('POST', path, JSON.stringify(body));
  }

  send(method: string, path: string, json: string | null): Promise<Reply> {
    const headers: Record<string, string | number> = { authorization: this.#auth };
    if (json !== null) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(json);
    }
    return new Promise((resolve, reject) => {
      const req = request(
        { host: this.#host, port: this.#port, method, path, headers, agent: this.#agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(json ?? undefined);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** Parses a JSON reply, failing with the status and body when it is not the expected status. */
export function expectJson<T>(reply: Reply, status: number, what: string): T {
  if (reply.status !== status)
    throw new Error(`${what}: HTTP ${reply.status} ${reply.body.toString('utf8').slice(0, 300)}`);
  return JSON.parse(reply.body.toString('utf8')) as T;
}
