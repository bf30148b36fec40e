/**
 * @module native-bench/suite/main — the benchmark suite: starts a real Flashbulb server as a
 * child process on a temporary data directory, loads a seeded synthetic dataset over REST, then
 * measures every operation over REST and gRPC from this process — latency at 1 client and
 * throughput at N closed-loop clients — and the resources the data costs (RSS and bytes per
 * memory, restart time). Prints tables; writes JSON with --json.
 *
 *   npm run build && node --import tsx native-bench/suite/main.ts --tier quick|standard|full
 *     [--json FILE] [--protocol rest|grpc|both] [--concurrency 32] [--embedder model|hash]
 *     [--ops remember,get,...] [--memories N] [--duration-s S] [--load-concurrency 32] [--seed 42]
 *     [--cpu-prof-dir DIR] [--skip-restart]
 *     [--quiet-wait-s S] [--busy-retries 1] [--cli dist/cli.js] [--verbose]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../lib/prng.ts';
import { rssBytes } from '../lib/proc.ts';
import type { RunningServer } from '../lib/server-process.ts';
import { Dataset } from './ops/dataset.ts';
import { loadInHalves } from './load.ts';
import { parseOptions, type SuiteOptions } from './options.ts';
import { measurePhase, type PhaseContext, type PhaseResult } from './phases.ts';
import {
  goals,
  machine,
  operations,
  printReport,
  writeReport,
  type SuiteReport,
} from './report.ts';
import { measureRestart } from './resources.ts';
import { serverConfig, startSuiteServer, type SuiteServerConfig } from './server.ts';

async function runPhases(ctx: PhaseContext, opts: SuiteOptions): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  const clientCounts = opts.concurrency === 1 ? [1] : [1, opts.concurrency];
  for (const op of opts.ops) {
    for (const protocol of opts.protocols) {
      for (const clients of clientCounts) {
        const r = await measurePhase(ctx, { op, protocol, clients });
        const err = r.errors > 0 ? `, ${r.errors} errors (first: ${r.firstError ?? '?'})` : '';
        console.error(
          `  ${protocol} ${op} x${r.clients}: p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, ${r.opsPerS.toFixed(0)}/s${err}`,
        );
        results.push(r);
      }
    }
  }
  return results;
}

async function measure(
  server: RunningServer,
  cfg: SuiteServerConfig,
  opts: SuiteOptions,
): Promise<SuiteReport> {
  const rssEmpty = rssBytes(server.pid);
  const ds = new Dataset(new Rng(opts.seed));
  const endpoint = {
    rest: { port: cfg.httpPort, apiKey: server.apiKey },
    grpc: { port: cfg.grpcPort, apiKey: server.apiKey },
  };
  const { load, footprint } = await loadInHalves(server, {
    dataDir: cfg.dataDir,
    ds,
    count: opts.spec.memories,
    concurrency: opts.loadConcurrency,
    rssEmpty,
  });
  const ctx: PhaseContext = {
    endpoint,
    serverPid: server.pid,
    ds,
    spec: opts.spec,
    busyRetries: opts.busyRetries,
    memories: load.memories,
  };
  const phases = await runPhases(ctx, opts);
  const restart = opts.skipRestart ? null : await measureRestart(server, cfg, rssEmpty);
  const base = {
    embedder: opts.embedder,
    memories: load.memories,
    concurrency: opts.concurrency,
    machine: machine(),
    tier: opts.tier,
    operations: operations(phases),
    resources: { load, footprint, restart },
    phases,
  };
  return { ...base, goals: goals(base) };
}

/**
 * Ctrl-C or SIGTERM: kill the server and remove its data directory before exiting. SIGKILL, not
 * SIGTERM: the phase's clients are still sending, and a draining server would keep serving them.
 */
function stopOnSignal(server: RunningServer, dataDir: string): void {
  const onSignal = (signal: NodeJS.Signals): void => {
    console.error(`${signal}: killing the server`);
    void server.kill().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'flashbulb-suite-'));
  const cfg = await serverConfig(opts, dataDir);
  const server = await startSuiteServer(cfg);
  console.error(
    `server pid ${server.pid}: REST :${cfg.httpPort}, gRPC :${cfg.grpcPort}, embedder ${opts.embedder}, ready in ${server.readyMs.toFixed(0)} ms`,
  );
  stopOnSignal(server, dataDir);
  try {
    const report = await measure(server, cfg, opts);
    printReport(report);
    if (opts.json !== undefined) writeReport(opts.json, report);
  } finally {
    // SIGTERM (so --cpu-prof profiles are written); after a restart measurement it is a no-op.
    await server.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
