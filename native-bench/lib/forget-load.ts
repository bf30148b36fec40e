/**
 * @module native-bench/lib/forget-load — the forget-cost benchmark's client and memories: a small
 * REST client with its key, sentences over a few shared topics (so that common words have long
 * postings), and loading them through import, read back as ids.
 */
import type { RunningServer } from './server-process.ts';

const TOPICS = [
  'garden tomato watering',
  'marathon training run',
  'postgres index query',
  'sourdough bread starter',
  'budget review meeting',
  'travel plans to lisbon',
];

export let seq = 0;

/** Sentences like the issue's soak: a few topics and shared words, so common terms have long postings. */
export const sentence = (): string =>
  `${TOPICS[seq % TOPICS.length]} note ${seq++} about item ${Math.floor(Math.random() * 1e6)}`;

export class Client {
  readonly pid: number;
  readonly #base: string;
  readonly #headers: Record<string, string>;

  constructor(server: RunningServer) {
    this.pid = server.pid;
    this.#base = `http://127.0.0.1:${server.port}`;
    this.#headers = {
      authorization: `Bearer ${server.apiKey}`,
      'content-type': 'application/json',
    };
  }

  async call(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
    const headers = contentType ? { ...this.#headers, 'content-type': contentType } : this.#headers;
    const payload =
      body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body);
    const res = await fetch(`${this.#base}${path}`, { method, headers, body: payload });
    const text = await res.text();
    if (res.status >= 400)
      throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    return text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text;
  }
}

/** Imports `n` memories and returns every id in the workspace. */
export async function load(c: Client, n: number): Promise<string[]> {
  for (let at = 0; at < n; at += 2000) {
    const lines = Array.from({ length: Math.min(2000, n - at) }, () =>
      JSON.stringify({ memory: { content: sentence(), entity_id: `e${seq % 20}` } }),
    );
    await c.call(
      'POST',
      `/v1/import?first_line=${at + 1}`,
      lines.join('\n'),
      'application/x-ndjson',
    );
  }
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = (await c.call(
      'GET',
      `/v1/memories?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
    )) as { memories: Array<{ memory_id: string }>; next_cursor: string | null };
    for (const m of page.memories) ids.push(m.memory_id);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return ids;
}
