/**
 * @module native-bench/worker-hop — tinybench micro-benchmark of the router → shard hop alone: a
 * get-sized request posted to a worker thread and a memory-sized reply posted back, one at a
 * time, 32 in flight (one postMessage each), and 32 coalesced into one message each way.
 *
 *   node --import tsx native-bench/worker-hop.ts [--time-ms 2000]
 */
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { Bench } from 'tinybench';
import { numberFlag } from './lib/args.ts';
import { formatTable } from './lib/table.ts';

/** Echo worker: answers each request (or batch of requests) with memory-shaped replies. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const memory = (id) => ({ id, content: 'The customer asked about the invoice for March after the last release (ref 4411).',
  importance: 0.5, context: { source: 'chat', session: 'sess-12', turn: 3, tags: ['billing', 'bug'] }, entityId: 'user-ada',
  kind: 'episode', createdAt: 1763798400000000, updatedAt: 1763798400000000, lastAccessedAt: 1763798400000000,
  accessCount: 0, logicalClock: 0, sourceMemoryIds: null, supersededBy: null });
const reply = (r) => ({ kind: 'reply', id: r.id, ok: true, value: memory(r.input.id) });
parentPort.on('message', (m) => parentPort.postMessage(Array.isArray(m) ? m.map(reply) : reply(m)));
`;

interface Reply {
  id: number;
}

class Hop {
  readonly #worker = new Worker(WORKER_SOURCE, { eval: true });
  readonly #pending = new Map<number, () => void>();
  #next = 1;

  constructor() {
    this.#worker.on('message', (m: Reply | Reply[]) => {
      for (const r of Array.isArray(m) ? m : [m]) this.#settle(r.id);
    });
  }

  #settle(id: number): void {
    this.#pending.get(id)?.();
    this.#pending.delete(id);
  }

  #request(): { msg: object; done: Promise<void> } {
    const id = this.#next++;
    const msg = { kind: 'request', id, method: 'get', ws: 'default', input: { id: '019a9f0c3e5b7a2d4c6e8f1a2b3c4d5e', withEmbedding: false } };
    return { msg, done: new Promise<void>((resolve) => this.#pending.set(id, resolve)) };
  }

  /** `n` requests, one postMessage each. */
  each(n: number): Promise<void[]> {
    const reqs = Array.from({ length: n }, () => this.#request());
    for (const r of reqs) this.#worker.postMessage(r.msg);
    return Promise.all(reqs.map((r) => r.done));
  }

  /** `n` requests in one postMessage. */
  batched(n: number): Promise<void[]> {
    const reqs = Array.from({ length: n }, () => this.#request());
    this.#worker.postMessage(reqs.map((r) => r.msg));
    return Promise.all(reqs.map((r) => r.done));
  }

  close(): Promise<number> {
    return this.#worker.terminate();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { 'time-ms': { type: 'string' } } });
  const hop = new Hop();
  const bench = new Bench({ time: numberFlag(values, 'time-ms', 2000) });
  const cases: [string, number, () => Promise<unknown>][] = [
    ['1 request, 1 message each way', 1, () => hop.each(1)],
    ['32 in flight, 1 message per request', 32, () => hop.each(32)],
    ['32 requests coalesced into 1 message', 32, () => hop.batched(32)],
  ];
  for (const [name, , fn] of cases) bench.add(name, fn);
  const cpu0 = process.cpuUsage();
  await bench.run();
  const cpu = process.cpuUsage(cpu0);
  const rows = bench.tasks.map((t, i) => {
    const per = cases[i]?.[1] ?? 1;
    const mean = t.result.state === 'completed' ? t.result.latency.mean : Number.NaN;
    return [t.name, (mean * 1000) / per, (per * 1000) / mean];
  });
  console.log(formatTable(['case', 'µs per request (wall)', 'requests/s'], rows));
  console.log(`process CPU during the run: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s (both threads)`);
  await hop.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
