/**
 * @module native-bench/worker-hop — tinybench micro-benchmark of the router → shard hop alone: a
 * get-sized request posted to a worker thread and a memory-sized reply posted back, one at a
 * time, 32 in flight (one postMessage each), and 32 coalesced into one message each way; and, for
 * comparison, a counter in shared memory bumped each way with `Atomics.notify` / `Atomics.waitAsync`
 * (no message, no clone). Beside the wall time per request it reports the process's CPU per request,
 * user and system (the kernel's part: waking a thread that sleeps in its event loop).
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

/** Shared-memory echo: slot 0 is the request counter, slot 1 the reply counter. */
const ATOMICS_SOURCE = `
const { workerData } = require('node:worker_threads');
const slots = new Int32Array(workerData);
const keepAlive = setInterval(() => {}, 60000);
(async () => {
  for (let seen = 0; ; ) {
    const w = Atomics.waitAsync(slots, 0, seen);
    if (w.async) await w.value;
    seen = Atomics.load(slots, 0);
    if (seen < 0) return clearInterval(keepAlive);
    Atomics.store(slots, 1, seen);
    Atomics.notify(slots, 1);
  }
})();
`;

/** `Atomics.waitAsync` (V8 8.7+, in Node 16+), which TypeScript's ES2022 library does not declare. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      a: Int32Array,
      index: number,
      value: number,
    ): { async: boolean; value: Promise<unknown> | string };
  }
).waitAsync;

/** One request at a time through a shared counter: the wake-ups of a hop without its message. */
class AtomicsHop {
  readonly #slots = new Int32Array(new SharedArrayBuffer(8));
  readonly #worker = new Worker(ATOMICS_SOURCE, { eval: true, workerData: this.#slots.buffer });
  #next = 0;

  async one(): Promise<void> {
    const id = ++this.#next;
    Atomics.store(this.#slots, 0, id);
    Atomics.notify(this.#slots, 0);
    // A pending waitAsync does not hold an event loop open: the running worker holds this one
    // (and its interval holds the worker's).
    const w = waitAsync(this.#slots, 1, id - 1);
    if (w.async) await w.value;
  }

  close(): Promise<number> {
    Atomics.store(this.#slots, 0, -1);
    Atomics.notify(this.#slots, 0);
    return this.#worker.terminate();
  }
}

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
    const msg = {
      kind: 'request',
      id,
      method: 'get',
      ws: 'default',
      input: { id: '019a9f0c3e5b7a2d4c6e8f1a2b3c4d5e', withEmbedding: false },
    };
    return { msg, done: new Promise<void>((resolve) => this.#pending.set(id, resolve)) };
  }

  /** `n` requests, one postMessage each. */
  async each(n: number): Promise<void> {
    const reqs = Array.from({ length: n }, () => this.#request());
    for (const r of reqs) this.#worker.postMessage(r.msg);
    await Promise.all(reqs.map((r) => r.done));
  }

  /** `n` requests in one postMessage. */
  async batched(n: number): Promise<void> {
    const reqs = Array.from({ length: n }, () => this.#request());
    this.#worker.postMessage(reqs.map((r) => r.msg));
    await Promise.all(reqs.map((r) => r.done));
  }

  close(): Promise<number> {
    return this.#worker.terminate();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { 'time-ms': { type: 'string' } },
  });
  const hop = new Hop();
  const atomics = new AtomicsHop();
  const timeMs = numberFlag(values, 'time-ms', 2000);
  const cases: [string, number, () => Promise<unknown>][] = [
    ['1 request, 1 message each way', 1, () => hop.each(1)],
    ['32 in flight, 1 message per request', 32, () => hop.each(32)],
    ['32 requests coalesced into 1 message', 32, () => hop.batched(32)],
    ['1 request, shared counter each way (Atomics)', 1, () => atomics.one()],
  ];
  const rows: (string | number)[][] = [];
  for (const [name, per, fn] of cases) {
    // One bench per case; the process's CPU is read around its measured iterations (not the warm-up).
    const bench = new Bench({ time: timeMs });
    let cpu0 = process.cpuUsage();
    let cpu = cpu0;
    bench.add(name, fn, {
      beforeAll: (mode) => {
        if (mode === 'run') cpu0 = process.cpuUsage();
      },
      afterAll: (mode) => {
        if (mode === 'run') cpu = process.cpuUsage(cpu0);
      },
    });
    await bench.run();
    const result = bench.tasks[0]?.result;
    const done = result?.state === 'completed';
    const mean = done ? result.latency.mean : Number.NaN;
    const requests = (done ? result.latency.samplesCount : Number.NaN) * per;
    rows.push([
      name,
      (mean * 1000) / per,
      (per * 1000) / mean,
      cpu.user / requests,
      cpu.system / requests,
    ]);
  }
  console.log(
    formatTable(
      [
        'case',
        'µs per request (wall)',
        'requests/s',
        'user CPU µs/request',
        'system CPU µs/request',
      ],
      rows,
    ),
  );
  console.log(
    '(CPU of the whole process, both threads, over the measured iterations of each case)',
  );
  await hop.close();
  await atomics.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
