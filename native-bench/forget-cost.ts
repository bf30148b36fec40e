/**
 * @module native-bench/forget-cost — what a forget costs as the store grows, on a real server
 * (hash embedder), over REST.
 *
 * Sizes mode (default): for each store size, a fresh server is loaded with N memories
 * (POST /v1/import), then gets run alone at a fixed rate (the baseline), then forgets of one
 * random memory each run at a fixed rate with the same gets beside them. Both loops are open
 * (requests leave on a timer, whatever the answers do), so a shard held by a forget or by the
 * erasure snapshot it asks for shows up as get latency. Prints forget p50/p99 and the gets' p99
 * with and without forgets.
 *
 * Soak mode (`--soak`, lib/forget-soak): a mixed load at a fixed rate (by default 30% remember,
 * 25% recall, 15% get, 10% list, 15% edges, 5% forget; `--mix op=weight,...`) on a store that
 * grows from `--preload`, with p50/p99 per operation, RSS and the snapshots taken (when each
 * ended, how long it took, the latency of what ran beside it) for every `--interval-s`, and the
 * ratio of the last interval's p99 to the first's for every operation.
 *
 *   npm run build && node --import tsx native-bench/forget-cost.ts [--sizes 1000,10000,100000]
 *     [--forgets 200] [--forget-rate 10] [--get-rate 100] [--baseline-s 5] [--tail-s 3]
 *   npm run build && node --import tsx native-bench/forget-cost.ts --soak [--duration-s 300]
 *     [--rate 100] [--interval-s 60] [--preload 2000] [--mix remember=0.3,recall=0.25,...]
 *   common: [--cli PATH] [--server-env FLASHBULB_X=value ...] [--json FILE] [--no-reflect]
 *     [--cpu-prof-dir DIR] (the server runs under --cpu-prof; read with profile-summary.ts)
 *     [--server-log] (the server's stderr echoed)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { envFlag, listFlag, numberFlag, stringFlag } from './lib/args.ts';
import { cpuSeconds } from './lib/proc.ts';
import { freePort, startServer } from './lib/server-process.ts';
import { summarize, type Summary } from './lib/stats.ts';
import { Client, load } from './lib/forget-load.ts';
import { parseMix, soak } from './lib/forget-soak.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    forgets: { type: 'string' },
    'forget-rate': { type: 'string' },
    'get-rate': { type: 'string' },
    'baseline-s': { type: 'string' },
    'tail-s': { type: 'string' },
    soak: { type: 'boolean', default: false },
    'duration-s': { type: 'string' },
    rate: { type: 'string' },
    'interval-s': { type: 'string' },
    preload: { type: 'string' },
    mix: { type: 'string' },
    cli: { type: 'string' },
    'server-env': { type: 'string', multiple: true, default: [] },
    json: { type: 'string' },
    'cpu-prof-dir': { type: 'string' },
    'no-reflect': { type: 'boolean', default: false },
    'server-log': { type: 'boolean', default: false },
  },
});

async function withServer<T>(work: (c: Client) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-forget-cost-'));
  const env = { FLASHBULB_DURABILITY: 'os', ...envFlag(values, 'server-env') };
  const cli = stringFlag(values, 'cli');
  const profDir = stringFlag(values, 'cpu-prof-dir');
  const nodeArgs = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const server = await startServer({
    dataDir,
    port: await freePort(),
    env,
    nodeArgs,
    verbose: values['server-log'] === true,
    ...(cli ? { cli } : {}),
  });
  try {
    return await work(new Client(server));
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Runs `op` every 1/rate s for `seconds` without waiting for answers; resolves with the latencies once all are back. */
async function openLoop(
  rate: number,
  seconds: number,
  op: () => Promise<unknown>,
): Promise<{ ms: number[]; errors: number; slowest: { at: number; ms: number } }> {
  const ms: number[] = [];
  const slowest = { at: -1, ms: 0 };
  let errors = 0;
  const inflight: Array<Promise<void>> = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    const at = i;
    inflight.push(
      op().then(
        () => {
          const took = performance.now() - t0;
          ms.push(took);
          if (took > slowest.ms) Object.assign(slowest, { at, ms: took });
        },
        (err: unknown) => {
          errors += 1;
          // fetch's own message ('fetch failed') hides why: the cause says (a reset, a refusal).
          const cause = err instanceof Error && err.cause ? ` (${String(err.cause)})` : '';
          if (errors <= 3) console.error(`${String(err)}${cause}`);
        },
      ),
    );
  }
  await Promise.all(inflight);
  return { ms, errors, slowest };
}

/**
 * Reflects once, as the server's scheduler would after a load: insights quote their sources, so
 * forgetting a source rewrites them. `--no-reflect` skips it.
 */
async function reflect(c: Client): Promise<void> {
  if (values['no-reflect']) return;
  const t0 = performance.now();
  const r = (await c.call('POST', '/v1/reflect', {})) as Record<string, unknown>;
  const insights = (await c.call('GET', '/v1/insights')) as Array<{
    source_memory_ids?: string[] | null;
  }>;
  const sizes = insights.map((i) => i.source_memory_ids?.length ?? 0);
  console.error(
    `  reflected in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(r).slice(0, 120)}; ${sizes.length} insights, largest ${Math.max(0, ...sizes)} sources`,
  );
}

/** Waits until the server's background work (indexing, contradiction checks) is done. */
async function settle(c: Client): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    const text = String(await c.call('GET', '/v1/metrics'));
    let waiting = 0;
    for (const m of text.matchAll(/^flashbulb_background_backlog\{[^}]*\} ([0-9.e+-]+)$/gm))
      waiting += Number(m[1]);
    if (waiting === 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 2000));
}

interface SizeRow {
  memories: number;
  getAlone: Summary;
  forget: Summary;
  getBeside: Summary;
  /** Server CPU per forget: the forget phase's server CPU less the gets' (at the get-alone phase's rate), over the forgets. */
  cpuMsPerForget: number;
}

async function sizeRun(n: number): Promise<SizeRow> {
  const forgets = numberFlag(values, 'forgets', 200);
  const forgetRate = numberFlag(values, 'forget-rate', 10);
  const getRate = numberFlag(values, 'get-rate', 100);
  const baselineS = numberFlag(values, 'baseline-s', 5);
  return withServer(async (c) => {
    const t0 = performance.now();
    const ids = await load(c, n);
    console.error(
      `  loaded ${ids.length} memories in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    await reflect(c);
    await settle(c);
    const doomed = new Set<string>();
    const pick = (): string => ids[Math.floor(Math.random() * ids.length)] as string;
    const get = (): Promise<unknown> => {
      let id = pick();
      while (doomed.has(id)) id = pick();
      return c.call('GET', `/v1/memories/${id}`);
    };
    let cpu = cpuSeconds(c.pid);
    const alone = await openLoop(getRate, baselineS, get);
    const getCpuPerS = (cpuSeconds(c.pid) - cpu) / baselineS;
    const seconds = forgets / forgetRate;
    cpu = cpuSeconds(c.pid);
    const forgetOne = (): Promise<unknown> => {
      let id = pick();
      while (doomed.has(id)) id = pick();
      doomed.add(id);
      return c.call('POST', '/v1/forget', { memory_ids: [id] });
    };
    const [f, g] = await Promise.all([
      openLoop(forgetRate, seconds, forgetOne),
      openLoop(getRate, seconds, get),
    ]);
    // The erasure the last forgets asked for is part of their cost: wait for it (with the default
    // FLASHBULB_ERASE_WITHIN_S of 60 it starts up to 15 s after a forget; pass a shorter window).
    await new Promise((r) => setTimeout(r, numberFlag(values, 'tail-s', 3) * 1000));
    const forgetCpu = cpuSeconds(c.pid) - cpu - getCpuPerS * seconds;
    console.error(
      `  slowest forget: #${f.slowest.at + 1} of ${forgets}, ${f.slowest.ms.toFixed(1)} ms`,
    );
    return {
      cpuMsPerForget: (forgetCpu * 1000) / forgets,
      memories: n,
      getAlone: summarize(alone.ms, alone.errors, baselineS),
      forget: summarize(f.ms, f.errors, seconds),
      getBeside: summarize(g.ms, g.errors, seconds),
    };
  });
}

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : '–');

async function sizesMode(): Promise<unknown> {
  const sizes = listFlag(values, 'sizes', ['1000', '10000', '100000']).map(Number);
  const rows: SizeRow[] = [];
  console.log(
    '| memories | forget p50 ms | forget p99 ms | forget max ms | get p99 beside forgets ms | get max beside ms | get p99 alone ms | server CPU ms per forget | errors |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const n of sizes) {
    const r = await sizeRun(n);
    rows.push(r);
    const errors = r.forget.errors + r.getBeside.errors + r.getAlone.errors;
    console.log(
      `| ${n} | ${ms(r.forget.p50Ms)} | ${ms(r.forget.p99Ms)} | ${ms(r.forget.maxMs)} | ${ms(r.getBeside.p99Ms)} | ${ms(r.getBeside.maxMs)} | ${ms(r.getAlone.p99Ms)} | ${ms(r.cpuMsPerForget)} | ${errors} |`,
    );
  }
  return rows;
}

async function soakMode(): Promise<unknown> {
  const preload = numberFlag(values, 'preload', 2000);
  return withServer(async (c) => {
    const ids = await load(c, preload);
    await reflect(c);
    await settle(c);
    const o = {
      durationS: numberFlag(values, 'duration-s', 300),
      rate: numberFlag(values, 'rate', 100),
      intervalS: numberFlag(values, 'interval-s', 60),
      mix: parseMix(stringFlag(values, 'mix')),
    };
    return soak(c, ids, o, openLoop);
  });
}

const result = values.soak ? await soakMode() : await sizesMode();
const jsonFile = stringFlag(values, 'json');
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(result, null, 2));
