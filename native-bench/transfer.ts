/**
 * @module native-bench/transfer — export, import and backup on a real server process (hash
 * embedder, durable acks): import throughput, export throughput with and without embeddings, the
 * server's RSS while an export streams (a reader that stops for a while must not make the server
 * buffer the workspace), and an online backup's duration.
 *
 *   npm run build && node --import tsx native-bench/transfer.ts [--memories 50000] [--pause-s 5] [--keep]
 */
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag } from './lib/args.ts';
import { dirBytes, rssBytes } from './lib/proc.ts';
import { freePort, startServer } from './lib/server-process.ts';

const { values } = parseArgs({
  options: {
    memories: { type: 'string' },
    'pause-s': { type: 'string' },
    keep: { type: 'boolean' },
  },
});
const N = numberFlag(values, 'memories', 50_000);
const PAUSE_S = numberFlag(values, 'pause-s', 5);
const MiB = 1024 * 1024;

const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-transfer-'));
const server = await startServer({
  dataDir,
  port: await freePort(),
  env: {
    FLASHBULB_SHARDS: '2',
    FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
    FLASHBULB_REFLECT_ENABLED: 'false',
  },
});
const base = `http://127.0.0.1:${server.port}`;
const auth = { authorization: `Bearer ${server.apiKey}` };

function line(i: number): string {
  const topics = ['billing', 'shipping', 'support', 'sales', 'hiring'];
  return JSON.stringify({
    memory: {
      content: `Customer ${i} asked about ${topics[i % 5]} on call ${i * 7}; the follow-up is due in ${i % 30} days.`,
      importance: (i % 10) / 10,
      context: { source: 'bench', n: i },
      entity_id: `c${i % 500}`,
    },
  });
}

// ─── import ───────────────────────────────────────────────────────────────────────────────
let t = performance.now();
for (let at = 0; at < N; at += 2000) {
  const body = Array.from({ length: Math.min(2000, N - at) }, (_, j) => line(at + j)).join('\n');
  const res = await fetch(`${base}/v1/import?first_line=${at + 1}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/x-ndjson' },
    body,
  });
  const summary = (await res.json()) as { imported: number; error_count: number };
  if (summary.error_count > 0) throw new Error(JSON.stringify(summary));
}
const importS = (performance.now() - t) / 1000;
console.log(
  `import (no embeddings, the server embeds): ${N} lines in ${importS.toFixed(1)} s = ${Math.round(N / importS)} lines/s`,
);
// Let the background HNSW indexing finish before measuring RSS.
await new Promise((r) => setTimeout(r, 3000));

// ─── export ───────────────────────────────────────────────────────────────────────────────
async function exportOnce(
  query: string,
  pauseAtBytes: number | null,
): Promise<{
  bytes: number;
  lines: number;
  s: number;
  rssBefore: number;
  rssMax: number;
  rssPaused: number;
}> {
  const rssBefore = rssBytes(server.pid);
  let rssMax = rssBefore;
  let rssPaused = 0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssBytes(server.pid))), 50);
  const start = performance.now();
  const out = await new Promise<{ bytes: number; lines: number }>((resolve, reject) => {
    const req = request(`${base}/v1/export${query}`, { headers: auth }, (res) => {
      let bytes = 0;
      let lines = 0;
      let paused = pauseAtBytes === null;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) lines += 1;
        if (!paused && bytes >= (pauseAtBytes as number)) {
          paused = true;
          res.pause();
          setTimeout(() => {
            rssPaused = rssBytes(server.pid);
            res.resume();
          }, PAUSE_S * 1000);
        }
      });
      res.on('end', () => resolve({ bytes, lines }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  clearInterval(sampler);
  return { ...out, s: (performance.now() - start) / 1000, rssBefore, rssMax, rssPaused };
}

for (const [label, query, pause] of [
  ['export, no embeddings', '', null],
  ['export, embeddings', '?embeddings=true', null],
  [`export, embeddings, reader stops ${PAUSE_S} s after 10 MiB`, '?embeddings=true', 10 * MiB],
] as const) {
  const r = await exportOnce(query, pause);
  const wait = pause === null ? 0 : PAUSE_S;
  console.log(
    `${label}: ${r.lines} lines, ${(r.bytes / MiB).toFixed(1)} MiB in ${r.s.toFixed(1)} s (${Math.round(r.lines / (r.s - wait))} lines/s, ${(r.bytes / MiB / (r.s - wait)).toFixed(0)} MiB/s excluding the stop); ` +
      `server RSS ${(r.rssBefore / MiB).toFixed(0)} MiB before, max ${(r.rssMax / MiB).toFixed(0)} MiB (+${((r.rssMax - r.rssBefore) / MiB).toFixed(0)})` +
      (pause === null ? '' : `, ${(r.rssPaused / MiB).toFixed(0)} MiB at the end of the stop`),
  );
}

// ─── backup ───────────────────────────────────────────────────────────────────────────────
const to = join(mkdtempSync(join(tmpdir(), 'flashbulb-transfer-backup-')), 'copy');
t = performance.now();
const res = await fetch(`${base}/v1/admin/backup`, {
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json' },
  body: JSON.stringify({ to }),
});
if (res.status !== 200) throw new Error(await res.text());
const backupS = (performance.now() - t) / 1000;
console.log(
  `backup: ${N} memories, ${(dirBytes(to) / MiB).toFixed(0)} MiB in ${backupS.toFixed(2)} s`,
);

await server.stop();
if (!values.keep) {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(join(to, '..'), { recursive: true, force: true });
}
