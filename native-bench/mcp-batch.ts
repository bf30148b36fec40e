/**
 * @module native-bench/mcp-batch — the probe's MCP batch amplification at full size (issue 48,
 * item 1): workspace A holds `--memories` (1,000) memories of `--kb` (16) KB; `--batches` (32)
 * JSON-RPC batches of `--calls` (10) `list_memories {limit: 1000}` are sent at once, `--rounds`
 * (3) times, while workspace B reads (`GET /v1/memories?limit=1`, closed loop, one client). It
 * prints B's p50/p99/max before and during the storm, how the calls were answered (a page, or a
 * JSON-RPC error naming a budget), the batches' wall time, the server's peak RSS, whether it lived,
 * and the machine's load. Default settings otherwise (FLASHBULB_MAX_REPLY_BYTES …).
 *
 *   npm run build && node --import tsx native-bench/mcp-batch.ts [--server-env K=V]…
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { envFlag, numberFlag } from './lib/args.ts';
import { freePort, startServer } from './lib/server-process.ts';
import { summarize } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    memories: { type: 'string' },
    kb: { type: 'string' },
    batches: { type: 'string' },
    calls: { type: 'string' },
    rounds: { type: 'string' },
    'baseline-s': { type: 'string' },
    'server-env': { type: 'string', multiple: true },
  },
});
const MEMORIES = numberFlag(values, 'memories', 1000);
const KB = numberFlag(values, 'kb', 16);
const BATCHES = numberFlag(values, 'batches', 32);
const CALLS = numberFlag(values, 'calls', 10);
const ROUNDS = numberFlag(values, 'rounds', 3);
const BASELINE_S = numberFlag(values, 'baseline-s', 3);

const dataDir = mkdtempSync(join(tmpdir(), 'fb-mcp-batch-'));
const port = await freePort();
const server = await startServer({
  dataDir,
  port,
  env: {
    FLASHBULB_GRPC_PORT: '0',
    FLASHBULB_REFLECT_ENABLED: 'false',
    FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
    ...envFlag(values, 'server-env'),
  },
});
const base = `http://127.0.0.1:${port}`;
let exited = false;
const peakRss = (): number =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1] ?? 0) *
  1024;

async function call(
  path: string,
  key: string,
  init: { method?: string; body?: unknown; mcp?: boolean } = {},
): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
  };
  if (init.mcp)
    Object.assign(headers, {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    });
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? null : JSON.stringify(init.body),
    signal: AbortSignal.timeout(300_000),
  });
  return { status: res.status, text: await res.text() };
}

async function workspaceKey(slug: string): Promise<string> {
  const res = await call('/v1/workspaces', server.apiKey, { method: 'POST', body: { slug } });
  if (res.status !== 201) throw new Error(`creating ${slug}: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { api_key: string }).api_key;
}

try {
  const a = await workspaceKey('storm-a');
  const b = await workspaceKey('quiet-b');
  const filler = 'x'.repeat(KB * 1024 - 32);
  for (let i = 0; i < MEMORIES; i += 32) {
    await Promise.all(
      Array.from({ length: Math.min(32, MEMORIES - i) }, async (_, j) => {
        const res = await call('/v1/memories', a, {
          method: 'POST',
          body: { content: `memory ${i + j} ${filler}` },
        });
        if (res.status !== 201)
          throw new Error(`remember: ${res.status} ${res.text.slice(0, 200)}`);
      }),
    );
  }
  await call('/v1/memories', b, { method: 'POST', body: { content: 'B remembers tea' } });

  const reads = async (untilDone: () => boolean): Promise<{ ms: number[]; errors: number }> => {
    const ms: number[] = [];
    let errors = 0;
    while (!untilDone()) {
      const t = performance.now();
      const res = await call('/v1/memories?limit=1', b).catch(() => ({ status: 0, text: '' }));
      ms.push(performance.now() - t);
      if (res.status !== 200) errors += 1;
    }
    return { ms, errors };
  };
  const baselineEnd = performance.now() + BASELINE_S * 1000;
  const before = await reads(() => performance.now() > baselineEnd);

  const outcomes = new Map<string, number>();
  const batch = Array.from({ length: CALLS }, (_, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: { name: 'list_memories', arguments: { limit: 1000 } },
  }));
  let storming = true;
  const during = reads(() => !storming);
  const t0 = performance.now();
  const batchMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(
      Array.from({ length: BATCHES }, async () => {
        const t = performance.now();
        const res = await call('/mcp', a, { method: 'POST', body: batch, mcp: true }).catch(
          (err: unknown) => ({ status: 0, text: String(err) }),
        );
        batchMs.push(performance.now() - t);
        if (res.status !== 200)
          return void outcomes.set(
            `http ${res.status}`,
            (outcomes.get(`http ${res.status}`) ?? 0) + 1,
          );
        const replies = JSON.parse(res.text) as Array<{
          result?: unknown;
          error?: { data?: { limit?: string } };
        }>;
        for (const r of replies) {
          const key = r.error ? `refused (${r.error.data?.limit ?? 'other'})` : 'answered';
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        }
      }),
    );
  }
  const stormS = (performance.now() - t0) / 1000;
  storming = false;
  const after = await during;
  const alive = await call('/v1/health/ready', server.apiKey).then(
    (r) => r.status === 200,
    () => false,
  );
  exited = !alive;
  const line = (name: string, s: ReturnType<typeof summarize>): string =>
    `${name}: ${s.ops} reads, ${s.errors} errors, p50 ${s.p50Ms.toFixed(1)} ms, p99 ${s.p99Ms.toFixed(1)} ms, max ${s.maxMs.toFixed(1)} ms`;
  console.log(
    `workspace A: ${MEMORIES} memories of ${KB} KB; ${ROUNDS} rounds of ${BATCHES} batches of ${CALLS} list_memories {limit: 1000}`,
  );
  console.log(line('B before', summarize(before.ms, before.errors, BASELINE_S)));
  console.log(line('B during', summarize(after.ms, after.errors, stormS)));
  console.log(`calls: ${[...outcomes].map(([k, n]) => `${n} ${k}`).join(', ')}`);
  const bm = summarize(batchMs, 0, stormS);
  console.log(
    `batches: p50 ${bm.p50Ms.toFixed(0)} ms, max ${bm.maxMs.toFixed(0)} ms; storm ${stormS.toFixed(1)} s; server peak RSS ${(peakRss() / 2 ** 20).toFixed(0)} MiB; alive: ${alive}; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  if (!exited) await server.stop();
  else await server.kill();
  rmSync(dataDir, { recursive: true, force: true });
}
