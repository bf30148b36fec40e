/**
 * @module native-bench/soak — a mixed REST load at a fixed rate against a real server (hash
 * embedder), sampling once per interval the server's RSS, V8 heap, external memory, memory count
 * and the latency of the interval's requests, so that growth can be set against the store's.
 *
 *   npm run build && node --import tsx native-bench/soak.ts [--duration-s 300] [--rate 100]
 *     [--interval-s 30] [--preload 2000] [--server-env FLASHBULB_X=value ...]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, startServer } from './lib/server-process.ts';

const { values } = parseArgs({
  options: {
    'duration-s': { type: 'string', default: '300' },
    rate: { type: 'string', default: '100' },
    'interval-s': { type: 'string', default: '30' },
    preload: { type: 'string', default: '2000' },
    'server-env': { type: 'string', multiple: true, default: [] },
  },
});
const durationS = Number(values['duration-s']);
const rate = Number(values.rate);
const intervalS = Number(values['interval-s']);
const preload = Number(values.preload);
const env = Object.fromEntries(
  (values['server-env'] ?? []).map((kv) => kv.split('=') as [string, string]),
);

const TOPICS = [
  'garden tomato watering',
  'marathon training run',
  'postgres index query',
  'sourdough bread starter',
  'budget review meeting',
  'travel plans to lisbon',
];
let seq = 0;
const sentence = (): string =>
  `${TOPICS[seq % TOPICS.length]} note ${seq++} about item ${Math.floor(Math.random() * 1e6)}`;

const dir = mkdtempSync(join(tmpdir(), 'flashbulb-soak-'));
const port = await freePort();
const server = await startServer({
  dataDir: dir,
  port,
  env: { FLASHBULB_DURABILITY: 'os', ...env },
});
const base = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
const ids: string[] = [];

// biome-ignore lint/suspicious/noExplicitAny: the server's JSON replies, read field by field below.
async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 500) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text;
}

for (let i = 0; i < preload; i += 100) {
  await Promise.all(
    Array.from({ length: Math.min(100, preload - i) }, async () =>
      ids.push((await call('POST', '/v1/memories', { content: sentence() })).memory_id),
    ),
  );
}

/** One operation of the mix: 50% remember, 25% recall, 10% get, 10% list, 5% forget. */
async function op(): Promise<void> {
  const r = Math.random();
  if (r < 0.5)
    ids.push(
      (await call('POST', '/v1/memories', { content: sentence(), entity_id: `e${seq % 20}` }))
        .memory_id,
    );
  else if (r < 0.75)
    await call('POST', '/v1/recall', { cue: sentence(), strategies: ['similarity'], top_k: 10 });
  else if (r < 0.85)
    await call('GET', `/v1/memories/${ids[Math.floor(Math.random() * ids.length)]}`);
  else if (r < 0.95) await call('GET', '/v1/memories?limit=50');
  else {
    const id = ids.splice(Math.floor(Math.random() * ids.length), 1)[0];
    if (id !== undefined) await call('POST', '/v1/forget', { memory_ids: [id] });
  }
}

async function metrics(): Promise<Record<string, number>> {
  const text = String(await call('GET', '/v1/metrics'));
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(flashbulb_[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m && m[2] === undefined) out[m[1] as string] = Number(m[3]);
  }
  return out;
}

const mb = (b: number | undefined): string => ((b ?? 0) / 2 ** 20).toFixed(0);
console.log(
  't_s | memories | rss MB | heap used MB | heap total MB | external MB | arrayBuffers MB | ops | p50 ms | p99 ms',
);
const started = Date.now();
let latencies: number[] = [];
let errors = 0;
const timer = setInterval(() => {
  const t0 = performance.now();
  op().then(
    () => latencies.push(performance.now() - t0),
    (err: unknown) => {
      errors += 1;
      if (errors < 5) console.error(String(err));
    },
  );
}, 1000 / rate);
for (let t = intervalS; t <= durationS; t += intervalS) {
  await new Promise((r) => setTimeout(r, started + t * 1000 - Date.now()));
  const m = await metrics();
  const lat = latencies.sort((a, b) => a - b);
  latencies = [];
  const q = (p: number): string =>
    (lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0).toFixed(1);
  console.log(
    [
      t,
      m['flashbulb_memories'],
      mb(m['flashbulb_process_resident_memory_bytes']),
      mb(m['flashbulb_nodejs_heap_size_used_bytes']),
      mb(m['flashbulb_nodejs_heap_size_total_bytes']),
      mb(m['flashbulb_nodejs_external_memory_bytes']),
      '',
      lat.length,
      q(0.5),
      q(0.99),
    ].join(' | '),
  );
}
clearInterval(timer);
console.log(`errors: ${errors}`);
await server.stop();
rmSync(dir, { recursive: true, force: true });
