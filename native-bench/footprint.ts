/**
 * @module native-bench/footprint — the server's resident memory with the real model: at ready, with
 * the model just used, idle (after the embedding worker's idle timeout), and idle again once the
 * store holds N memories (imported with their vectors, so no model time is needed to fill it).
 *
 *   npm run build && node --import tsx native-bench/footprint.ts [--sizes 10000,100000] [--embedder model|hash]
 *     [--idle-s 5] [--settle-s 10] [--cli PATH] [--seed 42]
 *
 * `--idle-s` sets FLASHBULB_EMBED_IDLE_S for the run (the default, 300 s, is a long wait); a build
 * without that setting keeps its model loaded, which is what "idle" means for it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag, stringFlag } from './lib/args.ts';
import { sentence } from './lib/corpus.ts';
import { rssBytes } from './lib/proc.ts';
import { Rng } from './lib/prng.ts';
import { freePort, startServer, type RunningServer } from './lib/server-process.ts';
import { formatTable, type Cell } from './lib/table.ts';

const DIM = 384;
const MB = 1024 * 1024;
const threads = (pid: number): number =>
  Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A unit vector near one of 64 centres, as the import's base64 little-endian float32. */
function vector(rng: Rng, centres: Float32Array[]): string {
  const c = centres[Math.floor(rng.next() * centres.length)] as Float32Array;
  const v = new Float32Array(DIM);
  let ss = 0;
  for (let k = 0; k < DIM; k++) {
    v[k] = (c[k] ?? 0) + (rng.next() - 0.5) * 0.3;
    ss += (v[k] ?? 0) ** 2;
  }
  const inv = 1 / Math.sqrt(ss);
  for (let k = 0; k < DIM; k++) v[k] = (v[k] ?? 0) * inv;
  return Buffer.from(v.buffer).toString('base64');
}

async function post(
  server: RunningServer,
  path: string,
  type: string,
  body: string,
): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': type },
    body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}

async function importMemories(
  server: RunningServer,
  count: number,
  rng: Rng,
  centres: Float32Array[],
): Promise<void> {
  for (let done = 0; done < count; ) {
    const n = Math.min(2000, count - done);
    const lines = Array.from({ length: n }, () =>
      JSON.stringify({
        memory: { content: sentence(rng), importance: 0.5, embedding: vector(rng, centres) },
      }),
    );
    await post(server, '/v1/import', 'application/x-ndjson', `${lines.join('\n')}\n`);
    done += n;
  }
}

/**
 * RSS once it has stopped falling for 10 s (the worker's exit, garbage collection), or after
 * `settleS`. A shorter wait stops on a plateau: ~10 s after the last work the RSS falls again by
 * 30–40 MB in every build (V8 shrinking the heaps; a 2 s wait, the first version, stopped before).
 */
async function settledRss(pid: number, settleS: number): Promise<number> {
  let last = rssBytes(pid);
  let stable = 0;
  for (let i = 0; i < settleS * 4 && stable < 40; i++) {
    await sleep(250);
    const now = rssBytes(pid);
    stable = Math.abs(now - last) < MB ? stable + 1 : 0;
    last = now;
  }
  return last;
}

/** glibc's malloc settings from this environment, passed on to the server. */
function malloc(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => e[0].startsWith('MALLOC_') && e[1] !== undefined,
    ),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      embedder: { type: 'string' },
      sizes: { type: 'string' },
      'idle-s': { type: 'string' },
      'settle-s': { type: 'string' },
      cli: { type: 'string' },
      seed: { type: 'string' },
    },
  });
  const sizes = (stringFlag(values, 'sizes') ?? '10000,100000').split(',').map(Number);
  const idleS = numberFlag(values, 'idle-s', 5);
  const settleS = numberFlag(values, 'settle-s', 10);
  const cli = stringFlag(values, 'cli');
  const rng = new Rng(numberFlag(values, 'seed', 42));
  const centres = Array.from({ length: 64 }, () =>
    Float32Array.from({ length: DIM }, () => rng.next() - 0.5),
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'fb-footprint-'));
  const server = await startServer({
    dataDir,
    port: await freePort(),
    env: {
      ...malloc(),
      FLASHBULB_EMBEDDER: stringFlag(values, 'embedder') ?? 'model',
      FLASHBULB_EMBED_IDLE_S: String(idleS),
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_DURABILITY: 'os',
    },
    ...(cli === undefined ? {} : { cli }),
  });
  const rows: Cell[][] = [];
  const row = (state: string, memories: number, rss: number): void => {
    rows.push([state, memories, (rss / MB).toFixed(0), threads(server.pid)]);
    console.error(
      `${state}, ${memories} memories: ${(rss / MB).toFixed(0)} MB, ${threads(server.pid)} threads`,
    );
  };
  try {
    row('ready', 0, rssBytes(server.pid));
    await post(
      server,
      '/v1/memories',
      'application/json',
      JSON.stringify({ content: 'The footprint probe embeds one sentence.' }),
    );
    row('model just used', 1, rssBytes(server.pid));
    await sleep((idleS + 1) * 1000);
    row('idle', 1, await settledRss(server.pid, settleS));
    let held = 1;
    for (const size of sizes) {
      await importMemories(server, size - held, rng, centres);
      held = size;
      await sleep((idleS + 1) * 1000);
      row('idle', held, await settledRss(server.pid, settleS));
    }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(formatTable(['state', 'memories', 'RSS MB', 'threads'], rows));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
