/**
 * @module native-bench/micro/tracing — what tracing costs a request: an in-process server (hash
 * embedder, auth off) answers REST get and remember through `http/server.ts` `handle()` (the
 * whole route path, no sockets), first with tracing off (the default), then on with spans handed
 * in batches (the batch processor `otlp` uses) to an in-memory exporter instead of the network.
 * Each measurement runs in a fresh process; rounds alternate off and on so drift on a shared
 * machine hits both alike; the figure is the median over rounds of the process's CPU per request,
 * every thread included.
 *
 *   node --import tsx native-bench/micro/tracing.ts [--rounds 5] [--requests 2000]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { numberFlag } from '../lib/args.ts';
import { formatTable, type Cell } from '../lib/table.ts';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { handle } from '../../src/http/server.ts';
import type { HttpRequest } from '../../src/http/exchange.ts';
import type { Services } from '../../src/verbs/context.ts';
import { startTracing, tracer } from '../../src/tracing/index.ts';

function request(method: string, path: string, body?: object): HttpRequest {
  const headers = new Map<string, string>(body ? [['content-type', 'application/json']] : []);
  return {
    method,
    path,
    query: new URLSearchParams(),
    headers,
    body: Buffer.from(body ? JSON.stringify(body) : ''),
  };
}

/** CPU of this process per request, in microseconds, for `n` requests made one after another. */
async function cpuPerRequest(
  svc: Services,
  n: number,
  make: (i: number) => HttpRequest,
): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await handle(svc, make(i));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

/** One measurement in a fresh process (tracing once on stays on in a process: its context hooks do). */
async function child(on: boolean, n: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-tracing-'));
  if (on) startTracing({ exporter: new InMemorySpanExporter(), batch: true });
  const app = await startApp(
    loadConfig({
      FLASHBULB_EMBEDDER: 'hash',
      FLASHBULB_AUTH_ENABLED: 'false',
      FLASHBULB_DATA_DIR: dir,
      FLASHBULB_HTTP_PORT: '0',
      FLASHBULB_GRPC_PORT: '0',
      FLASHBULB_BIND: '127.0.0.1',
      FLASHBULB_REFLECT_ENABLED: 'false',
      FLASHBULB_CONTRADICTIONS_ENABLED: 'false',
      FLASHBULB_DURABILITY: 'os',
    }),
    { log: () => {} },
  );
  const stored = await handle(
    app.svc,
    request('POST', '/v1/memories', { content: 'a memory to read back' }),
  );
  const id = (JSON.parse(String('body' in stored ? stored.body : '{}')) as { memory_id: string })
    .memory_id;
  await cpuPerRequest(app.svc, n / 4, () => request('GET', `/v1/memories/${id}`)); // warm-up
  const get = await cpuPerRequest(app.svc, n, () => request('GET', `/v1/memories/${id}`));
  const remember = await cpuPerRequest(app.svc, n / 4, (i) =>
    request('POST', '/v1/memories', { content: `note number ${i} about tracing overhead` }),
  );
  await app.stop();
  await tracer().shutdown();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ get, remember }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      rounds: { type: 'string' },
      requests: { type: 'string' },
      child: { type: 'string' },
    },
  });
  const n = numberFlag(values, 'requests', 2000);
  if (values.child !== undefined) return child(values.child === 'on', n);
  const samples: Record<string, number[]> = {
    'get off': [],
    'get on': [],
    'remember off': [],
    'remember on': [],
  };
  for (let r = 0; r < numberFlag(values, 'rounds', 5); r++) {
    for (const mode of ['off', 'on']) {
      const out = execFileSync(
        process.execPath,
        [
          ...process.execArgv,
          fileURLToPath(import.meta.url),
          '--child',
          mode,
          '--requests',
          String(n),
        ],
        { encoding: 'utf8' },
      );
      const m = JSON.parse(out) as { get: number; remember: number };
      samples[`get ${mode}`]!.push(m.get);
      samples[`remember ${mode}`]!.push(m.remember);
    }
  }
  const median = (xs: number[]): number =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const rows: Cell[][] = ['get', 'remember'].map((op) => {
    const off = median(samples[`${op} off`]!);
    const on = median(samples[`${op} on`]!);
    return [
      op,
      off.toFixed(1),
      on.toFixed(1),
      `+${(on - off).toFixed(0)} µs (${(((on - off) / off) * 100).toFixed(0)} %)`,
    ];
  });
  console.log(
    formatTable(
      [
        'REST op (in process)',
        'CPU µs/request, tracing off',
        'tracing on (in-memory exporter)',
        'cost of tracing on',
      ],
      rows,
    ),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
